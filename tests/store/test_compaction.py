"""RocksDB's compaction threads run below everything else of the process that writes the index."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acms.store import compaction
from acms.store.oxigraph import open_handle

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir() or not hasattr(os, "setpriority"),
                                reason="per-thread niceness is read and set through /proc and setpriority")


def _threads() -> dict[int, str]:
    out: dict[int, str] = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            out[int(task.name)] = (task / "comm").read_text(encoding="ascii").strip()
        except OSError:
            continue
    return out


def test_a_writers_open_lowers_the_compaction_threads_and_leaves_the_flush_thread(tmp_path: Path) -> None:
    """A run's compaction of the last run's writes ran beside its parsing workers at the writer's own
    priority (a 300-file switch's parsing phase 4.2-5.0 s against 3.2-3.3 s, every other run)."""
    store = open_handle(tmp_path / "graph")
    try:
        threads = _threads()
        low = [tid for tid, name in threads.items() if name.startswith("rocksdb:low")]
        high = [tid for tid, name in threads.items() if name.startswith("rocksdb:high")]
        assert low and high
        assert all(os.getpriority(os.PRIO_PROCESS, tid) == compaction.COMPACTION_NICENESS for tid in low)
        assert all(os.getpriority(os.PRIO_PROCESS, tid) < compaction.COMPACTION_NICENESS for tid in high)
        assert all(os.getpriority(os.PRIO_PROCESS, tid) == os.getpriority(os.PRIO_PROCESS, 0)
                   for tid, name in threads.items() if not name.startswith("rocksdb:"))
        assert compaction.lower_compaction_threads() == 0  # once lowered, left as they are
    finally:
        del store
