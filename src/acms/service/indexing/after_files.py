"""The phases after the files: history, copies, tiers, the secrets policy, the derived caches,
embeddings and vectors.

Whatever write mode wrote the files (:mod:`acms.service.indexing.context`), these follow as their own
writes inside the same ``store.atomic()`` bracket, so a failure in any of them rolls the whole run back.
They read what the files' part left on the run context: the listing (copies), the corpus spill of a
first index (the caches and the embedding read it instead of the store's join), and the caches' delta
of an incremental run (only the changed files' rows are read again).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pyoxigraph import NamedNode

from acms.errors import ProviderError
from acms.ingest.attributes import marks_for
from acms.ingest.copies import mark_copies
from acms.memory import release_freed
from acms.privacy.at_rest import apply_policy
from acms.retrieval import embedding_ahead
from acms.retrieval.caches import BUILD_STEPS as CACHE_STEPS
from acms.retrieval.cache_delta import CacheDelta
from acms.retrieval.caches import DerivedCaches
from acms.retrieval.corpus_read import CountOnce
from acms.retrieval.corpus_spill import beside, read_texts
from acms.retrieval.embedding_store import Phases, active_model, embed_missing, lsa_model_dir, lsa_model_id
from acms.retrieval.refit_ahead import hot_fragments
from acms.retrieval.segment import Segment
from acms.service.freshness import last_run
from acms.service.indexing.context import RunContext
from acms.sparql import catalog
from acms.store.layout import IndexLayout
from acms.store.protocol import GraphStore, SupportsThreads
from acms.temporal import tiers
from acms.temporal.revisions import RevisionLedger
from acms.vocab import IriMinter

__all__ = ["AfterFiles", "EmbeddingBeside", "forget_old_runs"]

RUNS_KEPT = 100  # index runs whose record the meta graph keeps

LET_GO_AFTER = 100_000  # triples a run writes before the store is reopened to let go of their memory


class AfterFiles:
    """The phases after the files' write of one run."""

    def __init__(self, run: RunContext) -> None:
        self.run = run
        self.tiers_moved = False  # the tier policy moved an entity: a first index's spill no longer places it
        self.segment: Segment | None = None  # the segment the text caches' update built (the vectors' update reads it)
        self.fragments: int | None = None  # the searchable fragments the caches' update counted (the embedding takes it)
        self._fragments: CountOnce | None = None  # their count, when the embedding beside the update asks for it too
        self.hot: list[str] | None = None  # the hot tier's entities, as the tier policy left them

    def write(self) -> None:
        """After the files: commits (when asked), the tier policy, the secrets policy, vectors, caches."""
        run = self.run
        report, store, settings = run.report, run.store, run.settings
        if run.history > 0:
            from acms.temporal import git_history  # only a run that reads commits loads it

            with run.phase("history"):
                report.history = git_history.ingest(store, run.root, run.minter, run.history,
                                                    lambda _phase, done, total: run.progress.update(done, total),
                                                    keep_secrets=settings.store_secrets)
        with run.phase("copies"):  # every run, so a refresh keeps them right (acms.ingest.copies)
            listed = _FileIris([f.path for f in run.listing.files] if run.listing is not None else [], run.minter)
            report.copies = mark_copies(store, listed, marks_for(run.root, list(listed)), self._touched()).copies
        with run.phase("tiers"):
            policy, now = tiers.Policy.of(settings), datetime.now(UTC)
            rebalanced = tiers.rebalance(store, policy, now, self._revised(policy, now))
            report.hot_entities, self.tiers_moved = rebalanced.hot_entities, bool(rebalanced.promoted + rebalanced.demoted)
            self.hot = list(rebalanced.hot)
        with run.phase("secrets"):
            report.texts_rescrubbed = apply_policy(store, settings.store_secrets, fresh=report.first_run)
        forget_old_runs(store)
        if run.layout is None:
            return
        # The keyword and ranking caches before the embeddings (they do not depend on them): after a
        # files' phase in a child process this heap is still clean, and the caches' build is the
        # run's largest. A first index's embedding is made meanwhile in a worker process, an incremental
        # run's in a thread (``_embedding_beside``).
        ahead = self._embedding_ahead() if settings.embed_on_index else None
        beside = self._embedding_beside(run.layout) if settings.embed_on_index and ahead is None else None
        try:
            with run.phase("caches", CACHE_STEPS):
                self.warm_caches(run.layout)
            if beside is not None:
                beside.land(run)
            elif settings.embed_on_index:  # phases of its own: fitting (a new model), embeddings
                self._let_go()
                self._embed(run.layout, ahead)
        finally:
            if beside is not None:
                beside.join()
            if ahead is not None:
                ahead.close()
        with run.phase("vectors", 1):
            self.warm_vectors(run.layout)

    def _revised(self, policy: tiers.Policy, now: datetime) -> dict[str, str] | None:
        """What the tier policy's window holds of the entities re-indexes and commits revised: the
        previous run's ledger carried forward with what this run archived, where it can be, else asked
        (:mod:`acms.temporal.revisions`); the ledger of this run's state is left for the next one. None
        (the policy asks) without a cache directory or a window."""
        run = self.run
        if run.layout is None or policy.hot_days <= 0:
            return None
        since = now - timedelta(days=policy.hot_days)
        revised = None
        if run.revised is not None and not run.history:  # the versions this run archived are all it added
            ledger = RevisionLedger.load(run.layout.cache)
            revised = ledger.carried(run.previous_run, since, run.revised) if ledger is not None else None
        if revised is None:
            revised = tiers.revised_since(run.store, since)
        RevisionLedger(last_run(run.store), since, revised).save(run.layout.cache)
        return revised

    def _touched(self) -> list[str] | None:
        """The paths this run wrote or removed when it was an incremental run of the files (their copies'
        groups are looked at again; nothing when nothing changed), else None (every file)."""
        report = self.run.report
        if report.up_to_date:
            return []
        return report.changed_paths if self.run.cache_delta is not None and not report.first_run else None

    def _embed(self, layout: IndexLayout, ahead: embedding_ahead.EmbeddingAhead | None = None,
               phases: Phases | None = None, *, beside: bool = False) -> None:
        """Vectors for the new fragments; a provider failure is a warning (the graph stays as written).
        ``beside``: in a thread beside the caches' update, sharing its count of the fragments."""
        try:
            delta = self._delta()
            # a run that wrote no file has none to look in: the counts alone tell whether any vector is missing
            files = delta.files if delta is not None else frozenset() if self.run.report.up_to_date else None
            counted = self._fragments() if beside and self._fragments is not None else self.fragments
            done = embed_missing(self.run.store, layout, self.run.settings, phases or self.run, self.spilled_texts(),
                                 ahead, files=files, fragments=counted,
                                 unembedded=delta.unembedded if delta is not None else None,
                                 defer_refit=self.run.defer_refit, refit_ahead=self._refit_ahead())
        except ProviderError as exc:
            self.run.report.warnings.append(f"vectors not computed: {exc.message}")
            return
        if done is not None:
            self.run.report.embedded, self.run.report.embedding_model = done.embedded, done.model_id
            self.run.report.refit_due, self.run.report.refitted = done.refit_due, done.refitted

    def _refit_ahead(self) -> embedding_ahead.EmbeddingAhead | None:
        """The refit a worker made ahead for this run (``RunContext.refit_ahead``), when its vectors are this
        graph's: the run wrote no file, rewrote no text, and the tier policy left the hot fragments as read."""
        run = self.run
        made = run.refit_ahead
        if made is None or not run.report.up_to_date or run.report.texts_rescrubbed:
            return None
        return made.ahead if made.lands_on(run.previous_run, hot_fragments(run.store)) else None

    def _embedding_beside(self, layout: IndexLayout) -> EmbeddingBeside | None:
        """The embedding of an incremental run's fragments, begun in a thread beside the caches' update
        (it needs none of it): on two cores a one-file refresh's ~65 ms of embedding, mostly queries and
        a fold in numpy that let go of the interpreter, then costs ~30 ms less. Not when the store cannot
        be used from two threads, nor when the run wrote enough for the store to be reopened between the
        phases (``_let_go``: no query may be running then)."""
        store = self.run.store
        if (self._delta() is None or self.run.report.triples_written >= LET_GO_AFTER
                or not isinstance(store, SupportsThreads) or not store.beside_threads()):
            return None
        self._fragments = CountOnce(store, "embeddings/count-fragments")  # nothing is written until both ask
        return EmbeddingBeside(lambda phases: self._embed(layout, None, phases, beside=True))

    def _embedding_ahead(self) -> embedding_ahead.EmbeddingAhead | None:
        """A worker fitting and folding a first index's embedding from its spill while the caches are
        built (:mod:`acms.retrieval.embedding_ahead`), or folding a re-index's with the model it kept
        (it started over: no fragment has a vector); None when the embedding is neither."""
        run = self.run
        spill = self._usable_spill()
        if (spill is None or not run.spill_whole or run.settings.embedding_provider != "lsa"
                or run.report.fragments < embedding_ahead.AHEAD_FROM or (os.cpu_count() or 1) < 2):
            return None
        kept: Path | None = None
        model = active_model(run.store)
        if model is not None:
            if run.layout is None or run.store.ask(catalog.text("embeddings/any-fragment-vector")):
                return None
            kept = lsa_model_dir(run.layout, model.model_id)
            if lsa_model_id(kept) != model.model_id:  # not on disk as the graph names it: the fold here says so
                return None
        return embedding_ahead.EmbeddingAhead(spill, beside(spill, "embedding"), run.settings.embedding_dims,
                                              hot_fragments(run.store), kept)

    def _usable_spill(self) -> Path | None:
        """This run's spill, closed and in place, unless a phase after the files rewrote texts (the secrets
        policy)."""
        spill = self.run.corpus_spill
        return spill if spill is not None and spill.is_file() and not self.run.report.texts_rescrubbed else None

    def spilled_texts(self) -> Callable[[], Iterator[tuple[str, str]]] | None:
        """Every searchable fragment's text, from the spill when it holds them all (the store had none
        before this run; entities the tier policy moved since are placed by the embedding stream)."""
        spill = self._usable_spill()
        return None if spill is None or not self.run.spill_whole else lambda: read_texts(spill)

    def _let_go(self) -> None:
        """Before a phase that reads the whole index (fitting and embedding, the caches): the embedded
        store is reopened, so RocksDB lets go of what the files' writes left it holding. Not after a
        small write (a refresh of a few files: ~0.15 s a reopen, for nothing to let go of)."""
        reopen = getattr(self.run.store, "reopen", None)
        if reopen is not None and self.run.report.triples_written >= LET_GO_AFTER:
            reopen()
            release_freed()

    def warm_caches(self, layout: IndexLayout) -> None:
        """Build the keyword and ranking caches now, so the first search after an index run is not the slow one.
        A first index's spill stands for the store's corpus join unless a later phase rewrote texts."""
        self._let_go()
        spill = self._usable_spill()
        # complete when it holds every searchable fragment and place: the store had none before this
        # run, and no entity changed tier since its files were written (a place query joins two)
        caches = DerivedCaches(self.run.store, layout, progress=self.run.progress.update,  # steps 1 … CACHE_STEPS
                               spill=spill, complete=self.run.spill_whole and not self.tiers_moved, delta=self._delta(),
                               fragments=self._fragments, hot=self.hot)
        caches.warm()
        self.segment, self.fragments = caches.segment, caches.fragments
        self.run.report.warnings.extend(caches.warnings)

    def warm_vectors(self, layout: IndexLayout) -> None:
        """The vector cache, for the model the embeddings used (a first embedding has written it already)."""
        model = active_model(self.run.store)
        if model is not None:
            caches = DerivedCaches(self.run.store, layout, delta=self._delta())
            caches.segment = self.segment  # of this graph state: the embedding wrote vectors, not texts
            caches.vectors(model.model_id, keep=False)
            self.run.report.warnings.extend(caches.warnings)
        self.run.progress.update(1)

    def _delta(self) -> CacheDelta | None:
        """What the run changed, for the derived state to follow it: none when the secrets policy
        rewrote texts of other files too (then everything is read again)."""
        return None if self.run.report.texts_rescrubbed else self.run.cache_delta


