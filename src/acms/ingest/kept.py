"""What a long-lived process keeps of a project's unchanged files from one index run to the next.

``acms mcp``, ``acms serve`` and ``acms watch`` refresh after every save, and each refresh read and
parsed again the same unchanged files: the modules a saved file's links pass through
(:mod:`acms.ingest.unchanged_modules`), the texts relinking scans for a moved name
(:mod:`acms.ingest.relink`). A value is kept under the file's name on disk, size and mtime as listed,
so a file that changed is a new key; least recently used first out past a budget. A file whose mtime is
within the racy window of now is not kept: an edit within the clock's tick could keep size and mtime.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from acms.ingest.walker import RACY_NS, ListedFile

__all__ = ["MISSING", "ByFileVersion"]

V = TypeVar("V")
D = TypeVar("D")
MISSING = object()  # a ``get`` default that no kept value is


class ByFileVersion(Generic[V]):
    """Values by file version, ``budget`` in all by ``weight`` (default: one a value); thread-safe."""

    def __init__(self, budget: int, weight: Callable[[V], int] = lambda _: 1) -> None:
        self.budget, self._weight = budget, weight
        self._kept: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._used = 0
        self._lock = threading.Lock()

    @staticmethod
    def key(listed: ListedFile, *more: Hashable) -> tuple[Hashable, ...]:
        """The file's version as listed (name on disk, size, mtime), and ``more`` (what else the value
        depends on)."""
        return (os.fspath(listed.abs_path), listed.size, listed.mtime_ns, *more)

    def get(self, key: Hashable, default: D) -> V | D:
        """The value kept under ``key``, else ``default`` (``MISSING`` where a kept value may be None)."""
        with self._lock:
            found = self._kept.get(key)
            if found is None:
                return default
            self._kept.move_to_end(key)
            return found[0]

    def keep(self, key: Hashable, value: V, listed: ListedFile, read_size: int) -> None:
        """Keep ``value``, read from ``listed`` (``read_size`` bytes), unless the file may still change
        unseen (racy, or not the size listed) or the value alone would take an eighth of the budget."""
        if not listed.mtime_ns or listed.mtime_ns >= time.time_ns() - RACY_NS or read_size != listed.size:
            return
        weight = self._weight(value)
        if weight > self.budget // 8:
            return
        with self._lock:
            if key in self._kept:
                return
            self._kept[key] = (value, weight)
            self._used += weight
            while self._used > self.budget:
                _, (_, gone) = self._kept.popitem(last=False)
                self._used -= gone
