"""Read and write access for a long-lived process (``acms serve``) that shares an index with others.

A command opens the store once and closes it when it ends (``OxigraphStore``, which holds the lock
for its lifetime). A server cannot hold the lock for its lifetime, or no ``acms index`` could ever
run beside it. ``IndexAccess`` takes the lock per unit of work instead:

- ``read()``: the shared lock for as long as the work runs (a query abandoned at its timeout keeps it
  until pyoxigraph finishes), and a read-only handle that is kept between units of work and reopened
  when a writer has changed the index since (the lock's generation), so it never reads through a
  handle that was open across someone else's write;
- ``write()``: the exclusive lock and a read-write handle for one update, closed at once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyoxigraph as ox

from acms.errors import StoreMissing
from acms.store import run_marker
from acms.store.lock import DEFAULT_WAIT, lock_for
from acms.store.oxigraph import OxigraphStore, open_handle, require_index

__all__ = ["IndexAccess"]


class IndexAccess:
    def __init__(self, graph_dir: Path, *, wait: float = DEFAULT_WAIT, command: str = "acms serve") -> None:
        if not graph_dir.is_dir() or not any(graph_dir.iterdir()):
            raise StoreMissing(f"no index at {graph_dir}: run `acms index` first")
        self.path = graph_dir
        self.wait = wait
        self.command = command
        self.lock = lock_for(graph_dir.parent)
        self._mutex = threading.Lock()
        self._raw: ox.Store | None = None
        self._store: OxigraphStore | None = None
        self._generation: str | None = None

    @contextmanager
    def read(self, wait: float | None = None) -> Iterator[OxigraphStore]:
        with self.lock.shared(self.wait if wait is None else wait):
            with self._mutex:
                generation = self.lock.generation()
                if self._store is None or generation != self._generation:
                    # No reader of this process is inside: a writer had the index in between.
                    opened = run_marker.readable(self.path)
                    raw = open_handle(opened, read_only=True)
                    require_index(raw, self.path)
                    self._raw = raw
                    self._store = OxigraphStore.attached(self._raw, self.path, opened=opened)
                    self._generation = generation
                store = self._store
            yield store

    @contextmanager
    def write(self, wait: float | None = None) -> Iterator[OxigraphStore]:
        store = OxigraphStore(self.path, wait=self.wait if wait is None else wait, command=self.command)
        try:
            yield store
        finally:
            store.close()

    def generation(self) -> str | None:
        """The generation of the handle ``read`` last opened (changes after every write)."""
        return self._generation
