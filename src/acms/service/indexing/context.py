"""What every part of an index run shares: the run context, the files' transaction plan, and the
interface the write modes implement.

One object (``RunContext``) carries the settings, the IRI minter, the progress reporter, the report
with its timings, and what the files' part leaves for the phases after it (the listing, the content
hashes, the symbol table, the corpus spill, the caches' delta). A write mode (:class:`WriteMode`)
writes the files' part of a run into ``context.store`` given the context and the listing; the
orchestrator (:mod:`acms.service.indexing.run`) chooses the mode and runs the rest. The modes import
this module and nothing of each other's but what they build on, so the package's imports form no ring.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from pyoxigraph import NamedNode, Quad

from acms import __version__
from acms.config import Settings
from acms.ingest import emit
from acms.ingest.model import Extraction
from acms.ingest.link_outlines import link_outline, link_outline_key
from acms.ingest.symbols import SymbolRows
from acms.ingest.version import extractor_version
from acms.ingest.walker import Listing
from acms.memory import collect_if_busy, release_freed, young_collections
from acms.ontology import extensions as ontology_extensions
from acms.ontology.versioning import uko_version
from acms.retrieval.cache_delta import CacheDelta
from acms.retrieval.refit_ahead import RefitAhead
from acms.service.identity import index_minter
from acms.service.indexing.report import IndexReport
from acms.service.progress import NullProgress, Progress
from acms.store.layout import IndexLayout
from acms.store.oxigraph import ontology_quads
from acms.store.protocol import Bindings, GraphStore
from acms.temporal import versions
from acms.vocab import GRAPH_META, PROV, UKO

__all__ = ["Plan", "RunContext", "WriteMode"]

LONG_PHASE = 0.25  # seconds: a phase this long gives its freed memory back even without a young collection


@dataclass
class Plan:
    """The files' transaction: what the run deletes (update text and bindings) and what it inserts."""

    deletes: list[tuple[str, Bindings | None]]
    quads: list[Quad]
    new_iris: dict[str, NamedNode]
    replaced_files: list[NamedNode]
    archived: versions.Archive
    derived: list[Quad]  # what the extension rules added (part of ``quads``)
    before: int  # how many of ``deletes`` go before the files' two deletes: the versions', the relinked files' stale links


