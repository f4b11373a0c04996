"""Vectors in the graph: which model made them, embedding new fragments, migrating to another model.

The active ``EmbeddingModel`` node (meta graph) names the model id and dimensions. New fragments are
embedded at the end of ``acms index`` with that model; a query embedded by any other model is refused
(``ModelMismatch``) until ``acms reindex --embeddings`` migrates. A migration computes every vector
first and then swaps old for new in ONE update, so an interrupted migration leaves the old vectors.

An index without any vector (a first index) is embedded as a stream instead (the one
update of a whole standard library's vectors took ~50 s and held them all in memory): the LSA model
is fitted on at most ``FIT_SAMPLE`` fragments (beyond that, those of lowest IRI hash), then the
fragments are folded in ``STREAM_BATCH`` at a time, each batch bulk-loaded, the model node last (so
an interrupted stream leaves no active model, and the next run starts over); the vector cache is
written from the same vectors rather than decoded back from the graph. A first index's embedding is
made beside its caches' build by worker processes that read its spill (:mod:`acms.retrieval.embedding_ahead`)
and only landed here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import heapq
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
from pyoxigraph import Literal, NamedNode, Quad

from acms.config import Settings
from acms.embeddings.base import EmbeddingProvider
from acms.errors import ModelMismatch, ProviderError
from acms.index.vectors import MatrixWriter, VectorMatrix, encode, wrote_rows
from acms.lifetime import helper_result
from acms.memory import release_freed
from acms.retrieval.corpus_read import saved_count
from acms.retrieval.drift import REFIT_CAP, Drift
from acms.sparql import catalog
from acms.store.layout import IndexLayout
from acms.store.oxigraph import load_nquads
from acms.store.protocol import GraphStore, SelectResult, SupportsOwnership
from acms.vocab import DCT, GRAPH_META, RDF, TIER_HOT, TIER_WARM, UKO, XSD

if TYPE_CHECKING:
    from acms.retrieval.embedding_ahead import EmbeddingAhead, Folded

BATCH = 256
KnownTexts = Callable[[], Iterable[tuple[str, str]]]  # (fragment IRI, text) of every searchable fragment
FIT_SAMPLE = 20_000  # fragments an LSA model is fitted on at most (time and memory flat beyond)
STREAM_BATCH = 4096  # fragments folded and written at once by a streamed first embedding
TEXTS_AT_ONCE = 500  # fragments whose texts one query reads
# N-Quads bulk-loaded at once when a first embedding made ahead lands. Fewer, larger loads: a standard
# library's vectors loaded 4096 at a time (18 loads) left RocksDB ~3.5 s of compaction when the store
# closed, in 20 MB chunks (6 loads) none; each load holds ~4 bytes per byte of N-Quads.
LAND_BYTES = 24 << 20


class Phases(Protocol):
    """Who hears about the work (an index run): fitting a model and embedding are phases of their
    own, the fit counted in steps, the embedding in fragments."""

    def phase(self, name: str, total: int | None = None) -> AbstractContextManager[object]: ...

    def update(self, done: int, total: int | None = None) -> None: ...


class _Silent:
    def phase(self, name: str, total: int | None = None) -> AbstractContextManager[object]:
        return nullcontext()

    def update(self, done: int, total: int | None = None) -> None:
        pass


@dataclass(frozen=True)
class ModelInfo:
    iri: NamedNode
    model_id: str
    dimensions: int
    created: str


@dataclass
class EmbedReport:
    model_id: str
    embedded: int
    seconds: float
    refit_due: bool = False  # the drift passed REFIT_SHARE and the run folded on (``defer_refit``)
    refitted: bool = False  # the model was fitted again, the corpus having drifted from its fit


def active_model(store: GraphStore) -> ModelInfo | None:
    rows = store.select(catalog.text("embeddings/active-model"))
    if not rows:
        return None
    r = rows[0]
    return ModelInfo(r["model"], r["id"].value, int(r["dims"].value), r["created"].value)  # type: ignore[arg-type]


def model_iri(model_id: str) -> NamedNode:
    return NamedNode(f"https://w3id.org/acms/model/{model_id}")


def model_node(provider: EmbeddingProvider) -> list[Quad]:
    """The index's one embedding model (meta graph): every vector of an index is of this model, so a
    fragment does not name it (73k quads a standard library, never read)."""
    iri = model_iri(provider.model_id)
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    g = GRAPH_META
    return [
        Quad(iri, RDF.type, UKO.EmbeddingModel, g),
        Quad(iri, UKO.modelId, Literal(provider.model_id), g),
        Quad(iri, UKO.dimensions, Literal(str(provider.dimensions), datatype=XSD.integer), g),
        Quad(iri, DCT.created, Literal(now, datatype=XSD.dateTime), g),
    ]


_LOADED_LSA: OrderedDict[tuple[object, ...], EmbeddingProvider] = OrderedDict()  # model files' stats -> provider
_LOADED_AT_MOST = 2
_LSA_ARRAYS = ("components.npy", "idf.npy", "arrays.npz")  # arrays.npz: a model an older version saved
_LOADED_LOCK = threading.Lock()


def make_provider(name: str, settings: Settings, layout: IndexLayout, model_id: str | None = None) -> EmbeddingProvider:
    """The configured provider, from the provider registry; ``lsa`` loads the model fitted on this
    corpus (cache/lsa), or the one kept beside it for ``model_id`` (``_land_model``). A process keeps
    the last LSA models it loaded while their files are the same ones (a load reads and checks ~25 MB
    for a standard library, ~40 ms: a server loaded it for every refresh and again for the next answer)."""
    from acms.embeddings.registry import make_provider as make_registered

    model_dir = lsa_model_dir(layout, model_id)
    options = {"model_dir": str(model_dir), "base_url": settings.embedding_base_url,
               "model": settings.embedding_model, "api_key_env": settings.embedding_api_key_env,
               "path": settings.embedding_model}
    key = _lsa_files(model_dir) if name == "lsa" else None
    if key is not None:
        with _LOADED_LOCK:
            if key in _LOADED_LSA:
                _LOADED_LSA.move_to_end(key)
                return _LOADED_LSA[key]
    provider = make_registered(name, options)
    if key is not None:
        with _LOADED_LOCK:
            _LOADED_LSA[key] = provider
            while len(_LOADED_LSA) > _LOADED_AT_MOST:
                _LOADED_LSA.popitem(last=False)
    return provider


def lsa_model_dir(layout: IndexLayout, model_id: str | None = None) -> Path:
    """Where the LSA model is: the one fitted on this corpus (cache/lsa), or the one kept beside it for
    ``model_id`` (``_land_model``)."""
    model_dir = layout.cache_dir("lsa")
    kept = layout.cache_dir(f"{_KEPT}{model_id}") if model_id else None
    if kept is not None and kept.is_dir() and lsa_model_id(model_dir) != model_id:
        return kept
    return model_dir


def _lsa_files(model_dir: Path) -> tuple[object, ...] | None:
    """What tells one saved LSA model from another: its folder and its files' identity, size and time
    (a model is written into a new folder and moved in place; an edited file changes its time)."""
    arrays = [model_dir / f for f in _LSA_ARRAYS if (model_dir / f).exists()]  # a model's format holds some
    try:
        stats = [(model_dir / f).stat() for f in ("manifest.json", "vocabulary.json")] + [a.stat() for a in arrays]
    except OSError:
        return None
    if not arrays:
        return None
    return (str(model_dir.resolve()), *((s.st_ino, s.st_size, s.st_mtime_ns) for s in stats))


def query_provider(store: GraphStore, settings: Settings, layout: IndexLayout) -> EmbeddingProvider | None:
    """The provider to embed a query with, checked against the index's model; None if no vectors."""
    model = active_model(store)
    if model is None:
        return None
    provider = make_provider(settings.embedding_provider, settings, layout, model.model_id)
    if provider.model_id != model.model_id:
        raise ModelMismatch(
            f"the query would be embedded with {provider.model_id!r} but the index holds vectors of "
            f"{model.model_id!r}; run `acms reindex --embeddings --provider {settings.embedding_provider}` to migrate"
        )
    return provider


