"""A first embedding's batches folded in a worker process while the indexing process reads the next
texts and writes the vectors of the last batch.

Why: a streamed first embedding of a standard library spent ~5 s folding texts (tokenising
them and summing their terms' components, single-threaded numpy and Python), ~4 s reading them from the
store and ~2 s loading the vectors, one after the other on one of two cores. With the folding in a
worker the two overlap. Only for the LSA provider (its model pickles; the others are a process or a
server of their own already) and only past ``WORKER_FROM`` fragments (a worker's start-up is ~0.3 s).
The vectors are those :meth:`LsaProvider.embed` gives in this process: the same code on the same batch
(``tests/retrieval/test_streamed_embedding.py``).

When the texts come from a first index's spill rather than the store, this process has little else to do,
so it folds every other batch itself while the worker folds the one before (``share``): a standard
library's embeddings phase went from ~10 to ~6.6 s.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from types import TracebackType

import numpy as np

from acms.embeddings.base import EmbeddingProvider
from acms.lifetime import helper_start, pool_context

__all__ = ["WORKER_FROM", "Folder"]

WORKER_FROM = 16_384  # fragments from which a first embedding folds in a worker process

_WORKER: dict[str, object] = {}


def _init(model: object, owner: int) -> None:
    from acms.embeddings.lsa import LsaProvider

    helper_start(owner)  # not left folding after a kill -9 of the indexing process
    _WORKER["provider"] = LsaProvider(model)  # type: ignore[arg-type]


def _fold(texts: Sequence[str]) -> np.ndarray:
    provider: EmbeddingProvider = _WORKER["provider"]  # type: ignore[assignment]
    return np.asarray(provider.embed(texts), dtype=np.float32)


class Folder:
    """``fold(texts)`` starts folding a batch and returns its vectors' future; batches finish in order."""

    def __init__(self, provider: EmbeddingProvider, total: int | None, *, share: bool = False) -> None:
        """``share``: this process folds every other batch itself (when it has little else to do: its
        texts come from a spill, not from the store)."""
        from acms.embeddings.lsa import LsaProvider

        self.provider = provider
        self._share = share
        self._turn = 0
        self._pool: ProcessPoolExecutor | None = None
        if isinstance(provider, LsaProvider) and (total or 0) >= WORKER_FROM and (os.cpu_count() or 1) >= 2:
            ctx = pool_context()
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=_init,
                                             initargs=(provider.model, os.getpid()))

    @property
    def in_worker(self) -> bool:
        return self._pool is not None

    def fold(self, texts: list[str]) -> Future[np.ndarray]:
        self._turn += 1
        if self._pool is not None and not (self._share and self._turn % 2 == 0):
            return self._pool.submit(_fold, texts)
        done: Future[np.ndarray] = Future()
        done.set_result(np.asarray(self.provider.embed(texts), dtype=np.float32))
        return done

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