class RunContext:
    """One run of ``acms index`` over one store (held for writing by the caller): what its parts share."""

    def __init__(self, root: Path, store: GraphStore, settings: Settings, layout: IndexLayout | None = None, *,
                 history: int = 0, progress: Progress | None = None) -> None:
        self.root = root.resolve()
        self.listing: Listing | None = None
        self.hashes: dict[str, str] = {}  # path -> content hash of every file the graph holds after the run
        self.listed_ns = 0
        self.symbols: SymbolRows | None = None  # the symbol table after the run, left for the next run
        self.outlines: dict[str, Extraction] = {}  # outline key -> what linking reads of a module, kept after the run
        self.store, self.settings, self.layout, self.history = store, settings, layout, history
        self.progress: Progress = progress or NullProgress()
        self.adopt(datetime.now(UTC), IndexReport(root=str(self.root)), None)
        self.minter = index_minter(self.root, settings, store)
        self.extensions = ontology_extensions.configured(settings.extensions, self.root)
        self.full_ontology = ontology_quads(ontology_extensions.ontology_quads(self.extensions))
        # A streamed first index's corpus rows, for the caches' build (:mod:`acms.retrieval.corpus_spill`)
        self.corpus_spill: Path | None = None
        self.spill_whole = False  # it will hold every searchable fragment: the store had none before
        # What this run changed, for updating the derived caches rather than building them again
        self.cache_delta: CacheDelta | None = None
        # Collect cycles and give freed memory back after each heavy phase (``phase``): off for a run whose
        # batch is bounded (a live refresh), which ends before what it keeps could add up
        self.tidy_phases = True
        self.previous_run = ""  # the graph state the run started from (``freshness.last_run``)
        # entity IRI -> the time its version this run archived was superseded, when those are all the
        # versions the run adds (an incremental run of the files); None: not known (the tier policy asks)
        self.revised: dict[str, str] | None = None
        # A live refresh: an LSA refit that falls due is left to ``acms index`` or an idle watcher (a read waits
        # for this run; :mod:`acms.retrieval.drift`)
        self.defer_refit = False
        self.refit_ahead: RefitAhead | None = None  # a refit a worker made for the graph as the run found it

    def keep_outline(self, path: str, digest: str, ext: Extraction | None) -> None:
        """What linking reads of a Python module this run extracted, kept for the runs that will pass
        through it without extracting it (:mod:`acms.ingest.link_outlines`)."""
        if ext is not None and ext.language == "python" and ext.module and digest:
            self.outlines[link_outline_key(digest, ext.module, path)] = link_outline(ext)

    def adopt(self, started: datetime, report: IndexReport, head: str | None) -> None:
        """Continue another process's run (:mod:`acms.service.indexing.child`): its start time (so the
        IRIs and times it mints are the run's), its report so far and the git HEAD it indexes."""
        self.started = started
        self.generated_at = started.isoformat().replace("+00:00", "Z")
        self.stamp = started.strftime("%Y%m%dT%H%M%S%fZ")  # the suffix of this run's IRIs
        self.report = report
        self.head = head  # the git HEAD the run indexed, recorded on its IndexRun

    @contextmanager
    def phase(self, name: str, total: int | None = None) -> Iterator[None]:
        self.progress.start(name, total)
        young, start = young_collections(), time.perf_counter()
        with self.timed(name):
            yield
            if self.tidy_phases:
                collect_if_busy(young)  # a heavy phase's cycles (the collector runs rarely in an index)
                if young_collections() > young or time.perf_counter() - start >= LONG_PHASE:
                    # the next phase starts from what this one keeps, not from its peak; a phase that made
                    # no young collection and took a few milliseconds (every phase of a one-file refresh)
                    # left little to give back, and each trim walks the heap (~1 ms a call in a server)
                    release_freed()
        self.progress.finish(name)

    def update(self, done: int, total: int | None = None) -> None:
        self.progress.update(done, total)

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        """Add the time spent inside to the phase ``name`` (a streamed run enters each phase per group)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            timings = self.report.timings
            timings[name] = timings.get(name, 0.0) + time.perf_counter() - start

    def index_run_quads(self) -> list[Quad]:
        """The IndexRun record of this run (meta graph)."""
        head = self.head
        r, run, g = self.report, self.minter.index_run(self.stamp), GRAPH_META
        ended = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        q = [
            Quad(run, emit.A, UKO.IndexRun, g),
            Quad(run, PROV.startedAtTime, emit.time_lit(self.generated_at), g),
            Quad(run, PROV.endedAtTime, emit.time_lit(ended), g),
            Quad(run, UKO.acmsVersion, emit.lit(__version__), g),
            Quad(run, UKO.ukoVersion, emit.lit(uko_version()), g),
            Quad(run, UKO.extractorVersion, emit.lit(extractor_version()), g),
            Quad(run, UKO.filesIndexed, emit.int_lit(r.files_indexed), g),
            Quad(run, UKO.filesUnchanged, emit.int_lit(r.files_unchanged), g),
            Quad(run, UKO.filesRemoved, emit.int_lit(r.files_removed), g),
            Quad(run, UKO.filesSkipped,
                 emit.int_lit(sum(len(v) for v in r.skipped.values()) + len(r.quarantined)), g),
            Quad(run, UKO.triplesWritten, emit.int_lit(r.triples_written), g),
        ]
        if head:
            q.append(Quad(run, UKO.gitHead, emit.lit(head), g))
        return q


class WriteMode(Protocol):
    """One way of writing the files' part of a run: the files listed in ``listing`` into ``run.store``,
    their counts into ``run.report``. Called inside the run's ``store.atomic()`` bracket, after the
    ontology and the listing; the phases after the files (:mod:`acms.service.indexing.after_files`)
    follow whatever mode wrote."""

    def write(self, run: RunContext, listing: Listing) -> None: ...
