"""Helper processes that die with the process that started them, and whose death fails the run at once.

Why: ``kill -9`` of ``acms index`` must not leave a child writing into the index, or a worker writing
into the index's cache directory after the next run has cleared it; a helper that dies (the OOM
killer) must not leave ``acms index`` waiting for its result; a script that calls acms again inside a
helper (no ``__main__`` guard) must be told so, not wait for its parent's lock.

- A child the indexing process starts itself asks the kernel for SIGKILL when its parent dies
  (``PR_SET_PDEATHSIG``, Linux; elsewhere nothing): ``die_with_parent``.
- A pool worker started through multiprocessing's forkserver has the forkserver as its parent, and
  the forkserver outlives the process that started it as long as one of its workers runs (each holds
  the end of the pipe whose closing would stop it). A long task would run on, so the worker watches
  the starting process itself: ``die_with(pid)`` (a thread waiting on the process's pidfd on Linux,
  polling elsewhere), from ``helper_start``, every pool's initializer.
- Every pool is a ``concurrent.futures`` one, which breaks when a helper dies; ``helper_result`` turns
  that into a ``StoreError``. ``starting_helper`` tells a session it is being opened by the script's
  re-run inside a helper that is starting.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, TypeVar

from acms.errors import StoreError

if TYPE_CHECKING:  # imported where used: the read path opens sessions (``starting_helper``) and starts no helper
    from concurrent.futures import Future
    from multiprocessing.context import BaseContext

T = TypeVar("T")

__all__ = ["die_with", "die_with_parent", "helper_result", "helper_start", "pool_context", "starting_helper"]


def pool_context() -> BaseContext:
    """Where acms' worker pools start their processes: the forkserver (fork is unsafe beside the store's
    threads), spawn where there is none. Each pool's initializer is ``helper_start``."""
    import multiprocessing

    return multiprocessing.get_context("forkserver" if sys.platform != "win32" else "spawn")


def starting_helper() -> bool:
    """Whether this process is a helper multiprocessing is starting, running the parent's ``__main__``
    script again before its task (spawn and the forkserver do this on every platform for a script run by
    path): an acms call made there is the parent's own, repeated by a script without an
    ``if __name__ == "__main__":`` guard. It would wait for the index lock its parent holds, for good."""
    process = sys.modules.get("multiprocessing.process")  # a helper being started has imported it
    return process is not None and bool(getattr(process.current_process(), "_inheriting", False))


def die_with_parent() -> None:
    """Linux: the kernel sends this process SIGKILL when its parent dies; elsewhere nothing."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)  # the loaded C library's symbols (find_library runs ldconfig)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def helper_start(owner: int) -> None:
    """What every pool's helper does first: end with ``owner`` (``die_with``), and collect cycles rarely,
    as the index process does (``memory.collecting_rarely``): a helper's texts, ASTs and triples are freed
    by reference counting, and at CPython's default thresholds the collector took ~9 % of an extraction
    worker's CPU for nothing (docs/DESIGN.md)."""
    import gc

    from acms.memory import RARE_THRESHOLDS

    die_with(owner)
    gc.set_threshold(*RARE_THRESHOLDS)


def die_with(pid: int) -> None:
    """End this process at once when process ``pid`` ends (or has already ended)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(1)
    except (AttributeError, OSError):  # no pidfd here: poll
        threading.Thread(target=_poll, args=(pid,), daemon=True, name="acms-die-with").start()
        return
    threading.Thread(target=_wait, args=(fd,), daemon=True, name="acms-die-with").start()


def _wait(fd: int) -> None:
    select.select([fd], [], [])  # readable once the process has ended
    os._exit(1)


def _poll(pid: int) -> None:
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:
            pass
        time.sleep(0.5)


def helper_result(future: Future[T], what: str) -> T:
    """``future.result()`` of a pool's helper; one that ended abruptly (killed, out of memory, unable to
    start) is a ``StoreError`` saying so, where the pool raised ``BrokenProcessPool``."""
    from concurrent.futures.process import BrokenProcessPool

    try:
        return future.result()
    except BrokenProcessPool:
        raise StoreError(f"{what} ended abruptly (killed, out of memory, or unable to start: its own error, if "
                         "any, is printed above); the index is as it was before this run") from None
