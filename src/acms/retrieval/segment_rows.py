"""The corpus's rows as the caches' build holds them on the way to a :class:`Segment`, and the places
the place queries give them."""

from __future__ import annotations

from array import array
from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from acms.index.ranges import ranges
from acms.index.string_column import taken
from acms.index.token_table import TokenizedLines, TokenTable
from acms.ranking.index import CONTAINER, RankingIndex
from acms.retrieval.corpus_read import CorpusRow
from acms.retrieval.segment import Segment

if TYPE_CHECKING:
    from acms.ingest import emit

__all__ = ["Places", "SegmentRows", "keyword_rows", "places_of"]

_CONTAINERS = frozenset({"Class", "Namespace", "Module"})  # search/class-fragments.rq's kinds
_OUTLINED = frozenset({"Class", "Namespace"})  # search/class-outlines.rq's
_FUNCTIONS = frozenset({"Function", "Method"})  # search/function-outlines.rq's


class Places(NamedTuple):
    """The place queries' answers as the caches use them: file -> path, fragment -> kind, outline,
    nesting outline; ``single``: no key had two values (the last row, in the store's order, won)."""

    paths: dict[str, str]
    kinds: dict[str, str]
    outlines: dict[str, str]
    nesting: dict[str, str]
    single: bool = True


class SegmentRows:
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
        self._copied: list[tuple[int, int]] = []  # (row, its first line in the text it is copied from)
        self.was: dict[int, int] = {}  # row -> the row of the segment it is copied from (the same document)

    def __len__(self) -> int:
        return len(self.frags)

    def add(self, row: CorpusRow, table: TokenTable, was: tuple[int, int, int] | None = None) -> None:
        """``was``: the row of the segment being updated that holds this row's fragment, with the same text,
        name and qualified name (its keyword document), and that row's first line and number of lines in
        the text ``copy_lines`` will be given: the lines are copied from there rather than tokenised."""
        if was is None:
            first, count_ = self._lines_of(row, table)
        else:
            self.was[len(self.frags)] = was[0]
            self._copied.append((len(self.frags), was[1]))
            first, count_ = -1, was[2]
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

    def add_written(self, written: Iterable[emit.SpillRow], table: TokenTable, old: Segment,
                    dropped: np.ndarray) -> set[str]:
        """The rows an index run wrote (its writer's), over ``old``, the segment being updated, whose rows
        ``dropped`` held the files they replace; their fragments. A fragment written again under its IRI
        has its text (the IRI holds its hash): with its name and qualified name, its keyword document is
        its old row's. Its lines are copied from that row rather than tokenised again, and the keyword
        index keeps the document (a 300-file switch's ~15k rows of 16k)."""
        olds = {frag: (at, name, qn) for frag, at, name, qn in zip(
            taken(old.frags, dropped), dropped.tolist(), taken(old.names, dropped), taken(old.qns, dropped))}
        firsts, counts = np.asarray(old.firsts, dtype=np.int64), np.asarray(old.counts, dtype=np.int64)
        given: set[str] = set()
        for spilled in written:
            row = CorpusRow(*spilled)
            at, name, qn = olds.get(row.frag, (None, None, None))
            same = at is not None and name == row.name and qn == row.qn and counts[at] == row.text.count("\n") + 1
            self.add(row, table, (at, int(firsts[at]), int(counts[at])) if same else None)  # type: ignore[index]
            given.add(row.frag)
        return given

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

    def copy_lines(self, table: TokenTable, text: TokenizedLines) -> None:
        """The lines of the rows added with ``lines``, copied from ``text`` (one block, after the rest)."""
        if self._copied:
            rows = np.asarray([row for row, _ in self._copied], dtype=np.int64)
            olds = np.asarray([first for _, first in self._copied], dtype=np.int64)
            counts = np.frombuffer(self.counts, dtype=np.int64)[rows] if len(self.counts) else np.zeros(0, np.int64)
            for row, first in zip(rows.tolist(), table.copied_lines(text, olds, counts).tolist()):
                self.firsts[row] = first
            self._copied.clear()

    def order(self, full: int, dropped: set[str]) -> list[int]:
        """The rows to use (not the first ``full`` rows of a fragment in ``dropped``), sorted by fragment
        (stable: as ``corpus`` sorts them)."""
        frags = self.frags
        keep = (i for i in range(len(frags)) if i >= full or frags[i] not in dropped) if dropped else range(len(frags))
        return sorted(keep, key=frags.__getitem__)

    def segment(self, order: list[int], text: TokenizedLines, places: Places, hot: list[str]) -> Segment:
        """The rows in ``order`` (fragment order) with their places, as a :class:`Segment` over ``text``."""
        frags = [self.frags[i] for i in order]
        numbers: dict[str, int] = {}
        file_of = np.fromiter((-1 if (f := self.files[i]) is None else numbers.setdefault(f, len(numbers))
                               for i in order), dtype=np.int32, count=len(order))
        rows = np.asarray(order, dtype=np.int64)
        head_ends = _numbers(self.head_ends, np.int64)
        head_starts = np.concatenate([[0], head_ends[:-1]]).astype(np.int64)
        head_len = (head_ends - head_starts)[rows]
        kinds, outlines, nesting = places.kinds, places.outlines, places.nesting
        return Segment(frags, [self.names[i] for i in order], [self.qns[i] for i in order], list(numbers),
                       [places.paths.get(f) for f in numbers], file_of, _numbers(self.starts, np.int64)[rows],
                       _numbers(self.ends, np.int64)[rows],
                       _numbers(self.heads, np.int32)[ranges(head_starts[rows], head_len)], np.cumsum(head_len),
                       _numbers(self.firsts, np.int64)[rows], _numbers(self.counts, np.int64)[rows],
                       np.fromiter((CONTAINER.get(kinds.get(f, ""), 0) for f in frags), dtype=np.int8, count=len(frags)),
                       [outlines.get(f) for f in frags], [nesting.get(f) for f in frags], text, hot)


