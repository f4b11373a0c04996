"""An index run lands whole or not at all: a checkpoint, a pending-run marker, and readers that honour it.

An index run makes several writes (the files' transaction, history, tiers, the secrets policy,
vectors). Oxigraph makes each one atomic, not their sequence, so the run is bracketed:

1. ``begin`` (the writer holds the exclusive lock): the store is flushed and backed up into
   ``<index>/graph.before-run`` (a RocksDB checkpoint: hard links, not a copy), renamed into place
   complete, and only then is ``<index>/run-pending`` written.
2. The run writes into ``graph/`` as usual.
3. ``commit``: the store is flushed, ``run-pending`` removed (the run has landed), then the
   checkpoint deleted.

While ``run-pending`` exists, ``graph/`` may hold half a run. A reader only opens the store under
the shared lock, when no writer is at work, so a marker it sees belongs to a run that failed or was
killed: it opens the checkpoint instead (``readable``). The next writer, under the exclusive lock,
puts the checkpoint back in place of ``graph/`` before it opens the store (``recover``); a writer
that fails with an exception rolls back at once the same way. Every step is a rename or an unlink,
so a crash between two steps leaves a state the next ``recover`` handles.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from pathlib import Path

import pyoxigraph as ox

from acms.errors import StoreError
from acms.removal import remove, remove_aside

__all__ = ["begin", "checkpoint_of", "commit", "pending", "readable", "recover"]

_MARKER, _CHECKPOINT = "run-pending", "graph.before-run"
_LANDED = ".landed-"  # a landed run's checkpoint, renamed aside to be removed


def checkpoint_of(graph: Path) -> Path:
    return graph.parent / _CHECKPOINT


def _marker(graph: Path) -> Path:
    return graph.parent / _MARKER


def pending(graph: Path) -> bool:
    """A run began on this index and has not landed (it failed, or it is still running)."""
    return _marker(graph).exists()


def readable(graph: Path) -> Path:
    """The directory a reader opens (call with the shared lock held): the last complete index."""
    checkpoint = checkpoint_of(graph)
    return checkpoint if pending(graph) and checkpoint.is_dir() else graph


def _sync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def recover(graph: Path) -> bool:
    """Put the last complete index back (call with the exclusive lock held, the store closed);
    True when a run that had not landed was rolled back."""
    checkpoint, marker = checkpoint_of(graph), _marker(graph)
    try:
        if marker.exists():
            if checkpoint.is_dir():
                shutil.rmtree(graph, ignore_errors=True)
                os.replace(checkpoint, graph)
            marker.unlink()
            _sync_dir(graph.parent)
            return True
        if checkpoint.exists():  # a run that landed, killed before it deleted its checkpoint
            shutil.rmtree(checkpoint)
        _remove_landed(graph)
    except OSError as exc:
        raise StoreError(f"cannot roll back the unfinished index run in {graph.parent}: {exc}") from None
    return False


def begin(handle: ox.Store, graph: Path, command: str = "") -> None:
    """Checkpoint the store, then mark the run pending (call with the exclusive lock held)."""
    checkpoint = checkpoint_of(graph)
    staging = checkpoint.with_name(checkpoint.name + ".tmp")
    if pending(graph):  # a failed roll-back in this process: only a reopen (``recover``) may go on
        raise StoreError(f"an unfinished index run in {graph.parent} was not rolled back; run the command again")
    try:
        shutil.rmtree(checkpoint, ignore_errors=True)  # a landed run's, if deleting it failed
        shutil.rmtree(staging, ignore_errors=True)
        handle.flush()
        handle.backup(str(staging))
        os.replace(staging, checkpoint)
        note = json.dumps({"pid": os.getpid(), "command": command, "started": time.time()})
        tmp = _marker(graph).with_suffix(".tmp")
        tmp.write_text(note, encoding="utf-8")
        os.replace(tmp, _marker(graph))
        _sync_dir(graph.parent)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise StoreError(f"cannot checkpoint the index before the run: {exc}") from None


def commit(handle: ox.Store, graph: Path) -> None:
    """The run has landed: drop the marker, then the checkpoint (renamed aside and removed in the
    background: its ~160 files cost a refresh ~15 ms; one left by a killed process goes at the next run)."""
    try:
        handle.flush()
        _marker(graph).unlink()
        _sync_dir(graph.parent)
    except OSError as exc:
        raise StoreError(f"cannot finish the index run: {exc}") from None
    checkpoint = checkpoint_of(graph)
    aside = checkpoint.with_name(f"{checkpoint.name}{_LANDED}{uuid.uuid4().hex}")
    try:
        os.replace(checkpoint, aside)
    except OSError:
        shutil.rmtree(checkpoint, ignore_errors=True)
        return
    remove_aside(aside)


def _remove_landed(graph: Path) -> None:
    """What landed runs' checkpoints a killed process left (``commit``)."""
    for left in graph.parent.glob(f"{_CHECKPOINT}{_LANDED}*"):
        remove(left)
