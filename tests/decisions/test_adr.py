"""ADR files: the pure parser on the common formats, and ingestion into (and re-indexing of) an index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acms.decisions.adr import is_adr_path, map_status, parse_adr
from acms.sparql import catalog
from acms.vocab import IriMinter

from .conftest import FIXTURE, acms, index, open_store

ADR = "docs/adr/"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("docs/adr/0001-x.md", True), ("doc/adr/0001-x.md", True), ("adr/0001-x.md", True),
        ("docs/decisions/0001-x.md", True), ("services/api/docs/adr/0002-y.md", True),
        ("docs/adr/README.md", False), ("docs/adr/template.md", False), ("docs/adr/adr-template.md", False),
        ("docs/adr/0001-x.txt", False), ("docs/adr/sub/0001-x.md", False), ("docs/guide.md", False),
        ("myadr/0001-x.md", False),
    ],
)
def test_adr_paths(path: str, expected: bool) -> None:
    assert is_adr_path(path) is expected


@pytest.mark.parametrize(
    ("raw", "status"),
    [("Accepted", "accepted"), ("accepted ✅", "accepted"), ("Superseded by [3. X](0003-x.md)", "superseded"),
     ("Deprecated", "deprecated"), ("Rejected", "rejected"), ("Proposed", "proposed"), ("Draft", "proposed"),
     ("Retired", "retired"), ("on hold", "proposed"), ("", "proposed")],
)
def test_status_mapping(raw: str, status: str) -> None:
    assert map_status(raw) == status


def _read(name: str) -> tuple[str, str]:
    path = name if "/" in name else ADR + name
    return path, (FIXTURE / path).read_text()


def test_nygard_format() -> None:
    rec = parse_adr(*_read("0003-use-postgres-for-sessions.md"))
    assert rec.title == "Use Postgres for sessions" and rec.status == "accepted"
    assert rec.statement == "SessionStore moves to Postgres; open_store takes a database URL."
    assert rec.supersedes == ("docs/adr/0002-use-sqlite-for-sessions.md",)
    assert rec.fragment_text == (FIXTURE / ADR / "0003-use-postgres-for-sessions.md").read_text().rstrip("\n")
    old = parse_adr(*_read("0002-use-sqlite-for-sessions.md"))
    assert old.status == "superseded" and old.supersedes == ()


def test_madr_formats() -> None:
    front = parse_adr(*_read("0004-cache-sessions.md"))
    assert (front.title, front.status) == ("Cache sessions in memory", "proposed")
    assert front.statement == "Chosen option: an in-process LRU cache in front of SessionStore.get."
    bullets = parse_adr(*_read("docs/decisions/0001-logging.md"))
    assert (bullets.title, bullets.status, bullets.statement) == ("Structured logging", "deprecated",
                                                                   "Log as JSON lines.")


def test_supersedes_by_number_and_plain_text() -> None:
    rec = parse_adr("adr/0007-z.md", "# 7. Z\n\n## Status\n\nAccepted\n\nSupersedes ADR-5 and [6](0006-y.md)\n")
    assert rec.supersedes == ("adr/0006-y.md", "#5")
    whole = parse_adr("adr/0008-w.md", "No heading, no sections.\n")
    assert whole.title == "w" and whole.status == "proposed" and whole.statement == "No heading, no sections."


def _decisions(root: Path) -> dict[str, dict]:
    code, out, _ = acms(root, "decision", "list", "--json")
    assert code == 0
    return {d["id"]: d for d in json.loads(out)}


def test_ingested_adrs_and_reindexing(project: Path) -> None:
    found = _decisions(project)
    assert {k: (v["status"], v["title"]) for k, v in found.items()} == {
        "docs/adr/0001-record-architecture-decisions.md": ("accepted", "Record architecture decisions"),
        "docs/adr/0002-use-sqlite-for-sessions.md": ("superseded", "Use SQLite for sessions"),
        "docs/adr/0003-use-postgres-for-sessions.md": ("accepted", "Use Postgres for sessions"),
        "docs/adr/0004-cache-sessions.md": ("proposed", "Cache sessions in memory"),
        "docs/decisions/0001-logging.md": ("deprecated", "Structured logging"),
    }
    new, old = found["docs/adr/0003-use-postgres-for-sessions.md"], found["docs/adr/0002-use-sqlite-for-sessions.md"]
    assert new["supersedes"] == [old["id"]] and old["superseded_by"] == [new["id"]]
    assert all(d["tier"] == "warm" and d["source"] == d["id"] and d["plan"] is None for d in found.values())

    # A new ADR superseding an unchanged one (by number, and a link to a missing file that is dropped).
    adr = project / ADR
    (adr / "0005-drop-the-cache.md").write_text(
        "# 5. Drop the cache\n\n## Status\n\nAccepted\n\nSupersedes ADR-4 and [gone](0009-gone.md)\n\n"
        "## Decision\n\nNo cache.\n")
    assert index(project).files_indexed == 1
    assert _decisions(project)["docs/adr/0005-drop-the-cache.md"]["supersedes"] == ["docs/adr/0004-cache-sessions.md"]

    # Editing an ADR replaces its decision (same IRI); links from unchanged ADRs to it stay.
    text = (adr / "0004-cache-sessions.md").read_text().replace("status: proposed", "status: superseded")
    (adr / "0004-cache-sessions.md").write_text(text.replace("Cache sessions in memory", "Cache sessions (LRU)"))
    assert index(project).files_indexed == 1
    after = _decisions(project)
    assert after["docs/adr/0004-cache-sessions.md"]["status"] == "superseded"
    assert after["docs/adr/0004-cache-sessions.md"]["title"] == "Cache sessions (LRU)"
    assert after["docs/adr/0004-cache-sessions.md"]["superseded_by"] == ["docs/adr/0005-drop-the-cache.md"]
    assert after["docs/adr/0004-cache-sessions.md"]["iri"] == found["docs/adr/0004-cache-sessions.md"]["iri"]

    # Deleting an ADR removes its decision and the links to it.
    (adr / "0002-use-sqlite-for-sessions.md").unlink()
    index(project)
    final = _decisions(project)
    assert "docs/adr/0002-use-sqlite-for-sessions.md" not in final
    assert final["docs/adr/0003-use-postgres-for-sessions.md"]["supersedes"] == []

    minter = IriMinter(project.name)
    store = open_store(project)
    try:
        assert store.select(catalog.text("rules/qc-one-tier")) == []
        rows = store.select("SELECT ?ref ?file WHERE { GRAPH ?g { ?d uko:hasFragment ?f . "
                            "?f uko:sourceRef ?ref ; uko:inFile ?file } }", {"d": minter.decision(ADR + "0005-drop-the-cache.md")})
        assert [(r["ref"].value, r["file"].value) for r in rows] == [
            (ADR + "0005-drop-the-cache.md:1-11", minter.file(ADR + "0005-drop-the-cache.md").value)]
    finally:
        store.close()
    assert acms(project, "validate")[0] == 0
