"""The index run: the ontology, the listing, the files' write in one of the write modes, then the
phases after the files; the orchestrator (``IndexRun``) is the run context that chooses the mode.

A run lands whole or not at all. Everything it writes happens inside ``store.atomic()``: the embedded
store takes a checkpoint of the index first and a pending-run marker that readers honour (they read
the checkpoint while it exists), and the next writer puts the checkpoint back (see
:mod:`acms.store.run_marker`). So a crash or an error in any phase, ``kill -9`` included, leaves the
previous complete index, for readers at once and for the store itself at the next write. The
manifest of the files read (what the next look compares with) is left only after the run landed.

The write modes (:class:`acms.service.indexing.context.WriteMode`), chosen in ``IndexRun._mode``:

- :class:`~acms.service.indexing.batch.OneBatch`: an incremental run, as ONE transaction;
- :class:`~acms.service.indexing.refresh.LiveRefresh`: the same, fed with a look at the files;
- :class:`~acms.service.indexing.stream.StreamedFirstIndex`: a first index, group by group;
- :class:`~acms.service.indexing.child.ChildProcess`: a large first index, streamed in a child process;
- :class:`~acms.service.indexing.reindex.Reindex`: every file of an existing index redone, streamed.

The phases after the files are :class:`~acms.service.indexing.after_files.AfterFiles`.
"""

from __future__ import annotations

import time
from pathlib import Path

from acms.config import Settings
from acms.errors import StoreError
from acms.index.scratch import sweep
from acms.ingest.pipeline import git_head
from acms.ingest.link_outlines import LinkOutlines
from acms.ingest.symbols import SymbolRows
from acms.ingest.version import extractor_version
from acms.ingest.walker import Listing, list_files
from acms.memory import available_bytes, collecting_rarely
from acms.ontology import extensions as ontology_extensions
from acms.ontology.versioning import Migration
from acms.ontology.versioning import plan as plan_migration
from acms.retrieval.corpus_spill import remove_spills
from acms.retrieval.embedding_store import prune_kept_models, remove_staged_models
from acms.retrieval.refit_ahead import RefitAhead
from acms.service.freshness import Staleness, last_run, manifest_after_run, stored_hashes, walk_settings
from acms.service.indexing.after_files import AfterFiles
from acms.service.indexing.batch import OneBatch
from acms.service.indexing.child import ChildProcess, separate
from acms.service.indexing.context import RunContext, WriteMode
from acms.service.indexing.refresh import LiveRefresh
from acms.service.indexing.reindex import Reindex
from acms.service.indexing.report import IndexReport
from acms.service.indexing.stream import StreamedFirstIndex
from acms.service.progress import Progress
from acms.sparql import catalog
from acms.store.layout import IndexLayout
from acms.store.protocol import GraphStore, SupportsCompaction

__all__ = ["BATCH_BYTES_PER_BYTE", "LIVE_BATCH_BYTES", "STREAM_SHARE", "IndexRun", "index_project", "stream_reason"]

# When a refresh is a streamed re-index instead of one batch: more than ``LIVE_BATCH_BYTES`` of changed
# source that is also ``STREAM_SHARE`` of the listed source or more. A batch holds its files' old and new
# quads at once; a re-index streams in bounded memory but redoes every file (about a first index). On the
# standard library (33.6 MB listed, a first index 35 s / 780 MB) a batch costs ~3.4 s + 1.74 s and ~96 MB
# per MB changed over ~430 MB: a 300-file branch switch (4.6 MB) 11 s / 870-920 MB, a formatter run over
# 1,500 files (25.3 MB) 52 s / 3.2 GB, which re-indexed took 35 s / 780 MB. At a third of the project a
# batch takes ~2/3 of the re-index's time and twice its memory; in a far larger project the same change
# stays a batch, a re-index there being many times slower.
# The same change is streamed in a larger project, too, when the batch would not fit: one holds ~96
# bytes per byte of changed source, and it is streamed when that is more than half the memory available.
LIVE_BATCH_BYTES = 6 << 20
STREAM_SHARE = 1 / 3
BATCH_BYTES_PER_BYTE = 96