def places_of(written: Iterable[emit.Places], closure: Mapping[str, Collection[str]],
              hot: Collection[str] | None = None) -> Places | None:
    """The four place queries' answers for the fragments of what an index run wrote, from what its writer
    said of them (``emit.Places``), with the ontology's classes (``closure``: class -> the local names of
    it and its superclasses, ``search/kind-closure.rq``) applied as the queries apply them. ``hot``: the
    hot tier's entities now, when the tier policy ran since the write (a function's nesting outline is
    ``search/function-outlines.rq``'s only while it shares a tier with a function it defines: a tier
    holds an entity with its fragments); None: everything is still in the tier it was written to.
    None, and the queries decide, when the store's dicts would depend on their rows' order: a fragment
    given two kinds or outlines."""
    paths: dict[str, str] = {}
    kinds: dict[str, str] = {}
    outlines: dict[str, str] = {}
    nesting: dict[str, str] = {}
    for places in written:
        paths.update(places.paths)
        for owner, cls, inners, language, micro, macro in places.owners:
            of = closure.get(cls, ())
            wanted = [(kinds, kind) for kind in sorted(_CONTAINERS.intersection(of))]  # each micro fragment's
            if micro and macro and _OUTLINED.intersection(of):
                wanted += [(outlines, outline) for outline in macro]  # ... its outlines
            nests = bool(inners) if hot is None else any((inner in hot) == (owner in hot) for inner in inners)
            if micro and macro and nests and _FUNCTIONS.intersection(of) and language == "python":
                wanted += [(nesting, outline) for outline in macro]
            for into, value in wanted:
                if not all(into.setdefault(frag, value) == value for frag in micro):
                    return None  # two values for one fragment: the query's last row would decide
    return Places(paths, kinds, outlines, nesting)


def keyword_rows(rows: Segment | np.ndarray, ranking: RankingIndex) -> np.ndarray | None:
    """Per row of a segment (a document of the keyword index built from it), its fragment's position in
    the ranking index built from the same rows, or -1: the placed rows, in order (``Segment.places``).
    None when the ranking index holds another number of them (a fragment of two rows)."""
    placed = rows.placed() if isinstance(rows, Segment) else rows
    if int(placed.sum()) != ranking.frag_ids.size:
        return None
    return np.where(placed, np.cumsum(placed) - 1, -1).astype(np.int64)


def _numbers(values: array, dtype: Any) -> np.ndarray:
    """An ``array`` as numpy numbers, without a copy."""
    return np.frombuffer(values, dtype=dtype) if len(values) else np.zeros(0, dtype=dtype)