def _embed_rows(provider: EmbeddingProvider, rows: list[dict], phases: Phases,
                made: list[np.ndarray] | None = None) -> list[Quad]:
    """The vector quads of ``rows``' texts; their vectors, in order, appended to ``made`` when given."""
    quads: list[Quad] = []
    with phases.phase("embeddings", len(rows)):
        for start in range(0, len(rows), BATCH):
            chunk = rows[start : start + BATCH]
            vectors = np.asarray(provider.embed([r["text"].value for r in chunk]), dtype=np.float32)
            if made is not None:
                made.append(vectors)
            for row, vec in zip(chunk, vectors, strict=True):
                g = row["g"]
                quads.append(Quad(row["frag"], UKO.vector, encode(vec), g))
            phases.update(start + len(chunk), len(rows))
    return quads


def embed_missing(store: GraphStore, layout: IndexLayout, settings: Settings,
                  phases: Phases | None = None, texts: KnownTexts | None = None,
                  ahead: EmbeddingAhead | None = None, files: Iterable[str] | None = None,
                  fragments: int | None = None, unembedded: Collection[str] | None = None,
                  defer_refit: bool = False, refit_ahead: EmbeddingAhead | None = None) -> EmbedReport | None:
    """Embed the fragments that have no vector; fit the default LSA model on first use.
    ``phases`` hears of the ``fitting`` phase (when a model is fitted) and the ``embeddings`` one.
    ``texts()``: every searchable fragment's (IRI, text), when known without reading the store (a first
    index's spill, :mod:`acms.retrieval.corpus_spill`): a first model's sample is drawn from them.
    ``ahead``: a worker that fitted and folded those texts meanwhile (:mod:`acms.retrieval.embedding_ahead`),
    whose vectors are loaded when this is a first LSA embedding. ``files``: the file IRIs the index run
    wrote, where the fragments to embed (and their texts) are looked for first (:func:`_unembedded`); ``fragments``: how many
    searchable fragments there are, when the run's caches have just counted them (none written since);
    ``unembedded``: of the fragments in those files, the ones the run left with no vector, when it knows.
    ``defer_refit``: a live refresh, which folds on past ``REFIT_SHARE`` (up to ``REFIT_CAP``) and says the
    refit is due; any other run fits again once it is due, whether or not it has anything to embed
    (:mod:`acms.retrieval.drift`). ``refit_ahead``: a refit a worker made for this graph state
    (:mod:`acms.retrieval.refit_ahead`), landed when the refit is due, deferred or not."""
    import time

    t0 = time.perf_counter()
    phases = phases or _Silent()
    model = active_model(store)
    if model is None:
        return _fitted(layout, migrate(store, layout, settings, settings.embedding_provider, phases, texts, ahead))
    if _model_lost(store, layout, settings, model):
        return _refit(store, layout, settings, phases)
    if not store.ask(catalog.text("embeddings/any-fragment-vector")):
        # a model and no vector: a re-index that started over (service.indexing.reindex) kept the model; every
        # fragment is new, so they stream with it as a first embedding does, vector cache included, their
        # texts from its spill when it holds them all (read back from the store: ~3 s a standard library)
        if ahead is not None and ahead.kept is not None:  # folded with it while the caches were built
            return _land_kept(store, layout, ahead, model, phases, t0)
        provider = _kept_provider(model, settings, layout)
        return _stream_all(store, layout, provider, [], phases, t0, rows=None if texts is None else _placed(store, texts))
    lsa = settings.embedding_provider == "lsa"
    counted = Drift.load(layout.cache, model.model_id) if lsa else None
    if counted is not None and counted.due() and (refit_ahead is not None or not defer_refit):
        return _refit(store, layout, settings, phases, refit_ahead)  # left due by live refreshes
    rows = _unembedded(store, files, fragments, unembedded)
    if not rows:
        return EmbedReport(model.model_id, 0, time.perf_counter() - t0, refit_due=counted is not None and counted.due())
    missing = {r["frag"].value for r in rows}
    refit_due = False
    if lsa:
        drift = counted or Drift(
            model.model_id, saved_count(store, "embeddings/count-texts") - len({(r["frag"].value, r["g"].value) for r in rows}))
        new = _new_texts(layout, missing)
        if drift.due(new) and (not defer_refit or drift.due(new, REFIT_CAP)):
            return _refit(store, layout, settings, phases)  # on the project as it is now: a first embedding, streamed
        refit_due = drift.due(new)
        drift.folded += new
        drift.save(layout.cache)
    rows.sort(key=lambda r: r["frag"].value)
    provider = _kept_provider(model, settings, layout)
    made: list[np.ndarray] = []
    quads = _embed_rows(provider, rows, phases, made)
    store.load(quads)
    from acms.retrieval.caches import DerivedCaches

    # the vector cache's update that follows takes these rather than reading them back (vectors-of.rq)
    wrote_rows(layout.cache_dir("vectors"), DerivedCaches(store, layout).state_key, model.model_id,
               [r["frag"].value for r in rows], np.concatenate(made))
    return EmbedReport(model.model_id, len(rows), time.perf_counter() - t0, refit_due=refit_due)