class _FileIris(Mapping[str, NamedNode]):
    """The listed files' IRIs, minted when one is asked for: the copies phase reads every path and asks
    for a few IRIs (a refresh minting a standard library's 2,250 cost ~6 ms)."""

    def __init__(self, paths: list[str], minter: IriMinter) -> None:
        self._paths, self._minter = dict.fromkeys(paths), minter

    def __getitem__(self, path: str) -> NamedNode:
        if path not in self._paths:
            raise KeyError(path)
        return self._minter.file(path)

    def __contains__(self, path: object) -> bool:
        return path in self._paths

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


class EmbeddingBeside:
    """Work run in a thread of its own, whose phases the run hears of once it is joined (``land``):
    progress is told one phase at a time, and the caches' phase is the run's meanwhile."""

    def __init__(self, work: Callable[[Phases], object]) -> None:
        self._heard = _HeardLater()
        self._error: BaseException | None = None

        def run() -> None:
            try:
                work(self._heard)
            except BaseException as exc:  # noqa: BLE001 - raised again in the run's thread, by land()
                self._error = exc

        self._thread = threading.Thread(target=run, name="acms-embedding", daemon=True)
        self._thread.start()

    def join(self) -> None:
        self._thread.join()

    def land(self, run: RunContext) -> None:
        """Wait for the work; tell ``run`` the phases it went through (with their time); raise its error."""
        self.join()
        self._heard.tell(run)
        if self._error is not None:
            raise self._error


