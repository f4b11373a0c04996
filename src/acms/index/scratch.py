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
another PID namespace. What an older acms left (no lock beside it) goes once it is an hour old.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from acms.removal import remove, remove_aside

__all__ = ["LOCK_SUFFIX", "OLD_SUFFIX", "Scratch", "atomic_directory", "sweep"]

LOCK_SUFFIX = ".lock"
OLD_SUFFIX = ".old"  # the cache a swap moved aside, until it is removed
_TMP = ".tmp-"
_LOCKING = ".locking"  # a lock file being made (``_locked_file``)


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
        self._lock: BinaryIO | None
        self._lock, self._lock_path = _locked_file(parent, f".{name}{_TMP}")
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
                remove_aside(old, then=self._release)  # locked until it is gone: a sweep leaves it be
                return
        except BaseException:
            self.discard()
            raise
        self._release()

    def discard(self) -> None:
        remove(self.path)
        self._release()

    def _release(self) -> None:
        if self._lock is not None:
            self._lock_path.unlink(missing_ok=True)  # while still locked: a sweep never removes a live one
            self._lock.close()
            self._lock = None


def _locked_file(parent: Path, prefix: str) -> tuple[BinaryIO, Path]:
    """A new lock file under its ``.lock`` name, already locked by this process.

    It is made and locked under another name (``.locking``) and only then linked to its ``.lock`` name:
    a lock file created and locked in two steps was seen unlocked by a sweep between them (four searches
    rebuilding caches at once), which removed it, and the directory built beside it was left unowned
    when its builder was killed. A sweep that removes the ``.locking`` file first makes this try again.
    """
    while True:
        fd, staged = tempfile.mkstemp(dir=parent, prefix=prefix, suffix=_LOCKING)
        handle = os.fdopen(fd, "r+b")  # closed when collected: the lock goes with it
        fcntl.flock(fd, fcntl.LOCK_EX)
        lock = Path(staged[: -len(_LOCKING)] + LOCK_SUFFIX)
        try:
            os.link(staged, lock)  # never over an existing name
        except (FileNotFoundError, FileExistsError):  # swept before it was locked; a name taken
            handle.close()
            Path(staged).unlink(missing_ok=True)
            continue
        Path(staged).unlink(missing_ok=True)
        return handle, lock


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
    for staged in directory.glob(f".*{_TMP}*{_LOCKING}"):  # a builder killed between making and naming its lock
        _remove_unlocked(staged, [])
    for lock in directory.glob(f".*{_TMP}*{LOCK_SUFFIX}"):
        stem = lock.with_name(lock.name[: -len(LOCK_SUFFIX)])
        removed += _remove_unlocked(lock, [stem, stem.with_name(stem.name + OLD_SUFFIX)])
    return removed + _sweep_legacy(directory)


# What an acms without build locks left when killed while it built a cache: scratch directories without a
# lock (``.vectors-*``, ``.<name>.tmp-*``) and the cache a swap had moved aside (``vectors.old``,
# ``.<name>.old-*``). Nothing tells whether such a builder is alive, but none runs for an hour, and this
# acms never makes these names (its own scratch directory always has its lock beside it).
LEGACY_AGE = 3600.0  # seconds since the entry last changed
_LEGACY = (".vectors-*", "*.old", ".*.old-*", f".*{_TMP}*")


def _sweep_legacy(directory: Path) -> list[Path]:
    removed: list[Path] = []
    now = time.time()
    for path in {p for pattern in _LEGACY for p in directory.glob(pattern)}:
        name = path.name
        if name.endswith((LOCK_SUFFIX, _LOCKING)):
            continue  # the lock sweep's
        if _TMP in name:  # this acms's names too: left alone while their lock is there
            stem = name.removesuffix(OLD_SUFFIX)
            if path.with_name(stem + LOCK_SUFFIX).exists():
                continue
        try:
            age = now - path.lstat().st_mtime
        except FileNotFoundError:
            continue
        if age >= LEGACY_AGE:
            remove(path)
            removed.append(path)
    return removed


def _remove_unlocked(lock: Path, paths: list[Path]) -> list[Path]:
    """Remove ``paths``, then ``lock``, when no process holds ``lock``; what was removed."""
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return []  # gone meanwhile (released), or not ours
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return []  # its builder is at work
        try:
            if os.stat(lock).st_ino != os.fstat(fd).st_ino:
                return []  # released and made again under the same name meanwhile
        except FileNotFoundError:
            return []  # released meanwhile: the directory became a cache
        gone = [path for path in paths if path.exists() or path.is_symlink()]
        for path in gone:
            remove(path)
        lock.unlink(missing_ok=True)
        return gone
    finally:
        os.close(fd)