def _unembedded(store: GraphStore, files: Iterable[str] | None, fragments: int | None = None,
                unembedded: Collection[str] | None = None) -> list[dict]:
    """The searchable fragments with no vector, each with its text and graph (``frag``, ``text``, ``g``).
    A scan of every fragment cost ~0.4 s a standard library, whatever a run changed; so the fragments of
    the files the run wrote are asked for first, and they are the answer when two counts say as many lack
    a vector (none: nothing is asked). Of those files' fragments, the texts of the ``unembedded`` ones
    when the run knows them, else every fragment's and its vector (a 300-file switch's 16k: ~0.9 s, for
    ~600 to embed). Any other missing vector (an earlier run's embedding failed, a decision recorded
    since) makes the counts differ, and then the scan decides and the texts of what it found are read."""
    if files is not None:
        if fragments is None:
            fragments = saved_count(store, "embeddings/count-fragments")
        lacking = fragments - saved_count(store, "embeddings/count-vectors")
        if lacking == 0:
            return []
        if unembedded is not None:
            rows = _texts_of(store, sorted(unembedded))
        else:
            named = [NamedNode(f) for f in sorted(files)]
            bound = [{"file": named[start : start + TEXTS_AT_ONCE]} for start in range(0, len(named), TEXTS_AT_ONCE)]
            embedded = {(r["frag"].value, r["g"].value)
                        for files_at_once in bound for r in store.select(catalog.text("embeddings/vectors-in-files"), files_at_once)}
            rows = [r for files_at_once in bound for r in store.select(catalog.text("embeddings/texts-in-files"), files_at_once)
                    if (r["frag"].value, r["g"].value) not in embedded]
        if len({(r["frag"].value, r["g"].value) for r in rows}) == lacking:
            return rows
    missing = {(r["frag"].value, r["g"].value) for r in store.select(catalog.text("embeddings/unembedded"))}
    return [r for r in _texts_of(store, sorted({frag for frag, _ in missing})) if (r["frag"].value, r["g"].value) in missing]


