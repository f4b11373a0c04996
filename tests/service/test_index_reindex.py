"""A migration (every file redone) streams like a first index (issue 14) and keeps what is not the files'.

The migrated graph must be the graph a fresh index of the same files writes under the new ontology
(bar times and run IRIs); history, plans, recorded decisions, the cold tier's versions and the meta
graph's records survive; only files whose content changed are archived; a run that fails midway
(every file rejected by the new shapes, or ``kill -9`` between two groups) leaves the old index.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from pyoxigraph import Literal

from acms.api import Index
from acms.cli.main import cli
from acms.config import Settings, load_settings
from acms.errors import ValidationFailed
from acms.index.vectors import VectorMatrix
from acms.ingest import emit
from acms.ontology.versioning import stored_versions, uko_version
from acms.retrieval import embedding_ahead, embedding_store
from acms.retrieval.caches import DerivedCaches
from acms.service.indexing import stream as index_stream
from acms.service.indexing import IndexReport, index_project
from acms.sparql import catalog
from acms.store.oxigraph import OxigraphStore
from acms.vocab import GRAPH_META, TIER_COLD, UKO

from ..temporal.gitrepo import build, commit
from .test_index_stream import _graph, _project

OLD = "1.0.0"

KILLER = """
import os, signal, sys
from acms.api import Index
from acms.service.indexing import stream as index_stream
index_stream.GROUP_FILES = 2

class KillAt:
    def start(self, phase, total=None): pass
    def update(self, done, total=None):
        if done >= 6:  # three groups re-indexed, the old index half cleared
            os.kill(os.getpid(), signal.SIGKILL)
    def finish(self, phase): pass

with Index.open(sys.argv[1], wait=10, embed_on_index=False) as idx:
    idx.index(progress=KillAt())
print("finished")
"""


def _index(root: Path, settings: Settings | None = None, history: int = 0) -> IndexReport:
    store = OxigraphStore(root / ".acms" / "graph")
    try:
        return index_project(root, store, settings or load_settings(root), history=history)
    finally:
        store.close()


def _mark_old(root: Path) -> None:
    """The index as an acms with an older UKO left it: the next run migrates."""
    store = OxigraphStore(root / ".acms" / "graph")
    try:
        store.update(catalog.text("ontology/mark-built-with.ru"), {"version": Literal(OLD)})
        assert stored_versions(store) == (OLD, OLD)
    finally:
        store.close()


def _quads(root: Path, graph) -> set[str]:  # type: ignore[no-untyped-def]
    store = OxigraphStore(root / ".acms" / "graph", read_only=True)
    try:
        return {str(q) for q in store.quads(graph)}
    finally:
        store.close()


def _ask(root: Path, query: str) -> bool:
    store = OxigraphStore(root / ".acms" / "graph", read_only=True)
    try:
        return store.ask(query)
    finally:
        store.close()


def _mode(mode: str, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``start over`` (the embedded store's way: counts its calls) or ``delete`` (any other store's)."""
    calls: list[int] = []
    if mode == "delete":
        monkeypatch.setattr(OxigraphStore, "can_start_over", lambda self: False)
    else:
        real = OxigraphStore.start_over
        monkeypatch.setattr(OxigraphStore, "start_over", lambda self: (calls.append(1), real(self))[1])
    return calls


