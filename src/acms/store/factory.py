"""The one place that chooses and opens a concrete store: the embedded Oxigraph index or a project in
a remote SPARQL engine. Everything above ``acms.store`` gets a ``GraphStore`` from here and asks it for
capabilities (:mod:`acms.store.protocol`), so a backend can change without its callers changing.
"""

from __future__ import annotations

from pathlib import Path

from acms.store.layout import IndexLayout
from acms.store.lock import DEFAULT_WAIT
from acms.store.oxigraph import OxigraphStore, open_handle
from acms.store.protocol import GraphStore
from acms.store.remote import RemoteStore, RemoteTarget

__all__ = ["open_lent", "open_store"]


def open_store(layout: IndexLayout, *, read_only: bool, create: bool = False, wait: float = DEFAULT_WAIT,
               command: str = "", remote: RemoteTarget | None = None) -> GraphStore:
    """The project's index, held (with its lock, for an embedded one) until ``close``.

    ``remote``: the project in a SPARQL engine (``layout`` then holds only the local caches).
    ``create``: a writer may start a new index (``acms index``); otherwise a missing index is
    ``StoreMissing``."""
    if remote is not None:
        return RemoteStore.open(remote, read_only=read_only, command=command, create=create and not read_only)
    if create and not read_only:
        return OxigraphStore(layout.graph, wait=wait, command=command)
    return OxigraphStore.open_existing(layout.graph, read_only=read_only, wait=wait, command=command)


def open_lent(path: Path) -> GraphStore:
    """A writer on an index another process lent (``SupportsCheckpoint.lent``): that process holds the
    lock and the run's checkpoint, so this one takes neither; ``close`` flushes and lets the files go."""
    return OxigraphStore.attached(open_handle(path), path, read_only=False)