class IndexRun(RunContext):
    """One run of ``acms index`` over one store (held for writing by the caller)."""

    def __init__(self, root: Path, store: GraphStore, settings: Settings, layout: IndexLayout | None = None, *,
                 history: int = 0, progress: Progress | None = None, looked: Staleness | None = None,
                 defer_refit: bool = False, refit_ahead: RefitAhead | None = None) -> None:
        """``looked``: a look at the files just before (:mod:`acms.service.freshness`, a live refresh):
        its listing is the run's and the files it found unchanged are not read again. ``defer_refit``: the
        run folds its fragments into the LSA model even when a refit falls due (``report.refit_due``).
        ``refit_ahead``: a refit made outside the lock for the graph as this run finds it, landed if it still is
        (:mod:`acms.retrieval.refit_ahead`)."""
        super().__init__(root, store, settings, layout, history=history, progress=progress)
        self.looked = looked
        self.defer_refit = defer_refit
        self.refit_ahead = refit_ahead
        self.rewrote_all = False  # a streamed re-index: the store is compacted after the run
        self._t0 = time.perf_counter()

    # -- the run ----------------------------------------------------------------------------------
    def run(self) -> IndexReport:
        if self.layout is not None:  # a spill, a staged model, a cache half built that a killed run left
            remove_spills(self.layout.cache)
            remove_staged_models(self.layout.cache)
            prune_kept_models(self.store, self.layout)
            sweep(self.layout.cache)
        try:
            with collecting_rarely(), self.store.atomic():
                self._files()
                self._after_files()
        finally:
            if self.corpus_spill is not None:
                remove_spills(self.corpus_spill.parent)
        if self.rewrote_all and isinstance(self.store, SupportsCompaction):
            with self.phase("compacting"):  # after the run landed: a failure here loses nothing
                try:
                    self.store.compact()
                except StoreError as exc:
                    self.report.warnings.append(f"{exc}; the index is whole, only its files stay uncompacted")
        self._leave_manifest()
        self.report.seconds = time.perf_counter() - self._t0
        return self.report

    def _leave_manifest(self) -> None:
        """What the next look at the files compares them with (written after the run landed: a run
        killed before leaves the previous manifest, whose state is then not the store's, so not trusted)."""
        if self.layout is None or self.listing is None:
            return
        hashes = self.hashes or stored_hashes(self.store)  # a streamed run read its files in workers
        run = last_run(self.store)
        manifest_after_run(run, self.listing, self.listed_ns, hashes, self.settings.store_secrets).save(self.layout.cache)
        if self.symbols is not None:
            SymbolRows(run, self.symbols.rows).save(self.layout.cache)
        if self.outlines:
            kept = LinkOutlines(self.layout.cache)
            try:
                kept.put(self.outlines)
                kept.prune(hashes.values())
            finally:
                kept.close()

    def _files(self) -> None:
        """The files' part: the ontology and the listing here, the write in the mode ``_mode`` chooses."""
        report, store, settings = self.report, self.store, self.settings
        # a live refresh's look was checked against the last run under this writer's lock: no query again
        self.previous_run = self.looked.run if self.looked is not None and self.looked.run else last_run(store)
        migration = plan_migration(store, self.full_ontology)
        self._extraction_changed(migration)
        if not migration and not migration.ontology_current:  # a new index: loading here mixes nothing
            store.ensure_ontology(ontology_extensions.ontology_quads(self.extensions))
        report.ontology = list(migration.reasons)

        with self.phase("listing"):
            if self.looked is not None:
                listing, self.listed_ns = self.looked.listing, self.looked.listed_ns
            else:
                self.listed_ns = time.time_ns()
                listing = list_files(self.root, walk_settings(settings))
            self.listing = listing
            report.used_git = listing.used_git
            report.skipped = {r.value: list(p) for r, p in listing.skipped.items() if p}
        self.head = git_head(self.root) if listing.used_git else None
        mode = self._mode(migration, listing)
        self.rewrote_all = isinstance(mode, Reindex)
        mode.write(self, listing)

    def _after_files(self) -> None:
        """After the files: commits (when asked), the tier policy, the secrets policy, vectors, caches."""
        AfterFiles(self).write()

    def _mode(self, migration: Migration, listing: Listing) -> WriteMode:
        """How this run writes its files, decided here and nowhere else.

        With extension rules every run is one batch (rules see the whole batch, so files they link
        must be in it). Otherwise a run that redoes every file of an existing index (an ontology or
        extractor migration) is a streamed re-index, and a first index (no file stored) streams: in a
        child process when the store can lend its files and the listing holds ``SEPARATE_BYTES`` or
        more, else here. Every other run is one batch (an incremental run is small), fed with the
        look when there was one (a live refresh), unless the look found more changed source than a batch
        holds (``stream_reason``): then, too, every file is redone, streamed."""
        rules = any(ext.rules for ext in self.extensions)
        size = changed_bytes(self.looked) if self.looked is not None else 0
        if not rules:
            if migration.reindex:  # every file is redone: the old index is cleared group by group
                return Reindex()
            if not self.store.ask(catalog.text("ingest/any-file")):
                return ChildProcess() if separate(self, listing) else StreamedFirstIndex()
            if self.looked is not None and (why := stream_reason(self.looked, size)) is not None:
                self.report.notes.append(f"{len(self.looked.paths):,} files changed ({why}): every file re-read, streamed")
                return Reindex(self.looked.paths)
        if self.looked is not None:
            # a bounded batch: full collections and trims after its phases (three in a 300-file switch,
            # ~0.3 s) would free little before it ends
            self.tidy_phases = rules or size > LIVE_BATCH_BYTES
            return LiveRefresh(self.looked, migration)
        return OneBatch(migration)

    def _extraction_changed(self, migration: Migration) -> None:
        """Every file is read again when the last run read them another way (``ingest.version``)."""
        rows = self.store.select(catalog.text("index/last-run-extractor"))
        if not rows or migration.reindex:
            return  # a new index, or every file is re-read anyway
        before = rows[0].get("extractor")
        if before is None or before.value != extractor_version():
            migration.reasons.append(f"extraction changed ({before.value if before is not None else 'unrecorded'} → "
                                     f"{extractor_version()}): every file re-read")
            migration.reindex = True


