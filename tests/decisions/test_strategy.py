"""plan-decision-context scores decisions by plan distance and retirement, falls back to current ones;
the saved query decisions-about answers for an entity."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyoxigraph import Literal

from acms.api import Index
from acms.config import Settings
from acms.decisions import records
from acms.sparql import catalog
from acms.vocab import IriMinter

from ..conftest import copy_of_indexed

QUALITY = 0.7
STRATEGY = "plan-decision-context"


@pytest.fixture(scope="module")
def ix(tmp_path_factory: pytest.TempPathFactory, _indexed_template: Path) -> Iterator[Index]:
    root = copy_of_indexed(_indexed_template, tmp_path_factory.mktemp("pdc"))  # plans are written into it
    with Index(root, Settings(embed_on_index=False)) as opened:
        store, minter = opened.store, IriMinter(root.name)
        records.create_plan(store, minter, "root")
        records.create_plan(store, minter, "mid", parent="root")
        records.create_plan(store, minter, "leaf", parent="mid")
        records.create_plan(store, minter, "other")
        rec = lambda plan, text, **kw: records.record_decision(store, minter, plan=plan, text=text, **kw)  # noqa: E731
        rec("root", "Sessions live in SQLite", about=["pkg.store.SessionStore"])  # D-1, retired by D-4
        rec("root", "Every store has a URL")  # D-2: grandparent of leaf
        rec("mid", "Expire sessions after 30 minutes")  # D-3: parent of leaf
        rec("leaf", "Sessions live in Postgres", supersedes="D-1", about=["pkg.store.SessionStore"])  # D-4
        rec("other", "Unrelated plan's decision")  # D-5
        rec("mid", "Old idea", status="deprecated")  # D-6
        yield opened


def _scores(result) -> dict[str, tuple[float, str, str]]:
    """Recorded decisions by id (their name is "D-n: title"), ADRs by path."""
    return {(c.name.split(":")[0] if c.path.startswith("decisions/") else c.path): (round(c.score, 6), c.tier, c.reason)
            for c in (i.candidate for i in result.assembled.items)}


def test_plan_ancestors_and_retired_scores(ix: Index) -> None:
    result = ix.assemble("what did we decide", 4000, strategy=STRATEGY, plan="leaf")
    got = _scores(result)
    assert {k: v[0] for k, v in got.items()} == {
        "D-4": QUALITY * 1.0,  # the request's plan
        "D-3": round(QUALITY * 0.8, 6),  # parent
        "D-2": round(QUALITY * 0.8, 6),  # grandparent
        "D-1": round(QUALITY * 0.6, 6),  # retired (cold), in the grandparent
        "D-6": round(QUALITY * 0.6, 6),  # deprecated, in the parent
    }
    assert got["D-1"][1] == "cold" and got["D-4"][1] == "warm"
    assert got["D-4"][2] == "decision of the plan (x1.0)"
    assert got["D-3"][2] == "decision of ancestor plan mid (x0.8)"
    assert got["D-1"][2] == "decision of ancestor plan root (x0.8); retired (x0.6 instead)"
    item = next(i for i in result.assembled.items if i.candidate.name.startswith("D-4"))
    assert item.candidate.path == "decisions/D-4" and item.candidate.kind == "Decision"
    assert "Supersedes: D-1" in item.candidate.text and "About: pkg.store.SessionStore" in item.candidate.text
    # The middle plan sees its own and the root's decisions, not its child's.
    assert set(_scores(ix.assemble("decisions", 4000, strategy=STRATEGY, plan="mid"))) == {"D-1", "D-2", "D-3", "D-6"}


def test_fallback_without_plan_and_auto_choice(ix: Index) -> None:
    result = ix.assemble("what did we decide", 4000, strategy=STRATEGY)
    got = _scores(result)
    # Current decisions (recorded and ADRs) outside cold; retired, deprecated and superseded ones are not.
    assert {"D-2", "D-3", "D-4", "D-5", "docs/adr/0003-use-postgres-for-sessions.md"} <= set(got)
    assert not {"D-1", "D-6", "docs/adr/0002-use-sqlite-for-sessions.md"} & set(got)
    assert {v[0] for v in got.values()} == {round(QUALITY * 0.8, 6)}
    assert any("fell back" in w for w in result.reply["metrics"].get("warnings", []))
    focused = _scores(ix.assemble("sessions", 4000, strategy=STRATEGY, focus=["pkg.store.SessionStore"]))
    assert focused["D-4"][0] == QUALITY and focused["D-4"][2] == "current decision about a focus entity"
    assert focused["D-2"][0] == round(QUALITY * 0.8, 6)
    # A plan with no decisions falls back too.
    records.create_plan(ix.store, IriMinter(ix.root.name), "empty")
    assert set(_scores(ix.assemble("x", 4000, strategy=STRATEGY, plan="empty"))) == set(got)

    assert ix.assemble("how is the session store opened", 2000, plan="leaf").strategy == STRATEGY
    assert ix.assemble("why did we decide to use Postgres", 2000).strategy == STRATEGY
    assert ix.assemble("how is the session store opened", 2000).strategy != STRATEGY


def test_saved_query_decisions_about(ix: Index) -> None:
    spec = catalog.saved("decisions-about")
    rows = ix.store.select(spec.text, {"name": Literal("SessionStore")})
    got = [(r["decision"].value, r["status"].value, r["plan"].value, r["tier"].value, r["about"].value) for r in rows]
    assert got == [("D-4", "accepted", "leaf", "warm", "pkg.store.SessionStore"),
                   ("D-1", "retired", "root", "cold", "pkg.store.SessionStore")]
    assert ix.store.select(spec.text, {"name": Literal("pkg.store.SessionStore")}) == rows
