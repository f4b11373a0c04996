"""RocksDB's compaction threads at the lowest priority of this process.

An index run's writes leave RocksDB level-0 files that its next open compacts in background threads
(with random keys, each compaction rewrites much of the level below it). An ``acms index`` process
exits right after landing, so that compaction ran in the next run, beside its parsing workers: on two
cores, a 300-file branch switch of the standard library spent 0.5-3.4 s of compaction CPU in its
parsing phase every other run (that phase 4.2-5.0 s against 3.2-3.3 s). At the lowest priority it runs
on the core the run's single-threaded phases leave free. The flush thread is left alone: a run waits
for its flushes.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["COMPACTION_NICENESS", "lower_compaction_threads"]

COMPACTION_NICENESS = 19
_TASKS = Path("/proc/self/task")
_COMPACTION_POOLS = ("rocksdb:low", "rocksdb:bottom")  # RocksDB's thread names (a number may follow)


def lower_compaction_threads() -> int:
    """Renice this process's compaction threads (``rocksdb:low``, and ``rocksdb:bottom`` where RocksDB has
    them; Linux: niceness is per thread) to ``COMPACTION_NICENESS``; how many were lowered now. A no-op
    where threads cannot be listed."""
    if not hasattr(os, "setpriority") or not _TASKS.is_dir():
        return 0
    lowered = 0
    for task in _TASKS.iterdir():
        try:
            if not (task / "comm").read_text(encoding="ascii").startswith(_COMPACTION_POOLS):
                continue
            tid = int(task.name)
            if os.getpriority(os.PRIO_PROCESS, tid) < COMPACTION_NICENESS:
                os.setpriority(os.PRIO_PROCESS, tid, COMPACTION_NICENESS)
                lowered += 1
        except (OSError, ValueError, UnicodeDecodeError):  # the thread ended meanwhile, or is not ours to renice
            continue
    return lowered
