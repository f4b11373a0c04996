"""Store sessions: which store, opened how, with which lock, for how long.

Three modes (``Mode``):

- ``write``: the one writer; the index's exclusive lock for the session's lifetime (``acms index``,
  ``acms ontology add``, ``Index.open`` by default);
- ``read``: a reader beside any number of others; the shared lock for the session's lifetime (one
  CLI command);
- ``shared``: a long-lived process (``acms serve``, the MCP server) that must let ``acms index`` run
  beside it: the shared lock per unit of work, the exclusive lock per write (see
  :class:`acms.store.access.IndexAccess`).

``reading()`` / ``writing()`` give a ``GraphStore`` for one unit of work in every mode, and
``generation()`` changes whenever the index may have changed, so derived state (a Searcher and its
caches) can be kept between units and rebuilt after a write. An interrupted index run is rolled back
where the store is opened (:mod:`acms.store.run_marker`), so a session never sees half a run.

A remote store (``remote``: a project in a SPARQL 1.1 engine, :mod:`acms.store.remote`) has no lock to
take: one store serves every mode; a shared session reads the project's generation at the start of
each unit of work (one small query, ``SupportsGeneration``), and an index run lands as one request.
Which store is opened, and how, is :func:`acms.store.factory.open_store`'s choice.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum

from acms.errors import StoreLocked, UsageError
from acms.lifetime import starting_helper
from acms.store.access import IndexAccess
from acms.store.factory import open_store
from acms.store.layout import IndexLayout
from acms.store.lock import DEFAULT_WAIT
from acms.store.protocol import GraphStore, SupportsGeneration
from acms.store.remote import RemoteTarget
from acms.store import usage

__all__ = ["Mode", "RemoteTarget", "Session", "open_session"]


class Mode(str, Enum):
    READ = "read"
    WRITE = "write"
    SHARED = "shared"


class Session:
    """One index's store for one client, in one ``Mode``."""

    def __init__(self, layout: IndexLayout, mode: Mode, *, wait: float = DEFAULT_WAIT, command: str = "",
                 create: bool = False, remote: RemoteTarget | None = None) -> None:
        self.layout, self.mode, self.wait, self.remote = layout, mode, wait, remote
        self._writes = 0
        self._count = threading.Lock()
        self._writer = threading.RLock()  # one write at a time among this process's threads (a watcher's refresh, a read's)
        self._access: IndexAccess | None = None
        self._store: GraphStore | None = None
        if remote is None and mode is Mode.SHARED:
            self._access = IndexAccess(layout.graph, wait=wait, command=command or "acms serve")
        else:
            self._store = open_store(layout, read_only=mode is Mode.READ, create=create and mode is Mode.WRITE,
                                     wait=wait, command=command, remote=remote)
            if remote is not None and mode is not Mode.READ:
                usage.fold(self._store, layout.root)  # the uses this machine's readers logged

    @property
    def writable(self) -> bool:
        """True when writes go straight into the store (a reader logs usage instead, see store.usage)."""
        return self.mode is Mode.WRITE

    @property
    def store(self) -> GraphStore:
        """The store held for the session's lifetime (``read`` / ``write`` sessions, and any remote one)."""
        if self._store is None:
            raise UsageError("a shared session holds no store between units of work: use reading()")
        return self._store

    @contextmanager
    def reading(self, wait: float | None = None) -> Iterator[GraphStore]:
        if self._access is not None:
            with self._access.read(wait) as store:
                yield store
        else:
            if self.remote is not None and self.mode is Mode.SHARED:
                self._remote().refresh()  # another process may have written since the last unit of work
            yield self.store

    @contextmanager
    def writing(self, wait: float | None = None) -> Iterator[GraphStore]:
        if self.mode is Mode.READ:
            raise UsageError("this index was opened read-only")
        if self._access is None and not self._writer.acquire(timeout=self.wait if wait is None else wait):
            raise StoreLocked("another write to this index is still running in this process")
        self._bump()
        try:
            if self._access is not None:
                with self._access.write(wait) as store:
                    yield store
            else:
                yield self.store
        finally:
            self._bump()  # after the write as well: state derived during it is stale too
            if self._access is None:
                self._writer.release()

    def _bump(self) -> None:
        with self._count:
            self._writes += 1

    def settle(self, wait: float = 5.0) -> None:
        """After a write another process may have left half-announced (a worker killed at its deadline):
        take the exclusive lock once, so the generation moves and every reader reopens its handle."""
        if self._access is not None:
            with self._access.lock.exclusive(wait=wait, command=self._access.command):
                pass
        self._bump()

    def generation(self) -> tuple[str | None, int]:
        """Changes after every write (this session's, or another process's for a shared session)."""
        if self.remote is not None:
            return self._remote().generation, self._writes
        return (self._access.generation() if self._access is not None else None), self._writes

    def _remote(self) -> SupportsGeneration:
        assert isinstance(self._store, SupportsGeneration)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


def open_session(layout: IndexLayout, mode: Mode | str = Mode.READ, *, wait: float = DEFAULT_WAIT,
                 command: str = "", create: bool = False, remote: RemoteTarget | None = None) -> Session:
    """``create``: a ``write`` session may start a new index (``acms index``); otherwise a missing
    index is ``StoreMissing``. ``remote``: the project in a SPARQL engine (``layout`` then holds only
    the local caches)."""
    if starting_helper():  # a clear error, not a wait for the lock the parent holds (``lifetime.starting_helper``)
        raise UsageError(
            "acms was called again while one of its helper processes started: Python runs the calling "
            "script again in every process it starts this way, so a script that uses acms must call it "
            'under `if __name__ == "__main__":`')
    return Session(layout, Mode(mode), wait=wait, command=command, create=create, remote=remote)
