"""The live refresh: the one-batch write fed with a look at the files (:mod:`acms.service.freshness`).

A look has already listed the project, stat-ed every file and hashed the ones whose size or mtime
moved; the run takes its listing (the orchestrator's listing phase) and does not read again the files
it found unchanged, when the graph still holds the hash the look saw. Everything else is the one
batch's: one transaction inside the run's ``store.atomic()``, relinking the unchanged files that
mention a name the run adds, removes or moves, so a refresh makes what a first index would.
"""

from __future__ import annotations

from collections.abc import Mapping

from acms.ontology.versioning import Migration
from acms.service.freshness import Staleness
from acms.service.indexing.batch import OneBatch, StoredFiles
from acms.store.protocol import GraphStore

__all__ = ["LiveRefresh"]


class LiveRefresh(OneBatch):
    """The write mode of a run that follows a look (``Index.refresh``, and ``Index.index`` once a run
    left its manifest)."""

    def __init__(self, looked: Staleness, migration: Migration) -> None:
        super().__init__(migration)
        self.looked = looked

    def stored(self, store: GraphStore) -> StoredFiles:
        """The look's unchanged files with the hashes it found (the graph's: a run's manifest records only
        the hashes of files the graph holds, and a look against an untrusted one takes the graph's), and only
        the files it found changed, added or removed read from the graph."""
        looked = self.looked
        return StoredFiles(store, looked.unchanged, [*looked.changed, *looked.added, *looked.removed])

    def trusted(self, known: Mapping[str, str] | None) -> dict[str, str] | None:
        """The files the look found unchanged whose hash the graph holds as the look saw it."""
        if known is None:  # every file is redone
            return None
        return {path: digest for path, digest in self.looked.unchanged.items() if known.get(path) == digest}
