"""acms plan / acms decision on a real on-disk index: the tree, validated writes, retiring to cold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyoxigraph import Literal

from acms.sparql import catalog
from acms.vocab import TIER_COLD, TIER_HOT, TIER_WARM, UKO, IriMinter

from ..conftest import copy_of_indexed
from .conftest import acms, index, open_store


def _plans(root: Path) -> None:
    assert acms(root, "plan", "create", "storage")[0] == 0
    assert acms(root, "plan", "create", "storage/sessions", "--parent", "storage")[0] == 0
    assert acms(root, "plan", "create", "storage/sessions/ttl", "--parent", "storage/sessions")[0] == 0


def _record(root: Path, *args: str) -> str:
    code, out, err = acms(root, "decision", "record", *args)
    assert code == 0, err
    return out.strip()


def _triples(root: Path, subject_iri: str) -> dict[str, int]:
    """Triples with this subject per tier graph."""
    store = open_store(root)
    try:
        from pyoxigraph import NamedNode

        out = {}
        for name, graph in (("hot", TIER_HOT), ("warm", TIER_WARM), ("cold", TIER_COLD)):
            out[name] = len(list(store.raw.quads_for_pattern(NamedNode(subject_iri), None, None, graph)))
        return out
    finally:
        store.close()


def test_plans_decisions_and_superseding(project: Path) -> None:
    _plans(project)
    d1 = _record(project, "--plan", "storage", "Keep sessions in SQLite.\nOne file, no server.",
                 "--about", "pkg.store.SessionStore", "--about", "pkg/store.py")
    d2 = _record(project, "--plan", "storage/sessions", "Sessions expire after 30 minutes",
                 "--title", "Session TTL", "--about", "pkg/store.py::SessionStore.get", "--status", "proposed")
    d3 = _record(project, "--plan", "storage/sessions/ttl", "Use Postgres for sessions",
                 "--supersedes", d1, "--about", "open_store")
    assert (d1, d2, d3) == ("D-1", "D-2", "D-3")

    code, out, _ = acms(project, "plan", "show", "--json")
    data = json.loads(out)
    [storage] = data["plans"]
    assert storage["name"] == "storage" and storage["parent"] is None
    [sessions] = storage["children"]
    [ttl] = sessions["children"]
    assert (sessions["parent"], ttl["parent"]) == ("storage", "storage/sessions")
    [old] = storage["decisions"]
    assert old["id"] == "D-1" and old["status"] == "retired" and old["tier"] == "cold" and old["retired"]
    assert old["retired_at"] and old["superseded_by"] == ["D-3"]
    assert old["about"] == ["pkg.store.SessionStore", "pkg/store.py"]
    [ttl_decision] = sessions["decisions"]
    assert ttl_decision["title"] == "Session TTL" and ttl_decision["status"] == "proposed"
    assert ttl_decision["about"] == ["pkg.store.SessionStore.get"]
    [new] = ttl["decisions"]
    assert new["supersedes"] == ["D-1"] and new["about"] == ["pkg.store.open_store"] and not new["retired"]
    assert new["title"] == "Use Postgres for sessions" and new["tier"] == "warm"
    # The ADRs of the fixture are decisions in no plan.
    assert {d["id"] for d in data["unplanned"]} >= {"docs/adr/0003-use-postgres-for-sessions.md"}

    code, text, _ = acms(project, "plan", "show")
    assert code == 0
    lines = text.splitlines()
    assert lines[0] == "plan storage"
    assert "  x D-1  [retired, cold]  Keep sessions in SQLite." in lines
    assert "      about: pkg.store.SessionStore, pkg/store.py; superseded by: D-3" in lines
    assert "      - D-3  [accepted]  Use Postgres for sessions" in lines
    code, sub, _ = acms(project, "plan", "show", "storage/sessions")
    assert sub.splitlines()[0] == "ancestors: storage" and "x D-1" not in sub and "- D-3" in sub

    # Retired: every triple of D-1 and of its fragment is in cold, none left in warm (or hot).
    minter = IriMinter(project.name)
    d1_iri = minter.decision("D-1").value
    assert _triples(project, d1_iri)["warm"] == 0 and _triples(project, d1_iri)["hot"] == 0
    assert _triples(project, d1_iri)["cold"] >= 9
    store = open_store(project)
    try:
        frags = [q.object.value for q in store.raw.quads_for_pattern(minter.decision("D-1"), None, None, None)
                 if q.predicate.value.endswith("#hasFragment")]
        assert store.select(catalog.text("rules/qc-one-tier")) == []
    finally:
        store.close()
    assert len(frags) == 1
    assert _triples(project, frags[0]) == {"hot": 0, "warm": 0, "cold": 6}

    # Plans and recorded decisions survive re-indexing.
    (project / "pkg" / "store.py").write_text((project / "pkg" / "store.py").read_text() + "\n\nX = 1\n")
    assert index(project).files_indexed == 1
    code, again, _ = acms(project, "plan", "show", "--json")
    assert json.loads(again)["plans"] == data["plans"]

    code, out, _ = acms(project, "decision", "list", "--about", "pkg.store.SessionStore", "--json")
    assert [d["id"] for d in json.loads(out)] == ["D-1"]


def test_decision_record_json_and_fragment(project: Path) -> None:
    assert acms(project, "plan", "create", "p")[0] == 0
    code, out, _ = acms(project, "decision", "record", "--plan", "p", "Cache reads.", "--json")
    info = json.loads(out)
    assert info["id"] == "D-1" and info["plan"] == "p" and info["status"] == "accepted"
    store = open_store(project)
    try:
        rows = store.select(
            "SELECT ?ref ?text ?n WHERE { GRAPH ?g { ?d uko:name 'D-1' ; uko:hasFragment ?f . "
            "?f uko:sourceRef ?ref ; uko:text ?text FILTER NOT EXISTS { ?f uko:inFile ?x } } BIND(fn:tokenCount(?text) AS ?n) }")
    finally:
        store.close()
    [row] = rows
    assert row["ref"].value == "decisions/D-1:1-4"
    assert row["text"].value == "## Decision D-1: Cache reads.\nStatus: accepted; plan: p\n\nCache reads."
    assert int(row["n"].value) > 5


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, _indexed_template: Path) -> Path:
    """One index for the checks that write nothing (a copy of the session's: it gets a plan)."""
    root = copy_of_indexed(_indexed_template, tmp_path_factory.mktemp("decisions"))
    assert acms(root, "plan", "create", "p")[0] == 0
    return root


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["plan", "create", "child", "--parent", "nope"], "unknown plan 'nope'"),
        (["plan", "create", "p"], "plan 'p' already exists"),
        (["plan", "show", "nope"], "unknown plan 'nope'"),
        (["decision", "record", "--plan", "nope", "x"], "unknown plan 'nope'"),
        (["decision", "record", "--plan", "p", "x", "--about", "SessionStor"], "near matches: pkg.store.SessionStore"),
        (["decision", "record", "--plan", "p", "x", "--about", "get"], "'get' names 2 entities, give one of: pkg.cache.get, pkg.store.SessionStore.get"),
        (["decision", "record", "--plan", "p", "x", "--about", "pkg/store.py::Nope"], "no entity 'Nope' in pkg/store.py"),
        (["decision", "record", "--plan", "p", "x", "--supersedes", "D-9"], "unknown decision 'D-9'"),
        (["decision", "record", "--plan", "p", "x", "--supersedes", "docs/adr/0001-record-architecture-decisions.md"],
         "comes from an ADR file"),
        (["decision", "record", "--plan", "p", "  "], "a decision needs its text"),
    ],
)
def test_user_mistakes_are_one_line_errors(shared: Path, args: list[str], needle: str) -> None:
    code, out, err = acms(shared, *args)
    assert code == 2, (out, err)
    assert needle in err and "Traceback" not in err