def _texts_of(store: GraphStore, frags: Sequence[str]) -> list[dict]:
    """The texts of ``frags`` (IRIs, sorted) in the current tiers, with the graph each is in."""
    named = [NamedNode(frag) for frag in frags]
    return [r for start in range(0, len(named), TEXTS_AT_ONCE)
            for r in store.select(catalog.text("embeddings/texts-of"), {"frag": named[start : start + TEXTS_AT_ONCE]})]


def _model_lost(store: GraphStore, layout: IndexLayout, settings: Settings, model: ModelInfo) -> bool:
    """Whether the LSA model the index's vectors were made with is gone from this index's own folder (its
    cache removed): no query can be embedded to match them, so the run fits a new one. Not for a store
    several roots share, whose model lives with the root that fitted it (refitting here would drop the
    vectors that root's model made, and it would refit in turn)."""
    return (settings.embedding_provider == "lsa" and model.model_id.startswith("lsa-")
            and not isinstance(store, SupportsOwnership)
            and lsa_model_id(lsa_model_dir(layout, model.model_id)) != model.model_id)


def _refit(store: GraphStore, layout: IndexLayout, settings: Settings, phases: Phases,
           ahead: EmbeddingAhead | None = None) -> EmbedReport:
    """Fit the LSA model again on the project as it is now and embed every fragment with it, streamed as a
    first embedding is, or landed from the worker that made it ``ahead``."""
    store.update(catalog.text("embeddings/drop-vectors.ru"))
    return dataclasses.replace(_fitted(layout, migrate(store, layout, settings, "lsa", phases, ahead=ahead)),
                               refitted=True)