@pytest.mark.parametrize("mode", ["start over", "delete"])
def test_a_migration_streams_and_writes_the_fresh_index_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              mode: str) -> None:
    migrated = _project(tmp_path / "a")
    monkeypatch.setattr(index_stream, "GROUP_FILES", 2)  # many groups, each one cleared before it is loaded
    groups: list[int] = []  # the files of each group written, as emitted here or in the workers
    beside: list[int] = []  # of those, the groups emitted where they were read (a worker)
    real, emitted = index_stream._write_group, index_stream._write_emitted
    monkeypatch.setattr(index_stream, "_write_group", lambda run, sources, *a: (groups.append(len(sources)),
                                                                                real(run, sources, *a)))
    monkeypatch.setattr(index_stream, "_write_emitted", lambda run, got, *a: (
        groups.append(len(got.sources)), beside.append(len(got.sources)), emitted(run, got, *a)))
    first = _index(migrated, Settings())
    # between the two runs: one file changed, one removed, one added
    gen0 = migrated / "pkg" / "gen0.py"
    gen0.write_text(gen0.read_text(encoding="utf-8").replace("return 0", "return 100"), encoding="utf-8")
    (migrated / "pkg" / "gen1.py").unlink()
    (migrated / "pkg" / "gen9.py").write_text("def nine():\n    return 9\n", encoding="utf-8")
    fresh = tmp_path / "b" / "proj"
    shutil.copytree(migrated, fresh, ignore=shutil.ignore_patterns(".acms"))
    _mark_old(migrated)
    cold_before = _quads(migrated, TIER_COLD)
    groups.clear()
    beside.clear()

    started_over = _mode(mode, monkeypatch)
    report = _index(migrated, Settings())
    assert len(started_over) == (mode == "start over")
    assert report.ontology == [f"UKO {OLD} → {uko_version()} (ontology graph): ontology graph reloaded, "
                               "every file re-indexed"]
    assert len(groups) > 4 and max(groups[:-1]) <= 2  # streamed, not one batch
    # started over, the store holds none of the old files' triples: the files are emitted and validated
    # where they are read, as a first index's; deleting as it goes, here against the store
    assert (len(beside) >= len(groups) - 1) if mode == "start over" else not beside
    assert not report.first_run and report.files_unchanged == 0 and report.files_removed == 1
    assert report.files_indexed == first.files_indexed  # one file gone, one new
    again = _index(fresh, Settings())

    def current(root: Path) -> set[str]:  # hot or warm is the tier policy's call (gen0 changed: hot)
        return {q.replace("/tier/hot>", "/tier/warm>") for q in _graph(root) if "/tier/cold>" not in q}

    assert current(migrated) == current(fresh)
    for field in ("files_indexed", "entities", "fragments", "triples_written", "parse_errors", "quarantined"):
        assert getattr(report, field) == getattr(again, field), field
    # the cold tier: what was there, plus versions of what changed (gen0's helper0) and what went (gen1)
    cold = _quads(migrated, TIER_COLD)
    assert cold_before <= cold
    versioned = {q.split()[0] for q in cold - cold_before if "#specializationOf>" in q}
    assert {v.split("/code/")[-1].split("/v/")[0] for v in versioned if "/code/pkg/gen0.py" in v} == {
        "pkg/gen0.py#pkg.gen0.helper0"}  # the one entity that changed; Gen0, the module: unchanged
    assert any("/file/pkg/gen1.py/v/" in v for v in versioned)  # the removed file and its entities
    assert all("/pkg/gen0.py" in v or "/pkg/gen1.py" in v for v in versioned)  # nothing else changed
    assert report.versions_archived == len(versioned)
    store = OxigraphStore(migrated / ".acms" / "graph", read_only=True)
    try:
        assert stored_versions(store) == (uko_version(), uko_version())
    finally:
        store.close()
    assert _index(migrated, Settings()).up_to_date