def test_superseding_twice_is_refused(project: Path) -> None:
    acms(project, "plan", "create", "p")
    _record(project, "--plan", "p", "one")
    _record(project, "--plan", "p", "two", "--supersedes", "D-1")
    code, _, err = acms(project, "decision", "record", "--plan", "p", "three", "--supersedes", "D-1")
    assert code == 2 and "D-1 is already retired" in err


def test_a_secret_in_a_recorded_decision_never_reaches_the_graph(project: Path) -> None:
    """As a file's text at ingest: the statement and title hold ``[REDACTED:kind]``, the command says what
    it replaced, and neither the graph, a search nor the listing holds the secret. ``store_secrets``
    keeps it, as it keeps a file's."""
    token, key = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB", "AKIAZ3KQ7PNJ2WQXR5TM"
    assert acms(project, "plan", "create", "deploy")[0] == 0
    code, out, err = acms(project, "decision", "record", f"CI pushes with {token} and the key {key}.",
                          "--plan", "deploy", "--title", f"Deploy with {token}")
    assert code == 0 and out.strip() == "D-1"
    assert "1 aws_access_key_id, 2 github_token" in err and token not in err  # the title holds one too
    store = open_store(project)
    try:
        held = " ".join(q.object.value for q in store.raw.quads_for_pattern(None, None, None, None)
                        if isinstance(q.object, Literal))
    finally:
        store.close()
    assert token not in held and key not in held and "[REDACTED:github_token]" in held
    assert token not in acms(project, "search", "CI pushes deploy key")[1]
    assert token not in acms(project, "decision", "list", "--json")[1]
    code, out, err = acms(project, "--set", "store_secrets=true", "decision", "record", f"Kept: {token}",
                          "--plan", "deploy")
    assert code == 0 and "REDACTED" not in err
    store = open_store(project)
    try:
        assert any(token in q.object.value for q in store.raw.quads_for_pattern(None, UKO.statement, None, None))
    finally:
        store.close()
