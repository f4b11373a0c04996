"""Removing a directory no one reads any more without making the command wait for it."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["removals_settled", "remove", "remove_aside"]

_removing: list[threading.Thread] = []
_removing_lock = threading.Lock()


def remove_aside(path: Path, then: Callable[[], object] | None = None) -> None:
    """Remove ``path``, a directory no one reads any more under a name no one makes again (a cache a swap
    moved aside, a landed run's checkpoint), in a thread of its own, then call ``then``. Why: its
    unlinks wait on the file system, not on the interpreter (a refresh swaps three caches and lets go
    of a checkpoint: ~25 ms of ~300 files). The thread is not a daemon: a process ends once it is done
    (``removals_settled`` waits for it sooner); one killed first leaves what the next sweep removes."""

    def work() -> None:
        try:
            remove(path)
        finally:
            if then is not None:
                then()

    thread = threading.Thread(target=work, name="acms-remove", daemon=False)
    with _removing_lock:
        _removing[:] = [t for t in _removing if t.is_alive()]
        try:
            thread.start()
        except RuntimeError:  # no thread to be had (a process at its limit): removed here and now
            work()
            return
        _removing.append(thread)


def removals_settled(timeout: float | None = None) -> bool:
    """Wait for this process's ``remove_aside`` calls to finish; whether they all did."""
    with _removing_lock:
        pending = list(_removing)
    for thread in pending:
        thread.join(timeout)
    return not any(t.is_alive() for t in pending)


def remove(path: Path) -> None:
    """A directory with what it holds, or a file; nothing when it is gone already."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