def changed_bytes(looked: Staleness) -> int:
    """The size of the files a look found changed or added, as listed."""
    sizes = {f.path: f.size for f in looked.listing.files}
    return sum(sizes.get(path, 0) for path in (*looked.changed, *looked.added))


def stream_reason(looked: Staleness, size: int | None = None) -> str | None:
    """Why the change a look found is written as a streamed re-index (``LIVE_BATCH_BYTES``), or None
    when it is one batch. ``size``: its ``changed_bytes``, when the caller has it."""
    size = changed_bytes(looked) if size is None else size
    if size <= LIVE_BATCH_BYTES:
        return None
    mb = size / (1 << 20)
    if size >= STREAM_SHARE * sum(f.size for f in looked.listing.files):
        return f"{mb:.1f} MB, more than one batch holds in bounded memory"
    free = available_bytes()
    if free is not None and BATCH_BYTES_PER_BYTE * size > free / 2:
        return (f"{mb:.1f} MB: one batch would hold ~{BATCH_BYTES_PER_BYTE * size / (1 << 30):.1f} GB, more than half "
                f"the {free / (1 << 30):.1f} GB available")
    return None


def index_project(root: Path, store: GraphStore, settings: Settings, progress: Progress | None = None,
                  layout: IndexLayout | None = None, history: int = 0) -> IndexReport:
    """Index ``root``; ``history`` > 0 also ingests that many recent commits (git checkouts only)."""
    return IndexRun(root, store, settings, layout, history=history, progress=progress).run()
