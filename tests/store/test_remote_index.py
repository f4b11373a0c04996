"""End to end: a project indexed into a real Oxigraph server gives what the embedded store gives, a
re-index is incremental, and two projects in one server stay apart (the issue's done-means)."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from acms import Index
from acms.cli.main import cli
from acms.vocab import GRAPH_META, GRAPH_ONTOLOGY, TIER_COLD, TIER_HOT, TIER_WARM

GRAPHS = (TIER_HOT, TIER_WARM, TIER_COLD, GRAPH_META, GRAPH_ONTOLOGY)
NEW_FUNCTION = "\n\ndef tally_widgets(count: int) -> int:\n    \"\"\"Count the widgets twice.\"\"\"\n    return count * 2\n"


def _counts(idx: Index) -> dict[str, int]:
    return {g.value: idx.store.count(g) for g in GRAPHS}


def _top(idx: Index, text: str) -> list[tuple[str, str, int]]:
    return [(h.path, h.name, h.start_line) for h in idx.search(text, k=5).hits]


def _assembled(idx: Index, task: str, **request: object) -> list[tuple[str, int, int, str]]:
    result = idx.assemble(task, budget=600, **request)
    return [(i.candidate.path, i.candidate.start_line, i.candidate.end_line, i.candidate.lod)
            for i in result.assembled.items]


TRACE = 'Traceback (most recent call last):\n  File "app/pkg/mod.py", line 22, in parse_header\nValueError: bad'



def test_remote_index_matches_embedded_and_is_incremental(oxigraph_server: str, sample_project: Path,
                                                          project_name: str) -> None:
    with Index.open(sample_project, project_name=project_name) as local, \
            Index.open(sample_project, store=oxigraph_server, project_name=project_name) as remote:
        local.index()
        report = remote.index()
        assert report.files_indexed == 6 and remote.layout.root.is_relative_to(sample_project / ".acms" / "remote")
        assert _counts(remote) == _counts(local) and remote.store.count() == local.store.count() > 500
        for task in ("parse header", "normalize a string", "how to install"):
            assert _top(remote, task) == _top(local, task) and _top(local, task)
            assert _assembled(remote, task) == _assembled(local, task)
        assert _assembled(local, "parse header")
        # the default pipeline's walk (its queries take every input as VALUES) answers alike on the server
        focused = _assembled(local, "parse header", focus=["pkg/mod.py::Parser.parse_header"])
        assert focused == _assembled(remote, "parse header", focus=["pkg/mod.py::Parser.parse_header"])
        assert any(lod == "macro" for *_, lod in focused) and _assembled(remote, TRACE) == _assembled(local, TRACE)

        with (sample_project / "pkg" / "util.py").open("a") as f:
            f.write(NEW_FUNCTION)
        again_local, again = local.index(), remote.index()
        assert (again.files_indexed, again.files_unchanged) == (1, 5) == (again_local.files_indexed, again_local.files_unchanged)
        assert _counts(remote) == _counts(local)
        assert _top(remote, "tally widgets")[0][1] == "pkg.util.tally_widgets" == _top(local, "tally widgets")[0][1]
        assert remote.index().up_to_date

        # a read follows an edit in a remote store as in the embedded one: refreshed first, then answered
        util = sample_project / "pkg" / "util.py"
        util.write_text(util.read_text().replace("tally_widgets", "count_gizmos"))
        assert remote.look().changed == ["pkg/util.py"]
        assert _top(remote, "count gizmos")[0][1] == "pkg.util.count_gizmos" and remote.stale == ()
        assert not remote.look().stale

        # a rename relinks its unchanged caller (pkg/mod.py) alike: the stale link goes, by SPARQL on the server
        local.index()  # the edit the remote read refreshed
        util.write_text(util.read_text().replace("def normalize(", "def normalise("))
        relinked_local, relinked = local.index(), remote.index()
        assert "pkg/mod.py" in relinked.changed_paths and relinked.files_relinked == relinked_local.files_relinked == 1
        assert _counts(remote) == _counts(local)

        # a decision recorded in each is searchable at once and shown beside the code it is about, alike
        for idx in (local, remote):
            idx.plans.create("parsing")
            idx.plans.record("Header lines are split at the first colon.", plan="parsing", about=["pkg/mod.py::Parser"])
        found = _top(remote, "header lines split at the first colon")
        assert found[0][:2] == ("decisions/D-1", "D-1") and found == _top(local, "header lines split at the first colon")
        shown = _assembled(remote, "parse header")
        assert ("decisions/D-1", 1) in [(path, start) for path, start, *_ in shown] and shown == _assembled(local, "parse header")


def test_two_projects_in_one_remote_store_stay_apart(oxigraph_server: str, sample_project: Path,
                                                     project_name: str, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(sample_project, other)
    (other / "pkg" / "gadgets.py").write_text('def polish_gadget():\n    """Only the other project has it."""\n')
    with Index.open(sample_project, store=oxigraph_server, project_name=project_name) as one, \
            Index.open(other, store=oxigraph_server, project_name=project_name + "-other") as two:
        one.index()
        two.index()
        before = two.store.count()
        with (sample_project / "pkg" / "util.py").open("a") as f:
            f.write(NEW_FUNCTION)
        assert one.index().files_indexed == 1
        assert two.store.count() == before  # re-indexing one left the other's triples alone
        assert [h.path for h in two.search("polish gadget", k=3).hits][:1] == ["pkg/gadgets.py"]
        assert all(h.path != "pkg/gadgets.py" for h in one.search("polish gadget", k=10).hits)
        assert all(h.name != "pkg.util.tally_widgets" for h in two.search("tally widgets", k=10).hits)
        # across projects, on purpose: the saved queries that see every project in the store
        projects = {r["project"]: r for r in one.run_saved("projects").rows}
        mine, theirs = f"https://w3id.org/acms/id/{project_name}/", f"https://w3id.org/acms/id/{project_name}-other/"
        assert projects[mine]["files"] == "6" and projects[theirs]["files"] == "7"
        found = one.run_saved("search-all-projects", {"text": "polish_gadget"}).rows
        assert [(r["project"], r["path"]) for r in found] == [(theirs, "pkg/gadgets.py")]


def test_the_cli_indexes_into_a_remote_store(oxigraph_server: str, sample_project: Path, project_name: str) -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["--set", f"project_name={project_name}", "index", str(sample_project),
                              "--store", oxigraph_server], catch_exceptions=False)
    assert out.exit_code == 0 and "indexed 6 files" in out.stdout
    out = runner.invoke(cli, ["--set", f"project_name={project_name}", "search", "-C", str(sample_project),
                              "--store", oxigraph_server, "parse header", "-k", "1"], catch_exceptions=False)
    assert out.exit_code == 0 and "parse_header" in out.stdout
    out = runner.invoke(cli, ["--set", "store_retries=0", "search", "-C", str(sample_project),
                              "--store", "http://127.0.0.1:9", "x"])
    assert out.exit_code == 4 and "cannot reach the SPARQL store" in out.stderr and "Traceback" not in out.stderr


def test_a_remote_index_migrates_like_the_embedded_one(oxigraph_server: str, sample_project: Path,
                                                       project_name: str) -> None:
    """A migration (every file redone) on a remote store deletes the old triples group by group
    (there is no checkpoint to start over from) and lands where the embedded store does."""
    from pyoxigraph import Literal

    from acms.ontology.versioning import stored_versions, uko_version
    from acms.sparql import catalog

    with Index.open(sample_project, project_name=project_name) as local, \
            Index.open(sample_project, store=oxigraph_server, project_name=project_name) as remote:
        local.index()
        remote.index()
        for idx in (local, remote):
            idx.store.update(catalog.text("ontology/mark-built-with.ru"), {"version": Literal("1.0.0")})
            assert stored_versions(idx.store) == ("1.0.0", "1.0.0")
        again_local, again = local.index(), remote.index()
        assert again.ontology == again_local.ontology and again.ontology
        assert again.files_indexed == again_local.files_indexed == 6 and again.versions_archived == 0
        assert "deleting" in again.timings  # streamed (indexing.reindex), not one batch
        assert stored_versions(remote.store) == (uko_version(), uko_version())
        assert _counts(remote) == _counts(local)
        assert _top(remote, "parse header") == _top(local, "parse header") and _top(local, "parse header")
        assert remote.index().up_to_date


def test_a_remote_index_whose_local_model_is_gone_is_not_fitted_again(oxigraph_server: str, sample_project: Path,
                                                                     project_name: str) -> None:
    """The model lives with the root that fitted it: another root (here, one whose cache was removed)
    indexing the shared store must not drop the vectors that model made (that root would refit in turn)."""
    with Index.open(sample_project, store=oxigraph_server, project_name=project_name) as remote:
        model = remote.index().embedding_model
        assert model
        shutil.rmtree(remote.layout.cache)
        again = remote.index()
        assert again.up_to_date and again.embedded == 0
        assert remote.embeddings.status().model == model
