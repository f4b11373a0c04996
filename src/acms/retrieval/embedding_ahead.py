"""A first index's LSA model fitted, and every text folded, in a worker process while the indexing
process builds the keyword and ranking caches.

Why: after a first index's files, the caches' build (~11-15 s a standard library), the fit
(~5-7 s) and the embeddings (~7-9 s) ran one after the other, the first two on one of the two cores.
None needs the other: the caches read the spill, and the fit and the folding read only the spill's
texts. So a worker fits the model on the same sample (``embedding_store.fit_sample``) and saves it;
a fresh one (the fit's heap, ~200 MB, is let go before the caches' build peaks: a 4x standard
library's caches phase peaked at 1,077 MB with one worker doing both) folds the texts in the same
batches, in the same order, into the graphs the store holds them in (the tier policy ran before),
and writes the vectors both as N-Quads and as raw rows. The indexing process then only loads them
(``embedding_store._land_ahead``): the store, the vector cache and the model are those of the
streamed embedding it replaces (``tests/retrieval/test_embedding_ahead.py``).

A re-index that started over (a migration) keeps the index's model: no fragment has a vector, and a
worker folds every text with that model (nothing is fitted) while the caches are built
(``embedding_store._land_kept``; a standard library's migration 40 -> 32.5 s).

Only for a complete spill (nothing rewrote the texts since) with the LSA provider and at least
``AHEAD_FROM`` fragments (a worker's start-up is ~0.3 s). The worker touches no store: it
writes into a directory of its own beside the spill, which :func:`corpus_spill.remove_spills`
removes with the spill.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import numpy as np

from acms.lifetime import helper_result, helper_start, pool_context

__all__ = ["AHEAD_FROM", "EmbeddingAhead", "Folded", "fit_ahead", "fold_ahead"]

AHEAD_FROM = 16_384  # fragments from which a first index's embedding is made ahead in a worker

MODEL_DIR = "model"
NQUADS = "vectors.nq"
ROWS = "rows.f32"


@dataclass(frozen=True)
class Folded:
    """What the workers made in ``directory``: the model (``model/``), the vectors as N-Quads
    (``vectors.nq``, two lines a fragment) and as rows (``rows.f32``, little-endian float32), and the
    fragments of each batch folded, in order."""

    directory: Path
    batches: list[list[str]]
    dimensions: int

    @property
    def model(self) -> Path:
        return self.directory / MODEL_DIR

    @property
    def total(self) -> int:
        return sum(map(len, self.batches))

    def nquads(self, size: int) -> Iterator[tuple[bytes, int]]:
        """The N-Quads in chunks of whole lines of about ``size`` bytes, each with the number of
        fragments whose two lines are all read by then."""
        read = 0
        with open(self.directory / NQUADS, "rb") as stream:
            while lines := stream.readlines(size):
                read += len(lines)
                yield b"".join(lines), read // 2

    def rows(self) -> Iterator[tuple[list[str], np.ndarray]]:
        """Each batch's fragments and vectors, in the order folded (one batch held at a time)."""
        row_bytes = 4 * self.dimensions
        with open(self.directory / ROWS, "rb") as stream:
            for ids in self.batches:
                yield ids, np.frombuffer(stream.read(len(ids) * row_bytes), dtype="<f4").reshape(len(ids), self.dimensions)


def fit_ahead(spill: Path, out: Path, dimensions: int, sample_size: int) -> None:
    """In a worker: fit on the spill's sample and save the model into ``out``."""
    from acms.embeddings.lsa import LsaModel
    from acms.retrieval.corpus_spill import read_texts
    from acms.retrieval.embedding_store import fit_sample

    sample = fit_sample(read_texts(spill), sample_size)
    if not sample:
        from acms.errors import ProviderError

        raise ProviderError("nothing to embed: the index has no fragments")
    LsaModel.fit(sample, dimensions=dimensions).save(out / MODEL_DIR)


def fold_ahead(spill: Path, out: Path, hot: frozenset[str], batch: int, model: Path | None = None) -> Folded:
    """In a worker (a fresh one: the fit's heap is not kept while the caches' build peaks): fold every
    text of the spill with the saved model (``model``, else the one fitted into ``out``), write the
    N-Quads and the rows into ``out``."""
    import pyoxigraph as ox

    from acms.embeddings.lsa import LsaModel, LsaProvider
    from acms.index.vectors import encode
    from acms.retrieval.corpus_spill import read_texts
    from acms.vocab import TIER_HOT, TIER_WARM, UKO

    provider = LsaProvider(LsaModel.load(out / MODEL_DIR if model is None else model))
    batches: list[list[str]] = []
    texts = read_texts(spill)
    with open(out / NQUADS, "wb") as nquads, open(out / ROWS, "wb") as rows:
        while chunk := list(islice(texts, batch)):
            vectors = np.asarray(provider.embed([text for _, text in chunk]), dtype=np.float32)
            quads = []
            for (frag, _), vec in zip(chunk, vectors, strict=True):
                node, g = ox.NamedNode(frag), TIER_HOT if frag in hot else TIER_WARM
                quads.append(ox.Quad(node, UKO.vector, encode(vec), g))
            nquads.write(ox.serialize(quads, format=ox.RdfFormat.N_QUADS))
            rows.write(np.ascontiguousarray(vectors, dtype="<f4").tobytes())
            batches.append([frag for frag, _ in chunk])
    return Folded(out, batches, provider.dimensions)


class EmbeddingAhead:
    """The workers making a first index's embedding; ``result()`` waits for them, ``close()`` stops them.

    A ``concurrent.futures`` pool, not ``multiprocessing.Pool``: a worker of the latter killed mid-task
    (the OOM killer) left its result waited for forever, so ``acms index`` hung in "fitting"; here the
    pool breaks and ``result()`` raises (``lifetime.helper_result``)."""

    def __init__(self, spill: Path, out: Path, dimensions: int, hot: set[str], kept: Path | None = None) -> None:
        """``kept``: the index's model, kept by a re-index that started over: the texts are folded with
        it, and nothing is fitted."""
        from acms.retrieval import embedding_store

        # the fit, then the folding in a fresh process; neither outlives this one (a kill -9)
        self._pool = ProcessPoolExecutor(max_workers=1, mp_context=pool_context(), initializer=helper_start,
                                         initargs=(os.getpid(),), max_tasks_per_child=1)
        out.mkdir(parents=True, exist_ok=True)
        self.kept = kept
        self._fitted = None if kept is not None else self._pool.submit(
            fit_ahead, spill, out, dimensions, embedding_store.FIT_SAMPLE)
        self._folded = self._pool.submit(fold_ahead, spill, out, frozenset(hot), embedding_store.STREAM_BATCH, kept)

    def result(self) -> Folded:
        """The workers' work (their error raised here: a ``ProviderError`` when nothing can be fitted)."""
        if self._fitted is not None:
            helper_result(self._fitted, "the worker fitting the embedding model")
        return helper_result(self._folded, "the worker folding the texts into vectors")

    def close(self) -> None:
        """Stop the workers (done or not) at once; what they wrote goes with the spill."""
        for process in list((self._pool._processes or {}).values()):
            process.kill()  # the pool has no way to stop a running task before Python 3.14's kill_workers()
        self._pool.shutdown(wait=True, cancel_futures=True)