@pytest.mark.parametrize("mode", ["start over", "delete"])
def test_a_migration_keeps_history_plans_decisions_and_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            mode: str) -> None:
    root = tmp_path / "repo"
    build(root)
    (root / "pkg" / "extra.py").write_text("def extra():\n    return 1\n", encoding="utf-8")
    commit(root, "Add extra", "Ada", "2025-01-06T10:00:00+00:00")
    _index(root, history=10)
    runner = CliRunner()
    for args in (["plan", "create", "Q1", "-C", str(root)],
                 ["decision", "record", "Keep extra small.", "--plan", "Q1", "--about", "pkg/extra.py::pkg.extra.extra",
                  "-C", str(root)]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, result.output
    _mark_old(root)
    cold, meta = _quads(root, TIER_COLD), _quads(root, GRAPH_META)
    assert any("Change>" in q for q in cold)  # the history is there to keep

    started_over = _mode(mode, monkeypatch)
    report = _index(root)
    assert len(started_over) == (mode == "start over")
    assert report.ontology and report.versions_archived == 0  # no content changed: nothing archived
    assert _quads(root, TIER_COLD) == cold  # history and earlier versions untouched
    after = _quads(root, GRAPH_META)
    runs_before = {q for q in meta if "#ukoVersion>" not in q}  # the old runs' versions were marked old
    assert runs_before <= after and len({q.split()[0] for q in after - meta if "/run/" in q}) == 1
    assert _ask(root, 'ASK { GRAPH ?g { ?p a uko:Plan ; uko:name "Q1" } }')
    assert _ask(root, 'ASK { GRAPH ?g { ?d a uko:Decision ; uko:about ?e } GRAPH ?h { ?e uko:name "extra" ; a uko:Function } }')
    assert _ask(root, "ASK { GRAPH ?g { ?c a uko:Change } }")


def test_every_file_rejected_by_the_new_shapes_rolls_back(tmp_path: Path) -> None:
    root = _project(tmp_path)
    ext = root / "strict"
    ext.mkdir()
    (ext / "ontology.ttl").write_text(
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n@prefix vann: <http://purl.org/vocab/vann/> .\n"
        "<https://example.org/strict> a owl:Ontology ; owl:versionInfo \"1.0.0\" ;\n"
        "  vann:preferredNamespacePrefix \"strict\" ; vann:preferredNamespaceUri \"https://example.org/strict#\" .\n"
        "<https://example.org/strict#owner> a owl:DatatypeProperty .\n", encoding="utf-8")
    (ext / "shapes.ttl").write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> .\n@prefix uko: <https://w3id.org/acms/uko#> .\n"
        "<https://example.org/strict/shapes#FileShape> a sh:NodeShape ; sh:targetClass uko:File ;\n"
        "  sh:property [ sh:path <https://example.org/strict#owner> ; sh:minCount 1 ;\n"
        "    sh:message \"a file needs an owner\" ] .\n", encoding="utf-8")
    first = _index(root)
    before = _graph(root)
    (root / "acms.toml").write_text('extensions = ["strict"]\n', encoding="utf-8")
    with pytest.raises(ValidationFailed, match="every file read .* fails the shapes .* rolled back"):
        _index(root)
    assert not (root / ".acms" / "run-pending").exists()
    assert _graph(root) == before  # the old index, whole
    (root / "acms.toml").unlink()
    assert _index(root).up_to_date and first.files_indexed > 10


