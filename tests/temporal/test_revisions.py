"""The ledger of revised entities an index run leaves (``cache/revisions.json``) holds what
``rules/revised-since.rq`` answers for its window, run after run: carried forward by the incremental
runs (which then ask nothing), asked again by any other run."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from acms.api import Index
from acms.service.freshness import last_run
from acms.temporal import tiers
from acms.temporal.revisions import RevisionLedger

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SETTINGS = {"embed_on_index": False, "record_use": False}
REVISED_SINCE = tiers.revised_since  # the query, as a test's counting wrapper leaves it


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "sample_project", root)
    return root


def _asked(monkeypatch: pytest.MonkeyPatch) -> list[datetime]:
    asked: list[datetime] = []

    def counted(store: object, since: datetime) -> dict[str, str]:
        asked.append(since)
        return REVISED_SINCE(store, since)  # type: ignore[arg-type]

    monkeypatch.setattr(tiers, "revised_since", counted)
    return asked


def _ledger_is_the_query(idx: Index) -> RevisionLedger:
    ledger = RevisionLedger.load(idx.layout.cache)
    assert ledger is not None
    with idx.reading() as store:
        assert ledger.run == last_run(store)
        assert ledger.last == REVISED_SINCE(store, ledger.since)
    return ledger


def test_incremental_runs_carry_the_ledger_and_it_stays_the_query(project: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    with Index.open(project, **SETTINGS) as idx:
        idx.index()
        mod, util = project / "pkg" / "mod.py", project / "pkg" / "util.py"
        asked = _asked(monkeypatch)
        edits = [
            lambda: mod.write_text(mod.read_text().replace("def make_parser()", "# moved\ndef make_parser()", 1)),
            lambda: util.write_text(util.read_text() + "\n\ndef added_helper():\n    return 2\n"),
            lambda: mod.write_text(mod.read_text() + "\n\ndef another_one():\n    return 3\n"),
            lambda: (project / "pkg" / "moved.py").write_text(util.read_text()) or util.unlink(),  # a move
            lambda: mod.write_text(mod.read_text().replace("def another_one()", "def renamed_one()", 1)),
        ]
        seen: list[int] = []
        for edit in edits:
            edit()
            report = idx.refresh()
            assert report is not None
            seen.append(len(_ledger_is_the_query(idx).last))
        assert asked == []  # every refresh carried the ledger
        assert seen[-1] > 0 and seen == sorted(seen), seen  # the edits revised more entities, none left the window
        with idx.writing() as store:  # and the hot tier is the one the policy chooses by the query
            moved = tiers.rebalance(store, tiers.Policy.of(idx.settings))
        assert moved.promoted == moved.demoted == 0


def test_a_ledger_of_another_state_or_a_shorter_window_is_not_carried(project: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    with Index.open(project, **SETTINGS) as idx:
        idx.index()
        mod = project / "pkg" / "mod.py"
        mod.write_text(mod.read_text() + "\n# one\n")
        idx.refresh()
        ledger = RevisionLedger.load(idx.layout.cache)
        assert ledger is not None
        RevisionLedger("https://example.org/another-run", ledger.since, ledger.last).save(idx.layout.cache)
        asked = _asked(monkeypatch)
        mod.write_text(mod.read_text() + "\n# two\n")
        idx.refresh()
        assert len(asked) == 1  # another state: asked
        ledger = RevisionLedger.load(idx.layout.cache)
        assert ledger is not None
        RevisionLedger(ledger.run, ledger.since + timedelta(days=1), ledger.last).save(idx.layout.cache)
        mod.write_text(mod.read_text() + "\n# three\n")
        idx.refresh()
        assert len(asked) == 2  # it reaches back less far than the window: asked
        RevisionLedger.path(idx.layout.cache).write_text("{not json")
        mod.write_text(mod.read_text() + "\n# four\n")
        idx.refresh()
        assert len(asked) == 3  # unreadable: asked
        _ledger_is_the_query(idx)


def test_carrying_keeps_the_window_and_the_latest_time() -> None:
    now = datetime(2026, 3, 1, 12, tzinfo=UTC)
    since = now - timedelta(days=7)
    ledger = RevisionLedger("run-a", since - timedelta(hours=1), {
        "e:old": (since - timedelta(minutes=1)).isoformat(),  # out of the new window
        "e:kept": (since + timedelta(days=1)).isoformat().replace("+00:00", "Z"),
        "e:again": (since + timedelta(days=2)).isoformat(),
    })
    added = {"e:again": "2026-03-01T13:00:00+01:00", "e:new": "2026-03-01T11:59:00Z"}  # 12:00 UTC, an offset
    carried = ledger.carried("run-a", since, added)
    assert carried == {"e:kept": ledger.last["e:kept"], "e:again": "2026-03-01T13:00:00+01:00",
                       "e:new": "2026-03-01T11:59:00Z"}
    assert ledger.carried("run-b", since, added) is None
    assert ledger.carried("run-a", since - timedelta(days=1), added) is None  # the window grew: asked


def test_the_caches_a_run_updates_hold_the_hot_tier_the_policy_left(project: Path) -> None:
    """The run hands the tier policy's choice to the caches' update (no query for the hot tier's
    entities): what the saved segment holds is what the hot tier holds, after edits that move entities
    in and out of it."""
    from acms.retrieval.segment import Segment
    from acms.sparql import catalog
    from acms.vocab import TIER_HOT

    with Index.open(project, **SETTINGS, hot_max=3) as idx:
        idx.index()
        mod, util = project / "pkg" / "mod.py", project / "pkg" / "util.py"
        seen = []
        for i, path in enumerate([mod, util, mod, util]):
            path.write_text(path.read_text() + f"\n\ndef edited_{i}():\n    return {i}\n")
            assert idx.refresh() is not None
            with idx.reading() as store:
                hot = sorted({r["e"].value for r in store.select(catalog.text("rules/entities-in-tier"), {"tier": TIER_HOT})})
            assert Segment.load(idx.layout.cache_dir("tokens")).hot == hot
            seen.append(hot)
        assert all(seen) and seen[0] != seen[1]  # entities moved in and out


def test_a_run_that_ingests_commits_asks_and_the_refresh_after_it_carries_its_ledger(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits' versions are superseded at the commits' times, which an incremental run does not archive:
    a run that ingests them asks the query, and the refresh after it carries that run's ledger, commit
    versions within the window included."""
    from .gitrepo import SHAPES_V1, commit, git

    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "pkg" / "__init__.py").write_text("")
    shapes = root / "pkg" / "shapes.py"
    shapes.write_text(SHAPES_V1)
    yesterday = datetime.now(UTC) - timedelta(days=1)
    commit(root, "Add shapes", "Ada", (yesterday - timedelta(hours=2)).isoformat())
    shapes.write_text(SHAPES_V1.replace("return 3.14 * r * r", "return 3.1416 * r * r"))
    commit(root, "Sharper pi", "Grace", yesterday.isoformat())
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        asked = _asked(monkeypatch)
        idx.index(history=10)  # nothing else changed: only the commits' versions are new
        assert asked  # commits ingested: asked
        ledger = _ledger_is_the_query(idx)
        assert any(e.endswith("area") for e in ledger.last), ledger.last  # the commit's version, in the window
        before = len(asked)
        shapes.write_text(shapes.read_text().replace("return 2 * 3.14 * r", "return 2 * 3.1416 * r"))
        assert idx.refresh() is not None
        assert len(asked) == before  # carried
        assert set(_ledger_is_the_query(idx).last) >= set(ledger.last)
