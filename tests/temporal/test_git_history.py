"""acms index --history on a repository the test builds: Change nodes, touched symbols, cold versions."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from pyoxigraph import NamedNode

from acms.cli.main import cli
from acms.config import Settings
from acms.service.indexing import index_project
from acms.store.oxigraph import OxigraphStore
from acms.temporal import tiers
from acms.vocab import TIER_COLD, IriMinter

from .gitrepo import build, commit, git

M = IriMinter("repo")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("git") / "repo"
    hashes = build(root)
    code, out, err = run("index", str(root), "--history", "10", "--json")
    assert code == 0, err
    return root, hashes


@pytest.fixture
def store(repo: tuple[Path, list[str]]) -> Iterator[OxigraphStore]:
    s = OxigraphStore.open_existing(repo[0] / ".acms" / "graph")
    yield s
    s.close()


def _cold(store: OxigraphStore, query: str) -> list[dict[str, str]]:
    rows = store.select("SELECT * WHERE { GRAPH <%s> { %s } }" % (TIER_COLD.value, query))
    return [{k: v.value for k, v in r.items()} for r in rows]


def test_every_commit_is_a_change_with_its_metadata(repo: tuple[Path, list[str]], store: OxigraphStore) -> None:
    rows = _cold(store, "?c a uko:Change ; uko:commitHash ?h ; uko:message ?m ; uko:authorName ?a ; prov:endedAtTime ?t")
    got = sorted((r["t"], r["h"], r["m"], r["a"]) for r in rows)
    assert [(h, m, a) for _, h, m, a in got] == [
        (repo[1][0], "Add shapes", "Ada"), (repo[1][1], "Use math.pi in area", "Grace"),
        (repo[1][2], "Rename perimeter to circumference", "Ada"), (repo[1][3], "Drop Circle.scale", "Linus"),
        (repo[1][4], "Move shapes to geometry", "Grace"),
    ]
    assert got[1][0] == "2025-01-02T10:00:00Z"
    parents = _cold(store, "<%s> prov:wasInformedBy ?p" % M.change(repo[1][1]).value)
    assert parents == [{"p": M.change(repo[1][0]).value}]


def touched(store: OxigraphStore, commit_hash: str) -> set[str]:
    rows = _cold(store, "<%s> uko:touches ?e" % M.change(commit_hash).value)
    return {r["e"].rsplit("/", 1)[-1] for r in rows}


def test_touches_map_hunks_to_the_symbols_of_that_version(repo: tuple[Path, list[str]], store: OxigraphStore) -> None:
    h = repo[1]
    assert touched(store, h[0]) == {"__init__.py", "shapes.py", "shapes.py#pkg.shapes.area",
                                    "shapes.py#pkg.shapes.perimeter", "shapes.py#pkg.shapes.Circle",
                                    "shapes.py#pkg.shapes.Circle.__init__", "shapes.py#pkg.shapes.Circle.scale"}
    assert touched(store, h[1]) == {"shapes.py", "shapes.py#pkg.shapes.area"}  # the import line is module level
    assert touched(store, h[2]) == {"shapes.py", "shapes.py#pkg.shapes.perimeter", "shapes.py#pkg.shapes.circumference"}
    assert touched(store, h[3]) == {"shapes.py", "shapes.py#pkg.shapes.Circle", "shapes.py#pkg.shapes.Circle.scale"}
    assert touched(store, h[4]) == {"shapes.py", "geometry.py"}  # a pure rename: files only


def versions(store: OxigraphStore, entity: NamedNode) -> list[dict[str, str]]:
    return _cold(store, "?v prov:specializationOf <%s> ; prov:invalidatedAtTime ?t ; prov:wasInvalidatedBy ?c ; "
                        "uko:sourceRef ?ref ; uko:hasFragment ?f . ?f uko:text ?text . "
                        "OPTIONAL { ?v uko:supersededBy ?next }" % entity.value)


def test_changed_renamed_and_deleted_symbols_leave_versions_with_validity(repo: tuple[Path, list[str]],
                                                                          store: OxigraphStore) -> None:
    h = repo[1]
    area = versions(store, M.code("pkg/shapes.py", "pkg.shapes.area"))
    assert len(area) == 1
    assert "3.14 * r * r" in area[0]["text"] and area[0]["t"] == "2025-01-02T10:00:00Z"
    assert area[0]["c"] == M.change(h[1]).value and area[0]["ref"] == "pkg/shapes.py:4-5"
    # pkg/shapes.py no longer exists (moved), so nothing current supersedes the last version.
    assert "next" not in area[0]
    perimeter = versions(store, M.code("pkg/shapes.py", "pkg.shapes.perimeter"))
    assert [v["c"] for v in perimeter] == [M.change(h[2]).value] and "def perimeter" in perimeter[0]["text"]
    scale = versions(store, M.code("pkg/shapes.py", "pkg.shapes.Circle.scale"))
    assert [v["c"] for v in scale] == [M.change(h[3]).value] and "def scale" in scale[0]["text"]
    # Only the innermost symbol's body is archived (the class around the method is touched, not copied).
    assert versions(store, M.code("pkg/shapes.py", "pkg.shapes.Circle")) == []


def test_one_tier_per_resource(store: OxigraphStore) -> None:
    assert tiers.violations(store) == []


def test_the_store_with_history_conforms_to_the_shapes(repo: tuple[Path, list[str]]) -> None:
    code, _, err = run("validate", "-C", str(repo[0]))
    assert code == 0, err


def test_history_command_shows_every_version_and_commit(repo: tuple[Path, list[str]]) -> None:
    code, out, _ = run("history", "pkg.shapes.area", "-C", str(repo[0]), "--json")
    assert code == 0
    [h] = json.loads(out)
    assert h["current"] is None  # the module moved: pkg/shapes.py#area no longer exists
    assert [(e["what"], e["message"]) for e in h["events"]] == [
        ("commit", "Add shapes"), ("version", "Use math.pi in area")]
    code, out, _ = run("history", "pkg.geometry.area", "-C", str(repo[0]))
    assert code == 0 and "pkg/geometry.py:5-6 (" in out and "commit" in out  # touched by the move
    code, out, _ = run("history", "pkg/shapes.py::Circle.scale", "-C", str(repo[0]), "--json")
    assert code == 0 and [h["name"] for h in json.loads(out)] == ["pkg.shapes.Circle.scale"]
    code, _, err = run("history", "no_such_thing", "-C", str(repo[0]))
    assert code == 2 and "no entity" in err


def test_temporal_archaeology_answers_why_was_it_changed(repo: tuple[Path, list[str]]) -> None:
    code, out, err = run("assemble", "why was perimeter changed", "-C", str(repo[0]), "--budget", "1500",
                         "--format", "json")
    assert code == 0, err
    reply = json.loads(out)
    assert reply["metrics"]["strategy"] == "temporal-archaeology"
    texts = [f["text"] for f in reply["fragments"]]
    assert any("Rename perimeter to circumference" in t for t in texts)
    old = [f for f in reply["fragments"] if "def perimeter" in f["text"]]
    assert old and old[0]["tier"] == "cold" and old[0]["source_ref"] == "pkg/shapes.py:9-10"
    commit_frag = next(f for f in reply["fragments"] if "Rename perimeter" in f["text"])
    assert commit_frag["score"] == pytest.approx(0.5 * 0.7, abs=1e-3) or commit_frag["score"] > 1.0


def test_history_is_incremental(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(repo[0], root)
    code, out, _ = run("index", str(root), "--history", "10", "--json")
    data = json.loads(out)
    assert data["up_to_date"] and data["history"]["commits_ingested"] == 0
    assert data["history"]["note"] == "no new commits"
    geometry = root / "pkg" / "geometry.py"
    geometry.write_text(geometry.read_text().replace("math.pi * r * r", "math.pi * r ** 2"))
    new = commit(root, "Square with **", "Ada", "2025-01-06T10:00:00+00:00")
    code, out, _ = run("index", str(root), "--history", "10", "--json")
    data = json.loads(out)
    assert data["history"]["commits_ingested"] == 1 and data["history"]["commits_known"] == 5
    store = OxigraphStore.open_existing(root / ".acms" / "graph")
    try:
        area = M.code("pkg/geometry.py", "pkg.geometry.area")
        rows = versions(store, area)
        assert [r["c"] for r in rows] == [M.change(new).value]
        assert rows[0]["next"] == area.value  # the current entity supersedes the newest version
        # The re-index archived the same old body too; both are linked to the entity.
        all_versions = _cold(store, "?v prov:specializationOf <%s>" % area.value)
        assert len(all_versions) == 2
        assert tiers.violations(store) == []
    finally:
        store.close()


def test_a_plain_directory_has_no_history_with_a_note(sample_project: Path) -> None:
    code, out, _ = run("index", str(sample_project), "--history", "5")
    assert code == 0 and "git history: not a git checkout: no history ingested" in out


def test_tier_policy_recent_commits_and_use(repo: tuple[Path, list[str]], tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(repo[0], root)
    store = OxigraphStore.open_existing(root / ".acms" / "graph")
    try:
        policy = tiers.Policy(hot_commits=1, hot_days=0, hot_use_days=0)
        tiers.rebalance(store, policy)
        hot = {r["e"].value for r in store.select("SELECT ?e WHERE { GRAPH <https://w3id.org/acms/tier/hot> "
                                                  "{ ?e a ?k } FILTER(?k != uko:Fragment) }")}
        assert hot == {M.file("pkg/geometry.py").value}  # the last commit only moved the file
        helper = M.code("pkg/geometry.py", "pkg.geometry.circumference")
        tiers.record_use(store, [helper.value])
        tiers.rebalance(store, tiers.Policy(hot_commits=1, hot_days=0, hot_use_days=1))
        hot = {r["e"].value for r in store.select("SELECT ?e WHERE { GRAPH <https://w3id.org/acms/tier/hot> "
                                                  "{ ?e a ?k } FILTER(?k != uko:Fragment) }")}
        assert hot == {M.file("pkg/geometry.py").value, helper.value}
        frags = store.select("SELECT ?f WHERE { GRAPH <https://w3id.org/acms/tier/hot> { <%s> uko:hasFragment ?f . "
                             "?f uko:text ?t } }" % helper.value)
        assert frags, "an entity moves with its fragments"
        assert tiers.violations(store) == []
        uses = store.select("SELECT ?n WHERE { GRAPH <https://w3id.org/acms/graph/meta> { <%s> uko:useCount ?n } }"
                            % helper.value)
        assert [int(r["n"].value) for r in uses] == [1]
    finally:
        store.close()


def test_saved_query_changes_since(repo: tuple[Path, list[str]]) -> None:
    code, out, err = run("sparql", "--saved", "changes-since", "--bind", "module=pkg.geometry",
                         "--bind", "since=2025-01-03T00:00:00Z", "-C", str(repo[0]), "--format", "json")
    assert code == 0, err
    rows = [{k: v["value"] for k, v in b.items()} for b in json.loads(out)["results"]["bindings"]]
    assert [r["message"] for r in rows] == ["Move shapes to geometry"]
    code, out, _ = run("sparql", "--saved", "changes-since", "--bind", "module=pkg/shapes.py",
                       "--bind", "since=2025-01-02T00:00:00Z", "-C", str(repo[0]), "--format", "json")
    # pkg/shapes.py no longer exists as a file: the query is about current modules
    assert code == 0 and json.loads(out)["results"]["bindings"] == []


def test_saved_query_co_changed_with(tmp_path: Path) -> None:
    """The files the commits touching a file also touched, most often first, with the share of its
    commits; files no longer in the project are not listed."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    steps = [({"a.py": "A = 1\n", "b.py": "B = 1\n", "c.py": "C = 1\n", "old.py": "O = 1\n"}, "Add modules"),
             ({"a.py": "A = 2\n", "b.py": "B = 2\n"}, "Change a with b"),
             ({"a.py": "A = 3\n", "b.py": "B = 3\n"}, "Change a with b again"),
             ({"a.py": "A = 4\n", "c.py": "C = 4\n"}, "Change a with c"),
             ({"c.py": "C = 5\n"}, "Change c alone"),
             ({"old.py": None}, "Remove old")]
    for day, (files, message) in enumerate(steps, 1):
        for path, text in files.items():
            if text is None:
                (root / path).unlink()
            else:
                (root / path).write_text(text)
        commit(root, message, "Ada", f"2025-02-0{day}T10:00:00+00:00")
    code, _, err = run("index", str(root), "--history", "10")
    assert code == 0, err
    for module in ("a.py", "a"):  # a path or a module's qualified name
        code, out, err = run("sparql", "--saved", "co-changed-with", "--bind", f"module={module}", "-C", str(root),
                             "--format", "json")
        assert code == 0, err
        rows = [{k: v["value"] for k, v in b.items()} for b in json.loads(out)["results"]["bindings"]]
        assert [(r["path"], int(r["together"]), float(r["share"])) for r in rows] == [("b.py", 3, 0.75), ("c.py", 2, 0.5)]
