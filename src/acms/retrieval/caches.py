"""Derived caches (keyword postings, the ranking index, the vector matrix), rebuilt from the graph when stale.

Both are keyed by the graph's state (the latest IndexRun and EmbeddingModel IRIs), so a cache
written before any later index run or migration is never used: it is rebuilt on first use.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

from acms.index.keyword import KeywordIndex
from acms.index.scratch import sweep
from acms.index.vectors import VectorMatrix, decode
from acms.retrieval.corpus_read import CorpusReader, CorpusRow
from acms.retrieval.corpus_spill import read_others, read_places, read_spill
from acms.memory import release_freed
from acms.index.token_table import TokenizedLines, TokenTable
from acms.ranking.index import CONTAINER, NESTING, TEST_SCOPE, FragmentPlace, RankingIndex
from acms.ranking.roles import in_test_scope
from acms.ranking.window_tokens import file_windows, ranges
from acms.sparql import catalog
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore
from acms.store.protocol import GraphStore


BUILD_STEPS = 4  # most rows read and tokenised (search/corpus-full.rq); the rest; keyword saved; ranking saved


class _HasKey(Protocol):
    @property
    def key(self) -> str: ...


_Keyed = TypeVar("_Keyed", bound=_HasKey)


class DerivedCaches:
    def __init__(self, store: GraphStore, layout: IndexLayout, progress: Callable[[int], object] | None = None,
                 spill: Path | None = None, complete: bool = False) -> None:
        """``progress(step)`` hears of each of ``BUILD_STEPS`` steps of building the keyword and ranking
        caches (a standard library's took ~20 s). ``spill``: the corpus rows the index run that made
        this graph state spilled (:mod:`acms.retrieval.corpus_spill`), read instead of the store's join;
        ``complete``: the spill holds every searchable fragment and place as the store does (the run
        found none in the store and moved none to another tier), so the store is not asked for the rest."""
        self.store = store
        self.layout = layout
        self._spill = spill
        self._complete = complete and spill is not None
        self._progress = progress or (lambda _step: None)
        self.rebuilt: list[str] = []
        self._keyword: KeywordIndex | None = None  # loaded once per instance (one graph state)
        self._vectors: VectorMatrix | None = None
        self._ranking: RankingIndex | None = None

    @cached_property
    def _state(self) -> tuple[str, str]:
        rows = self.store.select(catalog.text("index/state"))
        row = rows[0] if rows else {}
        return _v(row.get("run")), _v(row.get("model"))

    @cached_property
    def state_key(self) -> str:
        """The vector cache's key: the last index run and the embedding model."""
        run, model = self._state
        return hashlib.sha256(f"{run}|{model}".encode()).hexdigest()[:16]

    @cached_property
    def text_key(self) -> str:
        """The keyword and ranking caches' key: the last index run. Texts, names and places change only
        in index runs; a new embedding model does not touch them, so an index run builds these caches
        before its embeddings (issue 14: on the heap the files' phase left clean, see
        ``IndexRun._after_files``) and a model migration keeps them."""
        run, _ = self._state
        return hashlib.sha256(f"{run}|text".encode()).hexdigest()[:16]

    @cached_property
    def corpus(self) -> list[CorpusRow]:
        """The rows of ``search/corpus.rq`` without their vectors (``_load_vectors`` reads those itself),
        as plain strings and numbers, sorted by fragment as its ORDER BY sorts them (read as
        :class:`CorpusReader` reads them; the caches' build does not hold them: for tests and benches)."""
        reader = CorpusReader(self.store)
        rows = list(reader.rows())
        rows = [r for i, r in enumerate(rows) if i >= reader.full or r.frag not in reader.dropped]
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
        or stale one is simply rebuilt by the caller. What a killed builder left beside it goes first
        (``index.scratch.sweep``: a listing and a lock try), so a reader that builds nothing clears it too."""
        sweep(directory.parent)
        try:
            index = load(directory)
        except Exception:  # noqa: BLE001
            return None
        return index if index.key == self.text_key else None

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
        ranking index tokenised each again for its windows. Here each text is tokenised once, line by
        line (``TokenTable``), as its row streams in (:class:`CorpusReader`: no dicts of names or places),
        and only its token numbers are kept, with a few numbers and shared strings per row
        (``_Rows``): the keyword documents (the ``search_terms`` of the owner's name, its qualified
        name, then the text: those of the one string the text-based build joined) and the windows are
        slices of them, handed to the builders a few documents at a time. The rows, their order and both
        indexes are those of ``corpus`` and the text-based builders
        (``tests/retrieval/test_caches_one_pass.py``).
        """
        step = self._progress
        table = TokenTable()
        rows = _Rows()
        spill = self._spill
        reader = CorpusReader(self.store, then=lambda: step(1), full=None if spill is None else read_spill(spill),
                              ask=read_others(spill) if spill is not None and self._complete else None)
        for row in reader.rows():
            rows.add(row, table)
        order = rows.order(reader.full, reader.dropped)
        text = table.lines()
        del table
        step(2)
        if keyword:
            built = KeywordIndex.from_chunks([rows.frags[i] for i in order], rows.documents(order, text),
                                             text.tokens, spill_dir=self.layout.cache)
            built.save(self.layout.cache_dir("keyword"), key=self.text_key)
            # mapped, not held; another process rebuilding the same cache may be swapping the directory
            # at this moment (a reader beside a writer): then the index just built is used as it is
            self._keyword = self._saved(KeywordIndex.load, self.layout.cache_dir("keyword")) or built
            del built
            self.rebuilt.append("keyword")
            release_freed()
        step(3)
        if ranking:
            places = self._places(rows, order)
            del rows, order  # the places hold what the ranking index needs of them
            release_freed()
            windows = file_windows(places, text)  # the last use of the texts' token numbers: let them go
            del text
            release_freed()
            built_ranking = RankingIndex.from_windows(places, windows)
            del places, windows
            built_ranking.save(self.layout.cache_dir("ranking"), key=self.text_key)
            self._ranking = self._saved(RankingIndex.load, self.layout.cache_dir("ranking")) or built_ranking
            del built_ranking
            self.rebuilt.append("ranking")
            release_freed()
        step(4)

    def _places(self, rows: _Rows, order: list[int]) -> list[FragmentPlace]:
        """The ranking index's rows: those with a place in a file that has a path, in ``order``."""
        spilled = self._spilled_places() if self._complete else None
        if spilled is not None:
            paths, kinds, outlines, nesting = spilled
        else:
            paths = {r["file"].value: r["path"].value for r in self._solutions("search/file-paths")}
            kinds = {r["frag"].value: r["kind"].value.rsplit("#", 1)[-1]
                     for r in self._solutions("search/class-fragments")}
            outlines = {r["frag"].value: r["outline"].value for r in self._solutions("search/class-outlines")}
            nesting = {r["frag"].value: r["outline"].value for r in self._solutions("search/function-outlines")}
        places = []
        for i in order:
            file = rows.files[i]
            if file is None or file not in paths:
                continue
            frag, name, qn, path = rows.frags[i], rows.names[i], rows.qns[i], paths[file]
            container = (CONTAINER.get(kinds.get(frag, ""), 0) or (TEST_SCOPE if qn is not None and in_test_scope(qn, path) else 0)
                         or (NESTING if frag in nesting else 0))
            places.append(FragmentPlace(frag, path, rows.starts[i], rows.ends[i], container,
                                        (name or "") if qn is not None else "", outlines.get(frag) or nesting.get(frag, ""),
                                        rows.firsts[i], rows.counts[i], qualified=qn or ""))
        return places

    def _spilled_places(self) -> tuple[dict[str, str], dict[str, str], dict[str, str], dict[str, str]] | None:
        """``_places``' four dicts from the places a complete spill holds, with the ontology's classes
        applied as the place queries apply them (issue 14: those queries took ~2-4 s a standard library).
        None, and the queries decide, when the store's dicts would depend on their rows' order: a
        fragment given two kinds or outlines."""
        assert self._spill is not None
        closure: dict[str, set[str]] = {}
        for r in self._solutions("search/kind-closure"):
            closure.setdefault(r["type"].value, set()).add(r["kind"].value.rsplit("#", 1)[-1])
        paths: dict[str, str] = {}
        kinds: dict[str, str] = {}
        outlines: dict[str, str] = {}
        nesting: dict[str, str] = {}
        for places in read_places(self._spill):  # a group at a time: every entity's fragments are in the spill
            if places is None:
                return None
            paths.update(places.paths)
            for cls, nests, language, micro, macro in places.owners:
                of = closure.get(cls, set())
                wanted = [(kinds, kind) for kind in sorted(of & _CONTAINERS)]  # each micro fragment of the entity:
                if micro and macro and of & _OUTLINED:
                    wanted += [(outlines, outline) for outline in macro]  # ... its outlines
                if micro and macro and nests and of & _FUNCTIONS and language == "python":
                    wanted += [(nesting, outline) for outline in macro]
                for into, value in wanted:
                    if not all(into.setdefault(frag, value) == value for frag in micro):
                        return None  # two values for one fragment: the query's last row would decide
        return paths, kinds, outlines, nesting

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


def _v(term: object) -> str:
    return "" if term is None else str(getattr(term, "value", term))


class _Rows:
    """The corpus's rows as the caches' build keeps them: per row its fragment, owner's name and qualified
    name and file (shared strings), its place's lines, its head's tokens (the name's and qualified
    name's, in ``heads``) and its text's lines in the ``TokenTable``: no text, no tuple per row."""

    def __init__(self) -> None:
        self.frags: list[str] = []
        self.names: list[str | None] = []
        self.qns: list[str | None] = []
        self.files: list[str | None] = []
        self.starts, self.ends = array("q"), array("q")
        self.heads = array("i")
        self.head_ends = array("q")  # row i's head is heads[head_ends[i - 1]:head_ends[i]]
        self.firsts, self.counts = array("q"), array("q")
        self._names: dict[str, str] = {}
        # The last text tokenised as lines start..end of its file: (file, start, its lines, its first
        # line in the table). A row whose text is a run of those lines (a method after its class, a
        # nested function after its function) takes them from the table instead of being tokenised
        # again: no term spans a line break, so its lines' tokens are the same.
        self._block: tuple[str, int, list[str], int] | None = None

    def __len__(self) -> int:
        return len(self.frags)

    def add(self, row: CorpusRow, table: TokenTable) -> None:
        first, count_ = self._lines_of(row, table)
        self.frags.append(row.frag)
        self.names.append(None if row.name is None else self._names.setdefault(row.name, row.name))
        self.qns.append(row.qn)
        self.files.append(row.file)
        self.starts.append(-1 if row.start is None else row.start)
        self.ends.append(-1 if row.end is None else row.end)
        self.heads.extend(table.ids(row.name or ""))
        self.heads.extend(table.ids(row.qn or ""))
        self.head_ends.append(len(self.heads))
        self.firsts.append(first)
        self.counts.append(count_)

    def _lines_of(self, row: CorpusRow, table: TokenTable) -> tuple[int, int]:
        """(first line in ``table``, number of lines) of the row's text, tokenised only when it is not a
        run of the lines tokenised last."""
        block, start, end = self._block, row.start, row.end
        if block is not None and start is not None and end is not None and row.file == block[0]:
            _, at, lines, first = block
            if at <= start and end < at + len(lines) and row.text == "\n".join(lines[start - at : end - at + 1]):
                return first + start - at, end - start + 1
        first, count_ = table.add_lines(row.text)
        if row.file is not None and start is not None and end is not None and end - start + 1 == count_:
            self._block = (row.file, start, row.text.split("\n"), first)
        return first, count_

    def order(self, full: int, dropped: set[str]) -> list[int]:
        """The rows to use (not the first ``full`` rows of a fragment in ``dropped``), sorted by fragment
        (stable: as ``corpus`` sorts them)."""
        frags = self.frags
        keep = (i for i in range(len(frags)) if i >= full or frags[i] not in dropped) if dropped else range(len(frags))
        return sorted(keep, key=frags.__getitem__)

    def documents(self, order: list[int], text: TokenizedLines) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The keyword documents of the rows in ``order`` (head tokens, then every line's), a few at a time."""
        heads = np.frombuffer(self.heads, dtype=np.int32) if len(self.heads) else np.zeros(0, dtype=np.int32)
        head_ends = np.frombuffer(self.head_ends, dtype=np.int64)
        firsts, counts = np.frombuffer(self.firsts, dtype=np.int64), np.frombuffer(self.counts, dtype=np.int64)
        line_ends = np.concatenate([[0], np.asarray(text.line_ends, dtype=np.int64)])
        for start in range(0, len(order), DOCUMENTS_AT_ONCE):
            rows = np.asarray(order[start : start + DOCUMENTS_AT_ONCE], dtype=np.int64)
            h1 = head_ends[rows]
            h0 = np.where(rows > 0, head_ends[rows - 1], 0)
            t0, t1 = line_ends[firsts[rows]], line_ends[firsts[rows] + counts[rows]]
            head_len, text_len = h1 - h0, t1 - t0
            at = np.zeros(rows.size, dtype=np.int64)
            np.cumsum((head_len + text_len)[:-1], out=at[1:])
            out = np.empty(int((head_len + text_len).sum()), dtype=np.int32)
            out[ranges(at, head_len)] = heads[ranges(h0, head_len)]
            out[ranges(at + head_len, text_len)] = text.ids[ranges(t0, text_len)]
            yield out, head_len + text_len


DOCUMENTS_AT_ONCE = 8192  # keyword documents handed to the builder at once
_CONTAINERS = frozenset({"Class", "Namespace", "Module"})  # search/class-fragments.rq's kinds
_OUTLINED = frozenset({"Class", "Namespace"})  # search/class-outlines.rq's
_FUNCTIONS = frozenset({"Function", "Method"})  # search/function-outlines.rq's
