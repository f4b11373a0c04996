"""Scratch directories for building a derived cache, which a killed process cannot leave for good.

A cache (keyword postings, the ranking index, the vector matrix, an LSA model) is built in a
temporary directory beside it and renamed into place. Readers rebuild caches too, so a process that
finds such a directory cannot tell whether its builder is still at work, and a ``kill -9`` left them
behind forever (a standard library's vector rows: ~56 MB each time).

Each scratch directory now has a lock file beside it (``<name>.lock``), created before the directory
and held locked (``flock``) by its builder until the directory is renamed into place. The kernel
drops the lock when its holder dies, however it dies, so :func:`sweep` removes exactly the scratch
directories (and the cache a two-rename swap had moved aside) whose builder is gone, whoever calls it,
beside any number of live builders. No process id is compared: none can be reused or belong to
another PID namespace.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

__all__ = ["LOCK_SUFFIX", "OLD_SUFFIX", "Scratch", "atomic_directory", "sweep"]

LOCK_SUFFIX = ".lock"
OLD_SUFFIX = ".old"  # the cache a swap moved aside, until it is removed
_TMP = ".tmp-"


class Scratch:
    """An empty directory in ``parent`` to build the cache ``name`` in (``.<name>.tmp-<random>``), owned
    while this object lives.

    ``swap_into(target)`` makes it ``target``; ``discard()`` removes it. Either releases the lock; an
    object dropped without either releases it when collected, and the next :func:`sweep` (the next
    scratch directory made beside it, the next cache loaded beside it, or the next ``acms index``)
    removes it.
    """

    def __init__(self, parent: Path, name: str) -> None:
        parent.mkdir(parents=True, exist_ok=True)
        sweep(parent)  # a builder first removes what dead builders left beside it
        fd, lock = tempfile.mkstemp(dir=parent, prefix=f".{name}{_TMP}", suffix=LOCK_SUFFIX)
        self._lock: BinaryIO | None = os.fdopen(fd, "r+b")  # closed when collected: the lock goes with it
        fcntl.flock(fd, fcntl.LOCK_EX)
        self._lock_path = Path(lock)
        self.path = self._lock_path.with_name(self._lock_path.name[: -len(LOCK_SUFFIX)])
        try:
            self.path.mkdir()
        except BaseException:
            self._release()
            raise

    def swap_into(self, target: Path) -> None:
        """Rename the directory to ``target``: a reader sees the old cache or the new one, never a half.

        Replacing an existing non-empty directory takes two renames (old aside, new in); a reader arriving
        between them finds nothing and treats the cache as missing. Files are not fsynced: these are
        derived caches, which a power loss may force us to rebuild. On failure ``target`` is as it was.
        """
        old = self.path.with_name(self.path.name + OLD_SUFFIX)
        try:
            try:
                os.replace(self.path, target)  # target absent (or an empty directory)
            except OSError:
                os.replace(target, old)
                try:
                    os.replace(self.path, target)
                except OSError:
                    os.replace(old, target)  # put the previous version back
                    raise
                _remove(old)
        except BaseException:
            self.discard()
            raise
        self._release()

    def discard(self) -> None:
        _remove(self.path)
        self._release()

    def _release(self) -> None:
        if self._lock is not None:
            self._lock_path.unlink(missing_ok=True)  # while still locked: a sweep never removes a live one
            self._lock.close()
            self._lock = None


@contextmanager
def atomic_directory(target: Path) -> Iterator[Path]:
    """Yield an empty scratch directory beside ``target``; on success it becomes ``target``
    (:meth:`Scratch.swap_into`); on error it is removed and ``target`` is untouched."""
    target = Path(target)
    scratch = Scratch(target.parent, target.name)
    try:
        yield scratch.path
    except BaseException:
        scratch.discard()
        raise
    scratch.swap_into(target)


def sweep(directory: Path) -> list[Path]:
    """Remove the scratch directories in ``directory`` whose builder is gone (its lock is free): what a
    killed process left. Safe beside live builders, in any process. Returns what was removed."""
    removed: list[Path] = []
    if not directory.is_dir():
        return removed
    for lock in directory.glob(f".*{_TMP}*{LOCK_SUFFIX}"):
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            continue  # gone meanwhile (released), or not ours
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its builder is at work
            try:
                if os.stat(lock).st_ino != os.fstat(fd).st_ino:
                    continue  # released and made again under the same name meanwhile
            except FileNotFoundError:
                continue  # released meanwhile: the directory became a cache
            stem = lock.with_name(lock.name[: -len(LOCK_SUFFIX)])
            for path in (stem, stem.with_name(stem.name + OLD_SUFFIX)):
                if path.exists() or path.is_symlink():
                    _remove(path)
                    removed.append(path)
            lock.unlink(missing_ok=True)
        finally:
            os.close(fd)
    return removed


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