def _fitted(layout: IndexLayout, report: EmbedReport) -> EmbedReport:
    """A model was fitted over ``report.embedded`` fragments: nothing has drifted from it yet."""
    Drift(report.model_id, report.embedded).save(layout.cache)
    return report


def _new_texts(layout: IndexLayout, frags: set[str]) -> int:
    """How many of ``frags`` hold a text no fragment had a vector for before this run: a fragment's IRI
    holds its text's hash, so a text that moved to another entity or place (a new IRI, the same text) is
    no drift."""
    cached = VectorMatrix.load(layout.cache_dir("vectors"))
    if cached is None:
        return len(frags)
    return sum(1 for known in cached.knows_texts(sorted(frags)) if not known)


def _kept_provider(model: ModelInfo, settings: Settings, layout: IndexLayout) -> EmbeddingProvider:
    """The configured provider, which must make the index's model's vectors."""
    provider = make_provider(settings.embedding_provider, settings, layout, model.model_id)
    if provider.model_id != model.model_id:
        raise ModelMismatch(
            f"the configured provider makes {provider.model_id!r} vectors but the index holds "
            f"{model.model_id!r}; run `acms reindex --embeddings` to migrate"
        )
    return provider


def migrate(store: GraphStore, layout: IndexLayout, settings: Settings, provider_name: str,
            phases: Phases | None = None, texts: KnownTexts | None = None,
            ahead: EmbeddingAhead | None = None) -> EmbedReport:
    """Recompute every vector with ``provider_name`` and swap them in atomically. ``texts`` and ``ahead``
    as for ``embed_missing`` (used when the index has no vector yet)."""
    import time

    t0 = time.perf_counter()
    phases = phases or _Silent()
    if not store.ask(catalog.text("embeddings/any-vector")):
        if ahead is not None and provider_name == "lsa":
            return _land_ahead(store, layout, ahead, phases, t0)
        return _stream_first(store, layout, settings, provider_name, phases, t0, texts)
    rows = store.select(catalog.text("search/corpus"))
    with _provider(provider_name, lambda: [r["text"].value for r in rows], layout, settings, phases) as provider:
        quads = _embed_rows(provider, rows, phases) + model_node(provider)
        store.replace([(catalog.text("embeddings/drop-vectors.ru"), None)], quads)
    return EmbedReport(provider.model_id, len(rows), time.perf_counter() - t0)


def searchable_texts(store: GraphStore) -> Iterator[tuple[NamedNode, str, NamedNode]]:
    """(fragment, text, graph) of every searchable fragment, read as a stream, in the store's order
    (an ORDER BY over a standard library's 73k fragments cost ~7 s of term comparisons)."""
    result = store.query_raw(catalog.text("embeddings/texts"))
    assert isinstance(result, SelectResult), "embeddings/texts is a SELECT"
    for row in result:
        yield row["frag"], row["text"].value, row["g"]  # type: ignore[misc]


