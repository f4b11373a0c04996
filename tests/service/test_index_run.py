"""An index run lands whole or not at all: a fault at every phase boundary (an exception, and kill -9
in a real process) leaves the previous complete index, for readers at once and for the next writer."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from acms.api import Index
from acms.removal import removals_settled
from acms.service.progress import PHASES

from ..temporal.gitrepo import build, commit

# Injected into a real `python` process: index the project, kill -9 itself as phase argv[2] ends.
KILLER = """
import os, signal, sys
from acms.api import Index

class KillAt:
    def start(self, phase, total=None): pass
    def update(self, done, total=None): pass
    def finish(self, phase):
        if phase == sys.argv[2]:
            os.kill(os.getpid(), signal.SIGKILL)

with Index.open(sys.argv[1], wait=10) as idx:
    idx.index(history=10, progress=KillAt())
print("finished")
"""
MUST_COVER = {"listing", "reading", "diff", "parsing", "emitting", "linking", "rules", "versions",
              "validation", "store", "history", "copies", "tiers", "secrets", "caches", "embeddings", "vectors"}


class Recorder:
    def __init__(self, fail_at: str | None = None) -> None:
        self.fail_at, self.ended = fail_at, []

    def start(self, phase: str, total: int | None = None) -> None:
        pass

    def update(self, done: int, total: int | None = None) -> None:
        pass

    def finish(self, phase: str) -> None:
        self.ended.append(phase)
        if phase == self.fail_at:
            raise RuntimeError(f"injected fault after {phase}")


def _snapshot(root: Path) -> set[str]:
    """Every quad a reader sees (the derived caches are keyed by the graph, so the quads are the state)."""
    with Index.open(root, mode="read", wait=10) as idx, idx.reading() as store:
        return {str(q) for q in store.quads()}


@pytest.fixture(scope="module")
def before(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, set[str]]:
    """A git project with an extension (so the rules phase runs), indexed with history; then changed
    (a new file, a changed one, a new commit), so the next run goes through every phase."""
    root = tmp_path_factory.mktemp("run") / "proj"
    build(root)
    (root / "acms.toml").write_text('extensions = ["web-api"]\n')
    (root / "app.py").write_text("from flask import Flask\napp = Flask(__name__)\n\n\n@app.get('/items')\n"
                                 "def items():\n    return []\n")
    commit(root, "Add the app", "Ada", "2025-01-06T10:00:00+00:00")
    with Index.open(root) as idx:
        idx.index(history=10)
    state = _snapshot(root)
    (root / "pkg" / "extra.py").write_text("def extra():\n    return 'extra'\n")
    (root / "app.py").write_text((root / "app.py").read_text() + "\n\n@app.post('/items')\ndef add():\n    return {}\n")
    commit(root, "Add extra and POST /items", "Grace", "2025-01-07T10:00:00+00:00")
    return root, state


def _copy(root: Path, into: Path) -> Path:
    """A copy under the same folder name (the project's IRIs are minted from it)."""
    dest = into / root.name
    shutil.copytree(root, dest, symlinks=True)
    return dest


def test_a_clean_run_goes_through_every_phase_and_leaves_no_checkpoint(before: tuple[Path, set[str]],
                                                                      tmp_path: Path) -> None:
    root = _copy(before[0], tmp_path / "p")
    seen = Recorder()
    with Index.open(root) as idx:
        report = idx.index(history=10, progress=seen)
    assert MUST_COVER <= set(seen.ended) <= set(PHASES)
    assert report.files_indexed == 2 and report.derived > 0 and report.history and report.history.commits_ingested == 1
    assert removals_settled(timeout=30)  # the landed run's checkpoint goes in the background
    assert sorted(p.name for p in (root / ".acms").iterdir() if "graph" in p.name or "run" in p.name) == ["graph"]
    assert _snapshot(root) != before[1]


@pytest.mark.parametrize("phase", sorted(MUST_COVER, key=PHASES.index))
def test_an_error_after_any_phase_leaves_the_previous_index(before: tuple[Path, set[str]], tmp_path: Path,
                                                            phase: str) -> None:
    root = _copy(before[0], tmp_path / "p")
    with Index.open(root) as idx:
        with pytest.raises(RuntimeError, match=f"after {phase}"):
            idx.index(history=10, progress=Recorder(fail_at=phase))
        with idx.reading() as store:  # rolled back at once, in the same process
            assert {str(q) for q in store.quads()} == before[1]
    assert _snapshot(root) == before[1]
    assert not (root / ".acms" / "run-pending").exists()


# kill -9 where the store has changed since the run began (and at the first boundary, before any write):
# the exception test above covers every boundary in-process; these cover the marker, the readers that
# honour it and the recovery by the next writer, in real processes.
KILL_AT = ("listing", "store", "history", "tiers", "secrets", "caches", "embeddings", "vectors")


def _kill_then_recover(root: Path, phase: str, state: set[str]) -> None:
    proc = subprocess.run([sys.executable, "-c", KILLER, str(root), phase], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL, (phase, proc.stdout, proc.stderr)
    assert (root / ".acms" / "run-pending").exists(), phase
    assert _snapshot(root) == state, f"a reader after kill -9 at the end of {phase}"
    with Index.open(root, wait=10) as idx:
        report = idx.index(history=10)
    assert report.files_indexed == 2 and report.history and report.history.commits_ingested == 1, phase
    assert not (root / ".acms" / "run-pending").exists()


def test_kill_9_after_a_phase_leaves_the_previous_index(before: tuple[Path, set[str]], tmp_path: Path) -> None:
    """A real process killed (SIGKILL) as a phase ends: readers see the previous index at once (they
    honour the pending-run marker), and the next run rolls back and lands the whole change."""
    roots = {phase: _copy(before[0], tmp_path / phase) for phase in KILL_AT}
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(lambda phase: _kill_then_recover(roots[phase], phase, before[1]), KILL_AT))


def test_a_run_that_landed_but_died_before_cleaning_up(before: tuple[Path, set[str]], tmp_path: Path) -> None:
    """Killed between removing the marker and deleting the checkpoint: the new index stands, the
    stale checkpoint is removed by the next writer."""
    root = _copy(before[0], tmp_path / "p")
    with Index.open(root) as idx:
        idx.index(history=10)
    after = _snapshot(root)
    stale = root / ".acms" / "graph.before-run"
    shutil.copytree(root / ".acms" / "graph", stale)
    aside = root / ".acms" / "graph.before-run.landed-0123"  # killed while it was removed in the background
    shutil.copytree(root / ".acms" / "graph", aside)
    assert _snapshot(root) == after  # no marker: readers use graph/
    with Index.open(root):
        pass
    assert not stale.exists() and not aside.exists() and _snapshot(root) == after


def test_two_runs_in_one_session_and_a_leftover_checkpoint(before: tuple[Path, set[str]], tmp_path: Path) -> None:
    """A writer that keeps the index open runs again after a run whose checkpoint could not be deleted."""
    root = _copy(before[0], tmp_path)
    with Index.open(root) as idx:
        idx.index(history=10)
        leftover = root / ".acms" / "graph.before-run"  # a landed run's checkpoint that could not be deleted
        leftover.mkdir()
        (leftover / "CURRENT").write_text("MANIFEST-000001\n")
        (root / "pkg" / "later.py").write_text("def later():\n    return 2\n")
        report = idx.index(history=10)
    assert report.files_indexed == 1 and not (root / ".acms" / "graph.before-run").exists()
