"""Derived caches (keyword postings, the ranking index, the vector matrix), rebuilt from the graph when stale.

Both are keyed by the graph's state (the latest IndexRun and EmbeddingModel IRIs), so a cache
written before any later index run or migration is never used: it is rebuilt on first use.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar

import numpy as np

from acms.index.keyword import KeywordIndex
from acms.index.vectors import VectorMatrix, decode
from acms.ranking.index import CONTAINER, FragmentRow, RankingIndex
from acms.sparql import catalog
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore
from acms.store.protocol import GraphStore


class CorpusRow(NamedTuple):
    """One row of ``search/corpus.rq`` (bar the vector): None where the query leaves a variable unbound."""

    frag: str
    text: str
    name: str | None
    qn: str | None
    start: int | None
    end: int | None
    file: str | None


class _HasKey(Protocol):
    @property
    def key(self) -> str: ...


_Keyed = TypeVar("_Keyed", bound=_HasKey)


class DerivedCaches:
    def __init__(self, store: GraphStore, layout: IndexLayout) -> None:
        self.store = store
        self.layout = layout
        self.rebuilt: list[str] = []
        self._keyword: KeywordIndex | None = None  # loaded once per instance (one graph state)
        self._vectors: VectorMatrix | None = None
        self._ranking: RankingIndex | None = None

    @cached_property
    def state_key(self) -> str:
        rows = self.store.select(catalog.text("index/state"))
        row = rows[0] if rows else {}
        raw = f"{_v(row.get('run'))}|{_v(row.get('model'))}"
        return hashlib.sha256(raw.encode()).hexdigest()[:16]

    @cached_property
    def corpus(self) -> list[CorpusRow]:
        """The rows of ``search/corpus.rq`` without their vectors (``_load_vectors`` reads those itself),
        as plain strings and numbers, sorted by fragment as its ORDER BY sorts them.

        Read as three queries joined here (the required part, the owners' names, the fragments'
        places: OPTIONAL semantics, graph by graph): on a standard library's index that took ~8 s
        against ~13 s for the one query, whose OPTIONALs and ORDER BY are slow in Oxigraph. Rows of
        strings rather than of pyoxigraph terms: 0.45 GB of dicts of terms for a standard library's
        73k fragments were the caches' largest part. ``tests/retrieval/test_corpus_rows.py`` checks
        the rows are the query's.
        """
        names: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
        for r in self._solutions("search/corpus-names"):
            got = names.setdefault((r["entity"].value, r["g"].value), ([], []))
            if (name := _get(r, "name")) is not None:
                got[0].append(name.value)
            if (qn := _get(r, "qn")) is not None:
                got[1].append(qn.value)
        places: dict[tuple[str, str], list[tuple[int, int, str]]] = {}
        for r in self._solutions("search/corpus-places"):
            places.setdefault((r["frag"].value, r["g"].value), []).append(
                (int(r["start"].value), int(r["end"].value), r["file"].value))
        rows: list[CorpusRow] = []
        for r in self._solutions("search/corpus-base"):
            frag, g, text = r["frag"].value, r["g"].value, r["text"].value
            owner_names, owner_qns = names.get((r["entity"].value, g), ([], []))
            for name in owner_names or [None]:
                for qn in owner_qns or [None]:
                    for place in places.get((frag, g)) or [None]:
                        start, end, file = place if place is not None else (None, None, None)
                        rows.append(CorpusRow(frag, text, name, qn, start, end, file))
        rows.sort(key=lambda row: row.frag)
        return rows

    def _solutions(self, name: str) -> Iterable[Any]:
        """A saved SELECT's rows as a stream from the embedded store (no list of dicts of terms held:
        RSS stayed at its peak after such lists were freed), as ``select`` rows from any other."""
        if isinstance(self.store, OxigraphStore):
            return self.store.query_raw(catalog.text(name))  # type: ignore[return-value]
        return self.store.select(catalog.text(name))

    def keyword(self) -> KeywordIndex:
        if self._keyword is None:
            self._keyword = self._load_keyword()
        return self._keyword

    def _saved(self, load: Callable[[Path], _Keyed], directory: Path) -> _Keyed | None:
        """The cache saved in ``directory`` if it is for the current graph state; any unreadable
        or stale one is simply rebuilt by the caller."""
        try:
            index = load(directory)
        except Exception:  # noqa: BLE001
            return None
        return index if index.key == self.state_key else None

    def _load_keyword(self) -> KeywordIndex:
        directory = self.layout.cache_dir("keyword")
        saved = self._saved(KeywordIndex.load, directory)
        if saved is not None:
            return saved
        rows = self.corpus
        texts = (f"{row.name or ''} {row.qn or ''}\n{row.text}" for row in rows)  # not all held at once
        index = KeywordIndex.build([row.frag for row in rows], texts)
        index.save(directory, key=self.state_key)
        self.rebuilt.append("keyword")
        return index

    def ranking(self) -> RankingIndex:
        if self._ranking is None:
            self._ranking = self._load_ranking()
        return self._ranking

    def _load_ranking(self) -> RankingIndex:
        directory = self.layout.cache_dir("ranking")
        saved = self._saved(RankingIndex.load, directory)
        if saved is not None:
            return saved
        paths = {r["file"].value: r["path"].value for r in self.store.select(catalog.text("search/file-paths"))}
        kinds = {r["frag"].value: r["kind"].value.rsplit("#", 1)[-1]
                 for r in self.store.select(catalog.text("search/class-fragments"))}
        outlines = {r["frag"].value: r["outline"].value for r in self.store.select(catalog.text("search/class-outlines"))}
        index = RankingIndex.build(
            FragmentRow(r.frag, paths[r.file], r.start, r.end, r.text,  # type: ignore[arg-type]
                        CONTAINER.get(kinds.get(r.frag, ""), 0), (r.name or "") if r.qn is not None else "",
                        outlines.get(r.frag, ""))
            for r in self.corpus if r.file is not None and r.file in paths
        )
        index.save(directory, key=self.state_key)
        self.rebuilt.append("ranking")
        return index

    def vectors(self, model_id: str) -> VectorMatrix:
        if self._vectors is None or self._vectors.model_id != model_id:
            self._vectors = self._load_vectors(model_id)
        return self._vectors

    def _load_vectors(self, model_id: str) -> VectorMatrix:
        directory = self.layout.cache_dir("vectors")
        cached = VectorMatrix.load(directory)
        if cached is not None and cached.key == self.state_key and cached.model_id == model_id:
            return cached
        ids, rows = [], []
        for row in self.store.select(catalog.text("search/corpus")):
            vec = row.get("vector")
            if vec is not None:
                ids.append(row["frag"].value)
                rows.append(decode(vec.value))
        matrix = np.vstack(rows).astype(np.float32) if rows else np.zeros((0, 1), dtype=np.float32)
        built = VectorMatrix(ids, matrix, self.state_key, model_id)
        built.save(directory)
        self.rebuilt.append("vectors")
        return built


def _get(row: Any, name: str) -> Any:
    """A variable of a ``select`` row (dict, unbound: absent) or a pyoxigraph solution (unbound: None)."""
    return row.get(name) if isinstance(row, dict) else row[name]


def _v(term: object) -> str:
    return "" if term is None else str(getattr(term, "value", term))