def _hash(iri: str) -> int:
    return int.from_bytes(hashlib.blake2b(iri.encode(), digest_size=8).digest(), "big")


def _stream_first(store: GraphStore, layout: IndexLayout, settings: Settings, provider_name: str,
                  phases: Phases, t0: float, texts: KnownTexts | None = None) -> EmbedReport:
    """Embed an index that has no vector yet: fit on a sample, fold and write batch by batch."""
    seen = [0]

    def sample() -> list[str]:
        every = texts() if texts is not None else ((frag.value, text) for frag, text, _ in searchable_texts(store))
        return fit_sample(every, FIT_SAMPLE, seen)

    with _provider(provider_name, sample, layout, settings, phases) as provider:
        model_quads = model_node(provider)
        total = seen[0] or saved_count(store, "embeddings/count-texts")  # not LSA: no sample read
        if not total:
            raise ProviderError("nothing to embed: the index has no fragments")
        rows = None if texts is None else _placed(store, texts)
        return _stream_all(store, layout, provider, model_quads, phases, t0, total, rows)


def fit_sample(texts: Iterable[tuple[str, str]], size: int, seen: list[int] | None = None) -> list[str]:
    """The texts of the ``size`` fragments of lowest IRI hash (the same whatever order they are read
    in), in IRI order; ``seen[0]`` counts every text, in the same scan (a count query first
    cost ~2 s a standard library, the scan of the store ~4 s, which a first index's spill spares)."""
    lowest: list[tuple[int, str, str]] = []  # a max-heap by hash, as (-hash, iri, text)
    n = 0
    for iri, text in texts:
        n += 1
        key = -_hash(iri)
        if len(lowest) < size:
            heapq.heappush(lowest, (key, iri, text))
        elif key > lowest[0][0]:
            heapq.heapreplace(lowest, (key, iri, text))
    if seen is not None:
        seen[0] += n
    return [text for _, _, text in sorted(lowest, key=lambda row: (row[1], row[2]))]


def _land_ahead(store: GraphStore, layout: IndexLayout, ahead: EmbeddingAhead, phases: Phases,
                t0: float) -> EmbedReport:
    """A first LSA embedding workers made while the caches were built: its model staged as a fit here
    stages it, its N-Quads bulk-loaded ``LAND_BYTES`` at a time, its rows written to the vector cache,
    the model node last (as ``_stream_all`` does)."""
    import time

    from acms.embeddings.lsa import FIT_STEPS, LsaModel, LsaProvider

    with phases.phase("fitting", FIT_STEPS):  # what is left of the worker's fit and folding
        folded = ahead.result()
        phases.update(FIT_STEPS, FIT_STEPS)
    staged = _staged_path(layout)
    folded.model.rename(staged)
    writer: MatrixWriter | None = None
    try:
        provider = LsaProvider(LsaModel.load(staged))
        model_quads = model_node(provider)
        writer = MatrixWriter(layout.cache_dir("vectors"), provider.dimensions, provider.model_id)
        total = _load_folded(store, folded, writer, phases)
        store.load(model_quads)
        _land_model(staged, layout)
        from acms.retrieval.caches import DerivedCaches

        writer.close(DerivedCaches(store, layout).state_key)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        if writer is not None:
            writer.discard()
        raise
    return EmbedReport(provider.model_id, total, time.perf_counter() - t0)


def _land_kept(store: GraphStore, layout: IndexLayout, ahead: EmbeddingAhead, model: ModelInfo, phases: Phases,
               t0: float) -> EmbedReport:
    """A re-index's embedding a worker folded with the index's kept model while the caches were built:
    its N-Quads bulk-loaded ``LAND_BYTES`` at a time and its rows written to the vector cache, as
    ``_stream_all`` would have made them here (the model is the graph's already: no node, nothing staged)."""
    import time

    folded = ahead.result()
    writer = MatrixWriter(layout.cache_dir("vectors"), folded.dimensions, model.model_id)
    try:
        total = _load_folded(store, folded, writer, phases)
        from acms.retrieval.caches import DerivedCaches

        writer.close(DerivedCaches(store, layout).state_key)
    except BaseException:
        writer.discard()
        raise
    return EmbedReport(model.model_id, total, time.perf_counter() - t0)


