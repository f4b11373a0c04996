"""Derived caches (keyword postings, the ranking index, the vector matrix), rebuilt from the graph when stale.

Both are keyed by the graph's state (the latest IndexRun and EmbeddingModel IRIs), so a cache
written before any later index run or migration is never used: it is rebuilt on first use.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Iterable
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar

import numpy as np

from acms.index.keyword import KeywordIndex
from acms.index.vectors import VectorMatrix, decode
from acms.memory import release_freed
from acms.index.token_table import TokenizedLines, TokenTable
from acms.ranking.index import CONTAINER, TEST_SCOPE, FragmentPlace, RankingIndex
from acms.ranking.roles import in_test_scope
from acms.sparql import catalog
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore
from acms.store.protocol import GraphStore


BUILD_STEPS = 4  # names and places read; texts read and tokenised; keyword saved; ranking saved


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
    def __init__(self, store: GraphStore, layout: IndexLayout, progress: Callable[[int], object] | None = None) -> None:
        """``progress(step)`` hears of each of ``BUILD_STEPS`` steps of building the keyword and ranking
        caches (a standard library's took ~20 s)."""
        self.store = store
        self.layout = layout
        self._progress = progress or (lambda _step: None)
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
        names, places = self._owner_names(), self._places()
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
        saved = self._saved(KeywordIndex.load, self.layout.cache_dir("keyword"))
        if saved is not None:
            return saved
        if self._ranking is None:  # stale too (the same graph state): built in the same pass
            self._ranking = self._saved(RankingIndex.load, self.layout.cache_dir("ranking"))
        self._build_text_caches(keyword=True, ranking=self._ranking is None)
        assert self._keyword is not None
        return self._keyword

    def ranking(self) -> RankingIndex:
        if self._ranking is None:
            self._ranking = self._load_ranking()
        return self._ranking

    def _load_ranking(self) -> RankingIndex:
        saved = self._saved(RankingIndex.load, self.layout.cache_dir("ranking"))
        if saved is not None:
            return saved
        if self._keyword is None:
            self._keyword = self._saved(KeywordIndex.load, self.layout.cache_dir("keyword"))
        self._build_text_caches(keyword=self._keyword is None, ranking=True)
        assert self._ranking is not None
        return self._ranking

    def _build_text_caches(self, *, keyword: bool, ranking: bool) -> None:
        """Build and save the keyword and/or ranking caches in one pass over the corpus's texts.

        Why one pass, and no texts kept (issue 14): both caches read every fragment's text, and the
        ranking index tokenised each again for its windows; on a standard library that held ~0.5 GB
        of texts, rows and window texts, growing with the project. Here each text is tokenised once,
        line by line (``TokenTable``), and only its token numbers are kept: the keyword documents
        (the ``search_terms`` of the owner's name, its qualified name, then the text: those of the
        one string the text-based build joined) and the windows are slices of them. The rows, their order and both indexes are those of
        ``corpus`` and the text-based builders (``tests/retrieval/test_caches_one_pass.py``).
        """
        step = self._progress
        names, places = self._owner_names(), self._places()
        step(1)
        table = TokenTable()
        heads = array("i")  # per row: its owner's name's and qualified name's tokens
        rows: list[tuple[str, int, int, int, int, str | None, str | None, tuple[int, int, str] | None]] = []
        for r in self._solutions("search/corpus-base"):
            frag, g = r["frag"].value, r["g"].value
            first, count_ = table.add_lines(r["text"].value)
            owner_names, owner_qns = names.get((r["entity"].value, g), ([], []))
            for name in owner_names or [None]:
                for qn in owner_qns or [None]:
                    head = len(heads)
                    heads.extend(table.ids(name or ""))
                    heads.extend(table.ids(qn or ""))
                    for place in places.get((frag, g)) or [None]:
                        rows.append((frag, head, len(heads), first, count_, name, qn, place))
        del names, places
        rows.sort(key=lambda row: row[0])
        text = table.lines()
        del table
        step(2)
        if keyword:
            built = self._keyword_from(rows, heads, text)
            built.save(self.layout.cache_dir("keyword"), key=self.state_key)
            # mapped, not held; another process rebuilding the same cache may be swapping the directory
            # at this moment (a reader beside a writer): then the index just built is used as it is
            self._keyword = self._saved(KeywordIndex.load, self.layout.cache_dir("keyword")) or built
            del built
            self.rebuilt.append("keyword")
            release_freed()
        step(3)
        if ranking:
            built_ranking = self._ranking_from(rows, text)
            built_ranking.save(self.layout.cache_dir("ranking"), key=self.state_key)
            self._ranking = self._saved(RankingIndex.load, self.layout.cache_dir("ranking")) or built_ranking
            del built_ranking
            self.rebuilt.append("ranking")
            release_freed()
        step(4)

    @staticmethod
    def _keyword_from(rows: list, heads: array, text: TokenizedLines) -> KeywordIndex:
        """Each row's document: its head's tokens, then its text's (every line's)."""
        head_ids = np.frombuffer(heads, dtype=np.int32) if len(heads) else np.zeros(0, dtype=np.int32)
        ends = text.line_ends
        parts: list[np.ndarray] = []
        lengths = np.zeros(len(rows), dtype=np.int64)
        for i, (_, h0, h1, first, count_, *_rest) in enumerate(rows):
            t0 = int(ends[first - 1]) if first else 0
            t1 = int(ends[first + count_ - 1])
            parts.append(head_ids[h0:h1])
            parts.append(text.ids[t0:t1])
            lengths[i] = h1 - h0 + t1 - t0
        flat = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
        return KeywordIndex.from_token_ids([row[0] for row in rows], flat, lengths, text.tokens)

    def _ranking_from(self, rows: list, text: TokenizedLines) -> RankingIndex:
        paths = {r["file"].value: r["path"].value for r in self._solutions("search/file-paths")}
        kinds = {r["frag"].value: r["kind"].value.rsplit("#", 1)[-1] for r in self._solutions("search/class-fragments")}
        outlines = {r["frag"].value: r["outline"].value for r in self._solutions("search/class-outlines")}
        places = [
            FragmentPlace(frag, paths[place[2]], place[0], place[1],
                          CONTAINER.get(kinds.get(frag, ""), 0)
                          or (TEST_SCOPE if qn is not None and in_test_scope(qn, paths[place[2]]) else 0),
                          (name or "") if qn is not None else "", outlines.get(frag, ""), first, count_)
            for frag, _, _, first, count_, name, qn, place in rows
            if place is not None and place[2] in paths
        ]
        return RankingIndex.from_tokens(places, text)

    def _owner_names(self) -> dict[tuple[str, str], tuple[list[str], list[str]]]:
        """(entity, graph) -> the names and qualified names of every entity that owns a fragment."""
        names: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
        for r in self._solutions("search/corpus-names"):
            got = names.setdefault((r["entity"].value, r["g"].value), ([], []))
            if (name := _get(r, "name")) is not None:
                got[0].append(name.value)
            if (qn := _get(r, "qn")) is not None:
                got[1].append(qn.value)
        return names

    def _places(self) -> dict[tuple[str, str], list[tuple[int, int, str]]]:
        """(fragment, graph) -> its (start line, end line, file) places (file IRIs shared, not repeated)."""
        places: dict[tuple[str, str], list[tuple[int, int, str]]] = {}
        files: dict[str, str] = {}
        for r in self._solutions("search/corpus-places"):
            file = r["file"].value
            places.setdefault((r["frag"].value, r["g"].value), []).append(
                (int(r["start"].value), int(r["end"].value), files.setdefault(file, file)))
        return places

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