class _HeardLater:
    """``Phases`` for a thread: each phase's name, total, last update and time, told to a run later."""

    def __init__(self) -> None:
        self.heard: list[tuple[str, int | None, tuple[int, int | None] | None, float]] = []
        self._last: tuple[int, int | None] | None = None

    @contextmanager
    def phase(self, name: str, total: int | None = None) -> Iterator[None]:
        start, self._last = time.perf_counter(), None
        try:
            yield
        finally:
            self.heard.append((name, total, self._last, time.perf_counter() - start))

    def update(self, done: int, total: int | None = None) -> None:
        self._last = (done, total)

    def tell(self, run: RunContext) -> None:
        for name, total, last, seconds in self.heard:
            with run.phase(name, total):
                if last is not None:
                    run.update(*last)
            timings = run.report.timings
            timings[name] = timings.get(name, 0.0) + seconds


def forget_old_runs(store: GraphStore, keep: int | None = None) -> int:
    """Drop the records of all but the last ``keep`` index runs (``RUNS_KEPT``); how many were dropped.
    A live index runs once per save, and each run added its record for good: the queries that find the
    last run (the graph state's key, the extractor and ontology versions it used) read every record,
    ~8 ms each for 320 runs and growing with every save. Nothing refers to a run's record; the caches'
    key is the last run's IRI, which stays."""
    keep = RUNS_KEPT if keep is None else keep
    old = [row["run"] for row in store.select(catalog.text("index/runs"))][keep:]
    if old:
        store.update(catalog.text("index/forget-runs.ru"), {"run": old})
    return len(old)