def _load_folded(store: GraphStore, folded: Folded, writer: MatrixWriter, phases: Phases) -> int:
    """What the workers folded, into the store (``LAND_BYTES`` of N-Quads at a time) and the vector cache's
    writer; how many fragments."""
    total = folded.total
    with phases.phase("embeddings", total):
        for nquads, done in folded.nquads(LAND_BYTES):
            load_nquads(store, nquads)
            phases.update(done, total)
        for ids, vectors in folded.rows():
            writer.add(ids, vectors)
    return total


def _placed(store: GraphStore, texts: KnownTexts) -> Iterator[tuple[NamedNode, str, NamedNode]]:
    """``embeddings/texts.rq``'s rows from the texts of a first index's spill: each fragment in the graph
    that holds it. The spill holds what the files' writer put in the warm tier; since then the tier
    policy may have moved entities to hot, each with its fragments, so only those few are asked for.
    (Nothing the spill holds is cold: history's versions have IRIs of their own.) Reading every
    text back from the store cost ~7 s a standard library."""
    hot = {row["frag"].value for row in store.select(catalog.text("embeddings/hot-fragments"))}
    for frag, text in texts():
        yield NamedNode(frag), text, TIER_HOT if frag in hot else TIER_WARM


def _stream_all(store: GraphStore, layout: IndexLayout, provider: EmbeddingProvider,
                model_quads: list[Quad], phases: Phases, t0: float, total: int | None = None,
                rows: Iterable[tuple[NamedNode, str, NamedNode]] | None = None) -> EmbedReport:
    """Fold every searchable fragment (none has a vector) with ``provider`` and bulk-load the vectors
    ``STREAM_BATCH`` at a time, writing the vector cache from them; ``model_quads`` (a new model's
    node) go last. ``rows``: the fragments, texts and graphs when known without reading the store
    (``_placed``); this process then folds every other batch itself, beside the worker."""
    import time

    if total is None:
        total = saved_count(store, "embeddings/count-texts")
    writer = MatrixWriter(layout.cache_dir("vectors"), provider.dimensions, provider.model_id)
    try:
        done = _fold_all(store, provider, phases, total, rows, writer)
        if model_quads:
            store.load(model_quads)
        from acms.retrieval.caches import DerivedCaches

        writer.close(DerivedCaches(store, layout).state_key)
    except BaseException:
        writer.discard()
        raise
    return EmbedReport(provider.model_id, done, time.perf_counter() - t0)


_FOLDER = "the worker folding the texts into vectors"


def _fold_all(store: GraphStore, provider: EmbeddingProvider, phases: Phases, total: int,
              rows: Iterable[tuple[NamedNode, str, NamedNode]] | None, writer: MatrixWriter) -> int:
    """``_stream_all``'s folding and loading: the number of fragments done."""
    from acms.retrieval.embedding_fold import Folder

    with phases.phase("embeddings", total), Folder(provider, total, share=rows is not None) as folder:
        done = 0
        batch: list[tuple[NamedNode, str, NamedNode]] = []
        folding: tuple[list[tuple[NamedNode, str, NamedNode]], Future[np.ndarray]] | None = None

        def write(rows: list[tuple[NamedNode, str, NamedNode]], vectors: np.ndarray) -> None:
            nonlocal done
            quads = []
            for (frag, _, g), vec in zip(rows, vectors, strict=True):
                quads.append(Quad(frag, UKO.vector, encode(vec), g))
            store.load(quads, bulk=True)
            writer.add([frag.value for frag, _, _ in rows], vectors)
            done += len(rows)
            phases.update(done, total)

        def flush() -> None:
            """Start folding the batch; write the one before it (folded meanwhile, in order)."""
            nonlocal batch, folding
            started = (batch, folder.fold([text for _, text, _ in batch]))
            batch = []
            if folding is not None:
                write(folding[0], helper_result(folding[1], _FOLDER))
            folding = started

        # Read while writing: an Oxigraph query reads the store as it was when it began (repeatable
        # read; tests/retrieval/test_streamed_embedding.py), so the vectors loaded meanwhile neither
        # show up nor disturb it, and no more than two batches of texts are held (the list of
        # every text grew with the project).
        for row in searchable_texts(store) if rows is None else rows:
            batch.append(row)
            if len(batch) >= STREAM_BATCH:
                flush()
        if batch:
            flush()
        if folding is not None:
            write(folding[0], helper_result(folding[1], _FOLDER))
    return done


