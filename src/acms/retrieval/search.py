"""Ranked fragment search: numpy scores the corpus once, SPARQL describes and ranks the candidates.

keyword = BM25 (bm25s over code-aware tokens), vector = cosine to the query's embedding, hybrid =
both, normalised to [0, 1] and weighted 0.5 / 0.5. The vector signal degrades to nothing with a
warning when the provider is unhealthy, times out or has no vectors yet; the keyword signal stays.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from pyoxigraph import Literal, NamedNode

from acms.config import Settings
from acms.embeddings.base import EmbeddingProvider
from acms.errors import ProviderError, UsageError
from acms.retrieval.caches import DerivedCaches
from acms.retrieval.modes import Mode
from acms.sparql import catalog
from acms.sparql.functions import ScoreTables, score_literal
from acms.store.layout import IndexLayout
from acms.store.protocol import GraphStore
from acms.vocab import XSD

CANDIDATE_FACTOR = 2  # candidates per signal = k x this, before the SPARQL ranking (cost is linear in it)
MIN_SIMILARITY = 0.05  # cosine below this is noise, not a vector signal


@dataclass(frozen=True)
class Hit:
    fragment: str
    entity: str
    kind: str
    name: str
    lod: str
    path: str
    start_line: int
    end_line: int
    text: str
    tier: str
    keyword: float
    vector: float
    score: float

    @property
    def source_ref(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"

    @property
    def why(self) -> str:
        parts = []
        if self.keyword > 0:
            parts.append(f"keyword {self.keyword:.2f}")
        if self.vector > 0:
            parts.append(f"vector {self.vector:.2f}")
        return ", ".join(parts) or "no signal"


@dataclass
class SearchResult:
    hits: list[Hit]
    warnings: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)


class Searcher:
    """Holds the store and caches for a series of searches (the server keeps one)."""

    def __init__(self, store: GraphStore, layout: IndexLayout, settings: Settings) -> None:
        self.store, self.layout, self.settings = store, layout, settings
        self.caches = DerivedCaches(store, layout)
        self._provider: EmbeddingProvider | None = None
        self._provider_checked = False

    def provider(self) -> EmbeddingProvider | None:
        """The query embedder, checked against the index's model once per Searcher (one graph state)."""
        if not self._provider_checked:
            from acms.retrieval.embedding_store import query_provider  # vectors: only a search that uses them

            self._provider = query_provider(self.store, self.settings, self.layout)
            self._provider_checked = True
        return self._provider

    def score_tables(self, text: str, mode: Mode, k: int, result: SearchResult) -> ScoreTables:
        tables = ScoreTables()
        n = max(1, k * CANDIDATE_FACTOR)
        if mode in (Mode.KEYWORD, Mode.HYBRID):
            t = time.perf_counter()
            top = self.caches.keyword().top(text, n)
            best = top[0][1] if top else 0.0
            tables.keyword = {fid: s / best for fid, s in top} if best > 0 else {}
            result.timings_ms["keyword"] = 1000 * (time.perf_counter() - t)
        if mode in (Mode.VECTOR, Mode.HYBRID):
            t = time.perf_counter()
            tables.vector = self._vector_scores(text, n, result)
            result.timings_ms["vector"] = 1000 * (time.perf_counter() - t)
        return tables

    def _vector_scores(self, text: str, n: int, result: SearchResult) -> dict[str, float]:
        try:
            provider = self.provider()
            if provider is None:
                result.warnings.append("vector signal unavailable: the index has no vectors yet")
                return {}
            if not provider.healthcheck():
                result.warnings.append(f"vector signal unavailable: provider {provider.model_id} failed its healthcheck")
                return {}
            query = provider.embed([text])[0]
        except ProviderError as exc:  # a ModelMismatch is no ProviderError: it goes to the caller
            result.warnings.append(f"vector signal unavailable: {exc.message}")
            return {}
        matrix = self.caches.vectors(provider.model_id)
        return {fid: s for fid, s in matrix.top(query, n) if s >= MIN_SIMILARITY}

    def search(self, text: str, mode: Mode = Mode.HYBRID, k: int = 10) -> SearchResult:
        if not text.strip():
            raise UsageError("the search text is empty")
        if k < 1:
            raise UsageError("-k must be at least 1")
        result = SearchResult(hits=[])
        tables = self.score_tables(text, mode, k, result)
        candidates = sorted(set(tables.keyword) | set(tables.vector))
        if not candidates:
            return result
        wk, wv = {Mode.KEYWORD: (1.0, 0.0), Mode.VECTOR: (0.0, 1.0), Mode.HYBRID: (0.5, 0.5)}[mode]
        t = time.perf_counter()
        rows = self.store.select(
            catalog.text("search/fragments"),
            {"frag kw vec": [(NamedNode(c), score_literal(tables.keyword.get(c, 0.0)),
                              score_literal(tables.vector.get(c, 0.0))) for c in candidates],
             "wk": Literal(str(wk), datatype=XSD.double), "wv": Literal(str(wv), datatype=XSD.double)},
        )
        result.timings_ms["sparql"] = 1000 * (time.perf_counter() - t)
        seen: set[str] = set()
        for r in rows:
            fid = r["frag"].value
            if fid in seen:
                continue
            seen.add(fid)
            result.hits.append(Hit(
                fragment=fid, entity=r["entity"].value, kind=r["kind"].value.rsplit("#", 1)[-1],
                name=r["name"].value, lod=r["lod"].value, path=r["path"].value,
                start_line=int(r["start"].value), end_line=int(r["end"].value), text=r["text"].value,
                tier=r["tier"].value.rsplit("/", 1)[-1], keyword=float(r["kw"].value),
                vector=float(r["vec"].value), score=float(r["score"].value),
            ))
            if len(result.hits) >= k:
                break
        return result