def test_kill_9_midway_leaves_the_old_index_and_the_next_run_migrates(tmp_path: Path) -> None:
    root = _project(tmp_path)
    first = _index(root, Settings(embed_on_index=False))
    _mark_old(root)
    before = _graph(root)
    proc = subprocess.run([sys.executable, "-c", KILLER, str(root)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, (proc.stdout, proc.stderr)
    assert (root / ".acms" / "run-pending").exists()
    assert _graph(root) == before  # a reader opens the checkpoint: the old index, whole
    report = _index(root, Settings(embed_on_index=False))  # rolls back, then migrates
    assert report.ontology and report.files_indexed == first.files_indexed
    assert not (root / ".acms" / "run-pending").exists()
    store = OxigraphStore(root / ".acms" / "graph", read_only=True)
    try:
        assert stored_versions(store) == (uko_version(), uko_version())
        files = store.select("SELECT (COUNT(?f) AS ?n) WHERE { GRAPH ?g { ?f a uko:File } }")
        assert int(files[0]["n"].value) == first.files_indexed
    finally:
        store.close()


@pytest.mark.parametrize("ahead", [False, True], ids=["here", "ahead"])
def test_a_migration_embeds_every_fragment_again_with_the_kept_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     ahead: bool) -> None:
    """Folded here after the caches, or (from ``AHEAD_FROM`` fragments) in a worker while they are built:
    the same vectors, with the model the index kept, nothing fitted."""
    root = _project(tmp_path)
    monkeypatch.setattr(embedding_store, "STREAM_BATCH", 7)
    with Index.open(root, embedding_dims=4) as idx:
        first = idx.index()
        before = {(str(q.subject), str(q.object)) for q in idx.store.quads(None, UKO.vector)}
    _mark_old(root)
    read_back: list[int] = []
    texts = embedding_store.searchable_texts
    monkeypatch.setattr(embedding_store, "searchable_texts", lambda store: (read_back.append(1), texts(store))[1])
    monkeypatch.setattr(embedding_ahead, "AHEAD_FROM", 0 if ahead else 10**9)
    started: list[embedding_ahead.EmbeddingAhead] = []
    real = embedding_ahead.EmbeddingAhead.__init__
    monkeypatch.setattr(embedding_ahead.EmbeddingAhead, "__init__",
                        lambda self, *a, **k: (started.append(self), real(self, *a, **k))[1])
    with Index.open(root, embedding_dims=4) as idx:
        report = idx.index()
        assert report.ontology and "fitting" not in report.timings  # the model is kept, not fitted again
        assert report.embedded == first.embedded > 5
        assert read_back == []  # the texts came from the re-index's spill, not from the store
        assert [s.kept is not None for s in started] == ([True] if ahead and (os.cpu_count() or 1) >= 2 else [])
        assert {(str(q.subject), str(q.object)) for q in idx.store.quads(None, UKO.vector)} == before
        written = VectorMatrix.load(idx.layout.cache_dir("vectors"))  # streamed beside the vectors
        assert written is not None and len(written.ids) == report.embedded
        caches = DerivedCaches(idx.store, idx.layout)
        assert written.key == caches.state_key
        caches.vectors(written.model_id)
        assert caches.rebuilt == []  # the caches phase found it current


def test_a_file_the_new_shapes_reject_is_archived_and_left_out(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path)
    first = _index(root, Settings())
    _mark_old(root)
    real = emit.emit_file

    def drop_hash(*args, **kwargs):  # type: ignore[no-untyped-def]  # util.py's File node lacks its hash
        batch = real(*args, **kwargs)
        if batch.path == "pkg/util.py":
            batch.quads = [q for q in batch.quads if q.predicate != UKO.contentHash]
        return batch

    monkeypatch.setattr(emit, "emit_file", drop_hash)
    report = _index(root, Settings())
    assert list(report.quarantined) == ["pkg/util.py"] and report.files_indexed == first.files_indexed - 1
    versioned = {q.split()[0] for q in _quads(root, TIER_COLD) if "#specializationOf>" in q}
    assert any("/file/pkg/util.py/v/" in v for v in versioned)  # gone from the index: archived
    assert all("/pkg/util.py" in v for v in versioned)  # the files written again: not archived
    assert not [q for q in _graph(root) if "/tier/cold>" not in q and "/pkg/util.py" in q.split()[0]]


@pytest.mark.parametrize("mode", ["start over", "delete"])
def test_a_migration_s_caches_answer_as_a_fresh_index_s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        mode: str) -> None:
    """A re-index that started over spills its corpus rows, as a first index does, and its caches are built
    from them; what the spill lacks (a recorded decision's fragment, which no file holds, kept from the
    old index) is read from the store beside them. Either way the caches answer as a fresh index's."""
    queries = [(q, m) for q in ("helper return value", "frobnicated helpers", "Gen3 run") for m in ("keyword", "vector")]

    def indexed(root: Path) -> None:
        with Index.open(root, record_use=False) as idx:
            idx.index()
        for args in (["plan", "create", "Q1"], ["decision", "record", "Prefer frobnicated helpers.", "--plan", "Q1"]):
            result = CliRunner().invoke(cli, [*args, "-C", str(root)])
            assert result.exit_code == 0, result.output

    def answers(root: Path) -> list[list[tuple[str, str, int, int]]]:
        with Index.open(root, record_use=False) as idx:
            idx.index()
            return [[(h.name, h.path, h.start_line, h.end_line) for h in idx.search(q, m, 6).hits] for q, m in queries]

    migrated = _project(tmp_path / "a")
    fresh = tmp_path / "b" / "proj"
    shutil.copytree(migrated, fresh)
    indexed(migrated)
    indexed(fresh)
    _mark_old(migrated)
    spills: list[object] = []
    real = index_stream.SpillWriter
    monkeypatch.setattr(index_stream, "SpillWriter", lambda path: (spills.append(path), real(path))[1])
    _mode(mode, monkeypatch)
    got = answers(migrated)
    assert len(spills) == (mode == "start over")
    assert got == answers(fresh) and all(got)
