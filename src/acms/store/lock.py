"""Many readers, one writer: an acms-level lock around every handle on an index's store.

Oxigraph lets one process open a store for writing; ``Store.read_only`` handles may be opened by
any number of processes, but reading one while another process writes is undefined behaviour
upstream. So acms never lets the two overlap:

- ``<index>/lock`` is ``flock``-ed **shared** by every process that reads (one lock per process,
  counted across its threads) and **exclusive** by the one that writes. A reader opens the store
  read-only only while it holds the shared lock; a writer opens it read-write only while it holds
  the exclusive lock. flock locks die with their process, so a ``kill -9`` never leaves a stale lock.
- A waiting writer is not starved by a stream of short readers: it drops ``<index>/writer-waiting``,
  and readers that arrive later wait for it (up to their own timeout) before taking their share.
- Every writer bumps ``<index>/generation`` when it lets go. A long-lived reader (``acms serve``)
  keeps its read-only handle between requests without holding the lock, and reopens it before the
  next read when the generation changed, so it never reads through a handle that was open while a
  writer wrote.
- Both sides wait up to ``wait`` seconds (``--wait``, ``ACMS_LOCK_WAIT``, default 60) and then fail
  with ``StoreLocked`` naming the process that holds the index.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from acms.errors import StoreLocked, StoreReadOnly

__all__ = ["DEFAULT_WAIT", "IndexLock", "lock_for"]

DEFAULT_WAIT = 60.0
_POLL = 0.05
_LOCK, _WAITING, _GENERATION, _HOLDER = "lock", "writer-waiting", "generation", "writer.json"
_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}


class IndexLock:
    """The cross-process reader/writer lock of one index directory (one instance per process)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._mutex = threading.Condition()
        self._readers = 0  # threads of this process holding the shared lock
        self._writing = False
        self._fd: int | None = None
        self.read_only = False  # the index directory cannot be written (see ``_open``)

    # -- files ----------------------------------------------------------------------------------
    def _open(self) -> int:
        if self._fd is None:
            try:
                self.root.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.root / _LOCK, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                if exc.errno not in _READ_ONLY or not self.root.is_dir():
                    raise
                # A read-only index (a shared mount, chmod a-w): flock needs no write access, so readers
                # lock the lock file opened for reading (or the directory, when there is none); no
                # writer can take the index from under them, since no one can write there.
                self.read_only = True
                lock = self.root / _LOCK
                self._fd = os.open(lock if lock.exists() else self.root, os.O_RDONLY)
        return self._fd

    def generation(self) -> str:
        try:
            return (self.root / _GENERATION).read_text(encoding="utf-8")
        except OSError:
            return ""

    def _holder(self) -> str:
        try:
            data = json.loads((self.root / _HOLDER).read_text(encoding="utf-8"))
            return f" (pid {data['pid']}: {data['command']})"
        except (OSError, ValueError, KeyError, TypeError):
            return ""

    def _locked(self, what: str, wait: float) -> StoreLocked:
        return StoreLocked(f"the index at {self.root} is {what}{self._holder()}; waited {wait:g} s "
                           "(wait longer with --wait SECONDS or ACMS_LOCK_WAIT)")

    def _flock(self, mode: int, deadline: float, what: str, wait: float, *, yield_to_writer: bool) -> None:
        fd = self._open()
        while True:
            waiting = yield_to_writer and _writer_waiting(self.root / _WAITING)
            if not waiting:
                try:
                    fcntl.flock(fd, mode | fcntl.LOCK_NB)
                    return
                except BlockingIOError:
                    pass
            if time.monotonic() >= deadline:
                raise self._locked(what, wait)
            time.sleep(_POLL)

    # -- readers --------------------------------------------------------------------------------
    @contextmanager
    def shared(self, wait: float = DEFAULT_WAIT) -> Iterator[None]:
        deadline = time.monotonic() + wait
        with self._mutex:
            while self._writing:
                if not self._mutex.wait(timeout=max(0.0, deadline - time.monotonic())):
                    raise self._locked("being written by this process", wait)
            if self._readers == 0:
                self._flock(fcntl.LOCK_SH, deadline, "being written by another acms process", wait,
                            yield_to_writer=True)
            self._readers += 1
        try:
            yield
        finally:
            with self._mutex:
                self._readers -= 1
                if self._readers == 0:
                    fcntl.flock(self._open(), fcntl.LOCK_UN)
                self._mutex.notify_all()

    # -- the writer -----------------------------------------------------------------------------
    @contextmanager
    def exclusive(self, wait: float = DEFAULT_WAIT, command: str = "") -> Iterator[None]:
        deadline = time.monotonic() + wait
        waiting = self.root / _WAITING
        with self._mutex:
            while self._writing or self._readers:
                if not self._mutex.wait(timeout=max(0.0, deadline - time.monotonic())):
                    raise self._locked("in use by this process", wait)
            self._writing = True
        try:
            self._open()
            if self.read_only or not os.access(self.root, os.W_OK):
                raise StoreReadOnly(f"the index at {self.root} is read-only: reading works, writing it "
                                    "(acms index, a refresh, ontology add) needs write access to it")
            try:
                waiting.write_text(str(os.getpid()), encoding="utf-8")
            except OSError:
                waiting.unlink(missing_ok=True)  # half-written (a full disk): it would hold readers back
                raise
            try:
                self._flock(fcntl.LOCK_EX, deadline, "in use by another acms process", wait, yield_to_writer=False)
            finally:
                waiting.unlink(missing_ok=True)
            _write_atomic(self.root / _HOLDER, json.dumps({"pid": os.getpid(), "command": command or "acms"}))
            try:
                yield
            finally:
                (self.root / _HOLDER).unlink(missing_ok=True)
                _write_atomic(self.root / _GENERATION, uuid.uuid4().hex)
                fcntl.flock(self._open(), fcntl.LOCK_UN)
        finally:
            with self._mutex:
                self._writing = False
                self._mutex.notify_all()


def _writer_waiting(flag: Path) -> bool:
    """A live writer is waiting; a flag left by a killed one is removed."""
    try:
        pid = int(flag.read_text(encoding="utf-8") or 0)
    except (OSError, ValueError):
        return False
    if pid <= 0:  # empty: its writer died writing it (os.kill(0, 0) would signal our own group)
        with contextlib.suppress(OSError):
            flag.unlink(missing_ok=True)
        return False
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        flag.unlink(missing_ok=True)
        return False
    except PermissionError:
        return True


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


_LOCKS: dict[Path, IndexLock] = {}
_LOCKS_MUTEX = threading.Lock()


def lock_for(root: Path) -> IndexLock:
    """The process's one lock object for an index directory (flock is per open file, so one fd)."""
    key = Path(os.path.realpath(root))
    with _LOCKS_MUTEX:
        if key not in _LOCKS:
            _LOCKS[key] = IndexLock(key)
        return _LOCKS[key]