@contextmanager
def _provider(name: str, texts: Callable[[], list[str]], layout: IndexLayout,
              settings: Settings, phases: Phases) -> Iterator[EmbeddingProvider]:
    """The provider to embed with. A freshly fitted LSA model (fitted on ``texts()``) is staged beside
    the cache and lands in it only when the body succeeds, so a failed migration keeps the old model."""
    if name != "lsa":
        yield make_provider(name, settings, layout)
        return
    from acms.embeddings.lsa import FIT_STEPS, LsaModel, LsaProvider  # scipy: fitting only, not the query path

    with phases.phase("fitting", FIT_STEPS):  # reading the sample, then the fit's steps
        sample = texts()
        fitted = LsaModel.fit(sample, dimensions=settings.embedding_dims, progress=phases.update) if sample else None
        del sample
        release_freed()  # the fit's matrices
    if fitted is None:
        raise ProviderError("nothing to embed: the index has no fragments")
    staged = _staged_path(layout)
    fitted.save(staged)
    try:
        yield LsaProvider(fitted)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    _land_model(staged, layout)


def _land_model(staged: Path, layout: IndexLayout) -> None:
    """The fitted model in place; the one it replaces is kept beside it under its id until a later
    run finds the index on the new one (``prune_kept_models``): an index run that refits and is then
    killed leaves the graph on the old model, whose queries and folds must still find it."""
    target = layout.cache_dir("lsa")
    old = lsa_model_id(target)
    if old:
        kept = layout.cache_dir(f"{_KEPT}{old}")
        shutil.rmtree(kept, ignore_errors=True)
        target.rename(kept)
    shutil.rmtree(target, ignore_errors=True)
    staged.rename(target)


def prune_kept_models(store: GraphStore, layout: IndexLayout) -> None:
    """Remove the kept models the index no longer uses (the graph's state is committed when a run starts)."""
    model = active_model(store)
    for path in layout.cache.glob(f"{_KEPT}*"):
        if model is None or path.name != f"{_KEPT}{model.model_id}":
            shutil.rmtree(path, ignore_errors=True)


def lsa_model_id(directory: Path) -> str:
    """The id of the LSA model saved in ``directory`` ("" for none)."""
    try:
        return str(json.loads((directory / "manifest.json").read_text(encoding="utf-8")).get("model_id", ""))
    except (OSError, ValueError, AttributeError):
        return ""


_KEPT = "lsa-kept-"  # a replaced model, kept under its id while the graph may still be on it


_STAGED = ".lsa-"  # a fitted model staged beside the cache until its embedding lands


def _staged_path(layout: IndexLayout) -> Path:
    """A fresh name beside the cache for a fitted model until its embedding lands (``_land_model``)."""
    staged = Path(tempfile.mkdtemp(dir=_ensure(layout.cache), prefix=_STAGED))
    shutil.rmtree(staged)
    return staged


def remove_staged_models(cache: Path) -> None:
    """Remove the staged models a killed writer left in ``cache``; only a writer (it holds the index
    lock, and only writers fit) calls this."""
    if cache.is_dir():
        for path in cache.glob(f"{_STAGED}*"):
            shutil.rmtree(path, ignore_errors=True)


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
