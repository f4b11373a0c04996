"""The keyword and ranking caches' tokenised corpus (a "segment"), saved beside them, so that an index
run that changed a few files updates them instead of reading and tokenising every fragment again.

A segment is what ``DerivedCaches`` holds between reading the corpus and building the two caches: per
row of ``search/corpus.rq`` (in fragment order, the order the builders take them in) its fragment,
owner's name and qualified name, file, lines, head tokens and text lines (as token numbers), and its
place as the four place queries give it (the file's path; the fragment's container kind, class outline,
nesting outline); the token array and its vocabulary; and the hot tier's entities when it was read
(a nesting outline depends on two entities sharing a tier). Numbers are ``.npy`` files, memory-mapped
on load; a list of strings is one text of records split by a control character (``_joined``), a
third to a half of JSON's time to write and read (a standard library's lists: ~65 ms as JSON each
way, and every update writes and reads them), or JSON where a string holds such a character. The
rows' names, qualified names and outlines are string columns (:mod:`acms.index.string_column`):
memory-mapped, and spliced by an update without decoding the rows it keeps (as lists they cost a
one-file refresh ~50 ms to read, splice and write again).

Why (a standard library, 73k fragments): a full build read every row back (~6 s), tokenised every text
(~6 s) and ran the place queries (~2 s) before the builders (~3.5 s). An update (:func:`merged`) keeps
the rows of the files a run did not touch, adds the rows read again, and hands the whole segment to the
same builders: token numbers are renumbered by first sight over the documents in fragment order, so the
caches are byte for byte a full build's (``tests/retrieval/test_caches_incremental.py``). The lines of
the rows dropped stay in the token array until they are a ``GARBAGE_SHARE`` of it (:meth:`compacted`).
"""

from __future__ import annotations

import json
import os
import uuid
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import pairwise
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from acms.arrays import distinct
from acms.errors import StoreError, StoreMissing
from acms.index.appended import appended
from acms.index.keyword import FORMAT as KEYWORD_FORMAT
from acms.index.ranges import ranges
from acms.index.scratch import atomic_directory
from acms.index.string_column import StringColumn, as_column, listed, spliced_runs
from acms.index.token_table import TokenizedLines
from acms.index.tokenize import NEWLINE, SEARCH_TERMS_VERSION
from acms.index.vocabulary import Vocabulary
from acms.ranking.index import FORMAT as RANKING_FORMAT
from acms.ranking.index import NESTING, TEST_SCOPE, FragmentPlace
from acms.ranking.roles import in_test_scope

__all__ = ["DOCUMENTS_AT_ONCE", "FORMAT", "GARBAGE_SHARE", "Merged", "Segment", "Update", "merged", "rows_named"]

# The caches' formats are part of it: a change in how places become a ranking index may change what a
# row's place means, so a segment of another version is not updated but built again.
FORMAT = f"acms.token-segment/6+{KEYWORD_FORMAT}+{RANKING_FORMAT}"
DOCUMENTS_AT_ONCE = 8192  # keyword documents handed to the builder at once
BISECT_IN_PLACE = 400  # new rows up to which a merge bisects the old fragment column as it is, not decoded
# Dead tokens (lines of dropped rows) allowed in the token array before an update compacts it. Every
# update writes the whole array again, so dead tokens cost their share of each save; compacting costs one
# pass over the live ones, about one save. At a quarter the array stays within 4/3 of the live tokens,
# and a compaction comes only after changes worth a quarter of the corpus: amortised, a change's cost
# stays proportional to its size.
GARBAGE_SHARE = 0.25

_ARRAYS = ("file_of", "starts", "ends", "heads", "head_ends", "firsts", "counts", "containers", "ids", "line_ends")
_STRINGS = ("files", "paths", "hot")
# strings per row that an update only copies or reads a few of: columns, memory-mapped and spliced
_COLUMNS = ("frags", "names", "qns", "outlines", "nesting")
_MANIFEST = "manifest.json"
_RECORD, _NONE = "\x1e", "\x1f"  # between a list's strings; a None
_DTYPES = {"ids": np.int32, "line_ends": np.int64}
_GROWING = ("ids", "line_ends", "tokens")  # what an update only appends to: a saved base and a tail


@dataclass(frozen=True)
class Segment:
    """Rows in fragment order (``frags`` sorted). A row's head is ``heads[head_ends[i - 1]:head_ends[i]]``
    (from 0 for the first) and its text lines ``firsts[i]`` … ``firsts[i] + counts[i] - 1`` of ``text``."""

    frags: Sequence[str]  # a list, or a StringColumn (as saved and updated)
    names: Sequence[str | None]  # a list, or a StringColumn (as saved)
    qns: Sequence[str | None]
    files: list[str]  # the files the rows are placed in
    paths: list[str | None]  # each file's path (None: search/file-paths.rq gives none)
    file_of: np.ndarray  # int32 per row: its file's number in ``files``, -1 for a row without a place
    starts: np.ndarray  # int64 per row, -1 for none
    ends: np.ndarray
    heads: np.ndarray  # int32 token numbers: the owner's name's and qualified name's terms
    head_ends: np.ndarray  # int64
    firsts: np.ndarray  # int64
    counts: np.ndarray  # int64
    containers: np.ndarray  # int8 per row: ``CONTAINER`` of its kind (search/class-fragments.rq), 0 for none
    outlines: Sequence[str | None]  # search/class-outlines.rq's outline
    nesting: Sequence[str | None]  # search/function-outlines.rq's outline (None: not a function that defines one)
    text: TokenizedLines
    hot: list[str]  # the entities in the hot tier when the places were read
    key: str = ""
    # a name of the token numbering: an update extends it (its numbers keep their tokens), a compaction
    # makes another; the keyword indexes built from the segment keep it to find terms by number
    numbering: str = field(default_factory=lambda: uuid.uuid4().hex)
    # at least as many tokens as no row's text holds (None: not known); an update adds the dropped
    # rows' tokens, so whether it must compact is known without a pass over every line
    dead_bound: int | None = None
    # (numbering, ids, line ends, tokens) of a saved segment whose text is the start of this one's (its
    # lines and tokens come first, numbered alike): a save links those files rather than writing them
    prefix: tuple[str, int, int, int] | None = field(default=None, compare=False, repr=False)
    # whether ``frags`` is strictly increasing, when known without comparing them (a merge's, a manifest's)
    strict: bool | None = field(default=None, compare=False, repr=False)
    # (the numbering before, each of its token numbers in this one's or -1) when this segment is a
    # compaction made in this process: the keyword indexes of that numbering translate their terms'
    # numbers, rather than being merged whole with their vocabularies parsed (~1 s of a branch switch)
    renumbered: tuple[str, np.ndarray] | None = field(default=None, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.frags)

    @cached_property
    def ordered(self) -> bool:
        """Every fragment has one row, in fragment order: what an update of the caches needs (a fragment
        given two kinds or outlines has two rows, and then they are built in full)."""
        if self.strict is not None:
            return self.strict
        frags = listed(self.frags)
        return all(map(str.__lt__, frags, frags[1:]))  # in C: a generator over 73k pairs took ~5 ms

    # -- what the builders take -------------------------------------------------------------
    def documents(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The keyword documents of the rows (head tokens, then every line's), a few at a time."""
        for start in range(0, len(self), DOCUMENTS_AT_ONCE):
            yield self.documents_of(np.arange(start, min(start + DOCUMENTS_AT_ONCE, len(self)), dtype=np.int64))

    def documents_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The keyword documents of ``rows`` (ascending row numbers): their tokens end to end, their lengths."""
        heads, head_ends = np.asarray(self.heads), np.asarray(self.head_ends, dtype=np.int64)
        firsts, counts = np.asarray(self.firsts, dtype=np.int64), np.asarray(self.counts, dtype=np.int64)
        rows = np.asarray(rows, dtype=np.int64)
        h1 = head_ends[rows]
        h0 = np.where(rows > 0, head_ends[rows - 1], 0)
        line_ends = self.text.line_ends
        t0, t1 = _line_starts(line_ends, firsts[rows]), _line_starts(line_ends, firsts[rows] + counts[rows])
        head_len, text_len = h1 - h0, t1 - t0
        at = np.zeros(rows.size, dtype=np.int64)
        np.cumsum((head_len + text_len)[:-1], out=at[1:])
        out = np.empty(int((head_len + text_len).sum()), dtype=np.int32)
        out[ranges(at, head_len)] = heads[ranges(h0, head_len)]
        out[ranges(at + head_len, text_len)] = self.text.ids[ranges(t0, text_len)]
        return out, head_len + text_len

    def placed(self) -> np.ndarray:
        """A mask of the rows the ranking index holds: those placed in a file that has a path."""
        known = np.asarray([p is not None for p in self.paths] + [False], dtype=bool)  # [-1]: no file
        return known[np.asarray(self.file_of, dtype=np.int64)]

    def places(self, rows: Iterable[int] | None = None) -> list[FragmentPlace]:
        """The ranking index's rows: those placed in a file that has a path, in fragment order (of
        ``rows`` only, when given)."""
        places = []
        picked = range(len(self)) if rows is None else list(rows)
        # an update's few rows: their numbers only, not every row's
        at = slice(None) if rows is None else np.asarray(picked, dtype=np.int64)
        frags = listed(self.frags) if rows is None else self.frags
        file_of, containers, starts, ends, firsts, counts = (
            np.asarray(a)[at].tolist()
            for a in (self.file_of, self.containers, self.starts, self.ends, self.firsts, self.counts))
        for k, i in enumerate(picked):
            f = file_of[k]
            path = self.paths[f] if f >= 0 else None
            if path is None:
                continue
            name, qn, nest = self.names[i], self.qns[i], self.nesting[i]
            container = (containers[k] or (TEST_SCOPE if qn is not None and in_test_scope(qn, path) else 0)
                         or (NESTING if nest is not None else 0))
            places.append(FragmentPlace(frags[i], path, starts[k], ends[k], container,
                                        (name or "") if qn is not None else "", self.outlines[i] or nest or "",
                                        firsts[k], counts[k], qualified=qn or ""))
        return places

    # -- keeping it small ---------------------------------------------------------------------
    def _live_lines(self) -> np.ndarray:
        """A mask of the lines some row's text holds."""
        live = np.zeros(len(self.text.line_ends), dtype=bool)
        live[ranges(np.asarray(self.firsts, dtype=np.int64), np.asarray(self.counts, dtype=np.int64))] = True
        return live

    def garbage(self) -> float:
        """The share of the token array no row's text holds (the lines of rows an update dropped)."""
        total = len(self.text.ids)
        if not total:
            return 0.0
        lengths = np.diff(np.asarray(self.text.line_ends, dtype=np.int64), prepend=0)
        return 1.0 - float(lengths[self._live_lines()].sum()) / total

    def tidied(self, limit: float = GARBAGE_SHARE) -> Segment:
        """This segment, compacted when dead tokens pass ``limit`` of the array. The exact share
        takes a pass over every line (~45 ms a standard library, on every update): it is made only when
        ``dead_bound`` does not already rule compaction out."""
        total = len(self.text.ids)
        if self.dead_bound is not None and self.dead_bound <= limit * total:
            return self
        share = self.garbage()
        if share > limit:
            return self.compacted()
        return replace(self, dead_bound=round(share * total))

    def compacted(self) -> Segment:
        """The segment without dead lines and without tokens no line or head holds (``NEWLINE`` stays
        number 0, as a ``TokenTable`` numbers it). The caches built from it are the same."""
        line_ends = np.asarray(self.text.line_ends, dtype=np.int64)
        lengths = np.diff(line_ends, prepend=0)
        live = self._live_lines()
        number = np.cumsum(live) - 1  # a live line's number after compaction
        ids = np.asarray(self.text.ids)[ranges(line_ends[live] - lengths[live], lengths[live])]
        heads = np.asarray(self.heads)
        used = np.zeros(len(self.text.tokens), dtype=bool)
        used[ids] = True
        used[heads] = True
        used[0] = True  # NEWLINE
        renumber = (np.cumsum(used) - 1).astype(np.int32)
        tokens = [t for t, keep in zip(self.text.tokens, used.tolist()) if keep]
        text = TokenizedLines(renumber[ids], np.cumsum(lengths[live]), tokens)
        return replace(self, heads=renumber[heads], firsts=number[np.asarray(self.firsts, dtype=np.int64)], text=text,
                       numbering=uuid.uuid4().hex, dead_bound=0, prefix=None,
                       renumbered=(self.numbering, np.where(used, renumber, -1).astype(np.int64)))

    # -- persistence ----------------------------------------------------------------------------
    def save(self, directory: Path, *, key: str) -> Segment:
        """Write it to ``directory`` atomically under ``key`` (the caches' ``text_key``); returns it as saved
        (its ``prefix`` the whole text). The token array, its line ends and the vocabulary only grow by
        an update: when ``directory`` holds this segment's ``prefix``, their first part is linked from it
        and only the rest written (``*.tail.*``), so a one-file update writes ~20 of a standard
        library's 45 MB. A tail is written whole each time (base plus one tail, however many updates)."""
        directory = Path(directory)
        with atomic_directory(directory) as tmp:
            base = self._linked_base(directory, tmp)
            for name in _ARRAYS:
                values = self._array(name)
                dtype = _DTYPES.get(name)
                if name in base:  # only the tail: a slice of an Appended is its parts after the base, not a copy of it
                    np.save(tmp / f"{name}.tail.npy", np.asarray(values[base[name]:], dtype=dtype))
                else:
                    np.save(tmp / f"{name}.npy", np.asarray(values, dtype=dtype))
            for name in _COLUMNS:
                as_column(getattr(self, name)).save(tmp, name)
            lengths = {"tokens": len(self.text.tokens)}
            for name in _STRINGS:
                strings = getattr(self, name)
                lengths[name] = len(strings)
                _save_strings(tmp, name, strings)
            if "tokens" in base:  # the vocabulary's hashed part linked, the tokens numbered since after it
                _save_strings(tmp, "tokens.tail", self.text.tokens[base["tokens"]:])
            else:
                Vocabulary.of(self.text.tokens).save_base(tmp, "tokens")
            manifest = {"format": FORMAT, "tokenizer": SEARCH_TERMS_VERSION, "key": key, "rows": len(self),
                        "numbering": self.numbering, "lengths": lengths, "dead_bound": self.dead_bound,
                        "sizes": self._sizes(), "bases": base, "ordered": self.ordered}
            (tmp / _MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
        return replace(self, key=key, prefix=(self.numbering, *self._sizes().values()), strict=self.ordered)

    def _sizes(self) -> dict[str, int]:
        return {"ids": len(self.text.ids), "line_ends": len(self.text.line_ends), "tokens": len(self.text.tokens)}

    def _linked_base(self, directory: Path, tmp: Path) -> dict[str, int]:
        """The text files of the segment saved in ``directory`` linked into ``tmp`` when it is this one's
        ``prefix``: name -> how many values the linked file holds ({} when none could be)."""
        prefix = self.prefix
        if prefix is None:
            return {}
        try:
            manifest = json.loads((directory / _MANIFEST).read_text(encoding="utf-8"))
            sizes, bases = manifest["sizes"], manifest.get("bases", {})
            if manifest.get("format") != FORMAT or manifest.get("numbering") != prefix[0] or \
                    [sizes[name] for name in _GROWING] != list(prefix[1:]):
                return {}
            base = {name: int(bases.get(name, sizes[name])) for name in _GROWING}
            for name in [f"{name}.npy" for name in _ARRAYS if name in _GROWING] + Vocabulary.files("tokens"):
                os.link(directory / name, tmp / name)
            return base
        except (OSError, ValueError, KeyError, TypeError):
            for leftover in tmp.iterdir():
                leftover.unlink()
            return {}

    def _array(self, name: str) -> Any:
        if name in ("ids", "line_ends"):
            return getattr(self.text, name)
        return np.asarray(getattr(self, name))

    @staticmethod
    def saved_key(directory: Path) -> str | None:
        """The key of the segment saved in ``directory`` (None: none, or of another version), from its
        manifest alone."""
        try:
            manifest = json.loads((Path(directory) / _MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if manifest.get("format") != FORMAT or manifest.get("tokenizer") != SEARCH_TERMS_VERSION:
            return None
        return str(manifest.get("key", ""))

    @classmethod
    def load(cls, directory: Path) -> Segment:
        """Raises ``StoreMissing`` (none) or ``StoreError`` (unreadable, another version): build in full."""
        directory = Path(directory)
        if not (directory / _MANIFEST).is_file():
            raise StoreMissing(f"no token segment at {directory}")
        try:
            manifest = json.loads((directory / _MANIFEST).read_text(encoding="utf-8"))
            if manifest.get("format") != FORMAT or manifest.get("tokenizer") != SEARCH_TERMS_VERSION:
                raise StoreError(f"the token segment at {directory} is of another version")
            bases = manifest.get("bases", {})
            arrays = {name: np.load(directory / f"{name}.npy", mmap_mode="r", allow_pickle=False) for name in _ARRAYS}
            strings: dict[str, Sequence[Any]] = {name: StringColumn.load(directory, name) for name in _COLUMNS}
            for name in _STRINGS:
                strings[name] = _strings_at(directory, name, int(manifest["lengths"][name]))
            tokens = int(manifest["lengths"]["tokens"])
            tail = _strings_at(directory, "tokens.tail", tokens - int(bases["tokens"])) if "tokens" in bases else []
            strings["tokens"] = Vocabulary.load(directory, "tokens", tail)
            for name in bases:
                if name in arrays:
                    arrays[name] = appended(arrays[name], np.load(directory / f"{name}.tail.npy", allow_pickle=False))
        except StoreError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"the token segment at {directory} is unreadable ({exc})") from exc
        text = TokenizedLines(arrays.pop("ids"), arrays.pop("line_ends"), strings.pop("tokens"))
        bound = manifest.get("dead_bound")
        ordered = manifest.get("ordered")
        segment = cls(**strings, **arrays, text=text, key=str(manifest.get("key", "")),
                      numbering=str(manifest.get("numbering") or uuid.uuid4().hex),
                      dead_bound=bound if isinstance(bound, int) and bound >= 0 else None,
                      strict=ordered if isinstance(ordered, bool) else None)
        if not (len(segment) == manifest.get("rows") == len(segment.file_of) == len(segment.head_ends)
                and all(len(getattr(segment, name)) == len(segment) for name in _COLUMNS)
                and segment.text.tokens[:1] == [NEWLINE] and segment._sizes() == manifest.get("sizes")):
            raise StoreError(f"the token segment at {directory} is inconsistent")
        return replace(segment, prefix=(segment.numbering, *segment._sizes().values()))


def rows_named(frags: Sequence[str], wanted: Iterable[str]) -> list[int]:
    """The rows of ``frags`` (sorted) that hold one of ``wanted``, found by bisection: a few lookups in a
    column beat decoding its rows (~20 ms a standard library's)."""
    out: list[int] = []
    for frag in sorted(set(wanted)):
        at = bisect_left(frags, frag)
        while at < len(frags) and frags[at] == frag:
            out.append(at)
            at += 1
    return out


def _joined(strings: Sequence[str | None]) -> str | None:
    """The strings as one text, or None when one holds a separator (JSON then)."""
    strings = list(strings)
    nones = strings.count(None)
    joined = _RECORD.join([_NONE if s is None else s for s in strings] if nones else strings)  # type: ignore[arg-type]
    if joined.count(_RECORD) != max(len(strings) - 1, 0) or joined.count(_NONE) != nones:
        return None
    return joined


def _save_strings(directory: Path, name: str, strings: Sequence[str | None]) -> None:
    joined = _joined(strings)
    if joined is None:
        (directory / f"{name}.json").write_text(json.dumps(list(strings), ensure_ascii=False), encoding="utf-8")
    else:
        (directory / f"{name}.txt").write_text(joined, encoding="utf-8", newline="")  # "\r" stays


def _strings_at(directory: Path, name: str, length: int) -> list[Any]:
    """A list saved by ``Segment.save``, of ``length`` strings."""
    text_path = directory / f"{name}.txt"
    if not text_path.is_file():
        return list(json.loads((directory / f"{name}.json").read_text(encoding="utf-8")))
    if not length:
        return []
    with text_path.open(encoding="utf-8", newline="") as f:
        strings: list[Any] = f.read().split(_RECORD)
    if len(strings) != length:
        raise ValueError(f"{name}: {len(strings)} strings, {length} expected")
    if _NONE in strings:
        strings = list(map({_NONE: None}.get, strings, strings))  # a None for each _NONE, in C
    return strings


class Merged(NamedTuple):
    segment: Segment
    fresh: np.ndarray  # per row of ``segment``, whether it is one of the new rows


def merged(old: Segment, keep: np.ndarray, new: Segment, nesting: dict[str, str | None], hot: list[str]) -> Merged:
    """``old``'s rows where ``keep`` holds and ``new``'s, in fragment order: ``new``'s token numbers
    extend ``old``'s vocabulary (its tokens start with ``old``'s) and its lines follow ``old``'s.
    ``nesting``: kept rows' nesting outlines read again (the hot tier moved their owner or a function
    it defines); ``hot``: the hot tier's entities now.

    Both runs of rows are in fragment order, so each new row's place is found by bisection among the
    old ones and every column is spliced in C, a run of bytes at a time: an update of a few files cost
    ~70 ms a standard library when the rows were sorted again by a Python key. Whether the fragments are
    still strictly increasing follows from the old rows' order and the places the new ones went
    (each compared with its neighbour only)."""
    keep_list = np.asarray(keep, dtype=bool).tolist()
    kept = np.flatnonzero(keep)
    new_frags = listed(new.frags)
    if any(a > b for a, b in pairwise(new_frags)):
        raise ValueError("the new rows are not in fragment order")
    n_kept, n_new = kept.size, len(new_frags)
    # bisected as a list when many rows are new: a column's rows read one by one cost ~2.5 µs each, ~17 reads a
    # row (a 300-file switch's 16k rows: ~0.7 s, against ~15 ms for decoding all 73k at once)
    olds = old.frags if n_new < BISECT_IN_PLACE else listed(old.frags)
    at = [bisect_right(olds, f) for f in new_frags]  # old rows before each (``old.frags`` is sorted)
    kept_before = np.concatenate([[0], np.cumsum(np.asarray(keep, dtype=np.int64))])
    before = kept_before[np.asarray(at, dtype=np.int64)] if at else np.zeros(0, dtype=np.int64)
    # a new row beside a kept old one of the same fragment (the one just before it, if any) makes two
    strict = old.ordered and all(map(str.__lt__, new_frags, new_frags[1:])) and not any(
        i > 0 and keep_list[i - 1] and olds[i - 1] == f for i, f in zip(at, new_frags))
    order = np.empty(n_kept + n_new, dtype=np.int64)  # row i of the result is row order[i] of kept + new
    order[np.arange(n_kept) + np.searchsorted(before, np.arange(n_kept), side="right")] = np.arange(n_kept)
    order[before + np.arange(n_new)] = n_kept + np.arange(n_new)

    # a column's rows: each kept one from its old row, each new one from ``new`` (in order: both runs are)
    source = np.where(order < n_kept, kept[np.minimum(order, max(n_kept - 1, 0))] if n_kept else -1, -1)

    def both(a: np.ndarray, b: np.ndarray, dtype: Any) -> np.ndarray:
        return np.concatenate([np.asarray(a, dtype=dtype)[kept], np.asarray(b, dtype=dtype)])[order]

    def column(a: Sequence[Any], b: Sequence[Any]) -> StringColumn:
        return as_column(a).spliced(source, list(b))

    # files: numbered again by first use, the kept rows' then the new rows'
    names = list(dict.fromkeys([*old.files, *new.files]))
    number = {f: i for i, f in enumerate(names)}
    old_map = np.asarray([number[f] for f in old.files] + [-1], dtype=np.int64)  # [-1]: a row without a file
    new_map = np.asarray([number[f] for f in new.files] + [-1], dtype=np.int64)
    row_file = np.concatenate([old_map[np.asarray(old.file_of, dtype=np.int64)[kept]],
                               new_map[np.asarray(new.file_of, dtype=np.int64)]])[order]
    # files by first use: a file's first row starts a run of rows of one file (a file's rows mostly follow
    # each other), so only the runs' first rows are sorted (all 73k rows were ~6 ms a refresh)
    run_starts = np.flatnonzero(np.diff(row_file, prepend=-2) != 0)
    run_files = row_file[run_starts]
    used, first = np.unique(run_files[run_files >= 0], return_index=True)
    by_first = used[np.argsort(first, kind="stable")]
    renumber = np.full(len(names) + 1, -1, dtype=np.int64)
    renumber[by_first] = np.arange(by_first.size)
    file_of = renumber[row_file].astype(np.int32)
    path_of = {**dict(zip(old.files, old.paths)), **dict(zip(new.files, new.paths))}
    files = [names[i] for i in by_first.tolist()]
    # heads: the kept rows' copied from the old heads a run at a time, the new rows' from the new ones
    new_heads, new_ends = np.asarray(new.heads, dtype=np.int32), np.asarray(new.head_ends, dtype=np.int64)
    heads, head_offsets = spliced_runs(np.asarray(old.heads, dtype=np.int32),
                                       np.concatenate([[0], np.asarray(old.head_ends, dtype=np.int64)]), source,
                                       [new_heads[a:b] for a, b in pairwise([0, *new_ends.tolist()])])
    # lines: new's after old's
    new_line_ends = np.asarray(new.text.line_ends, dtype=np.int64) + len(old.text.ids)
    text = TokenizedLines(appended(old.text.ids, np.asarray(new.text.ids, dtype=np.int32)),
                          appended(old.text.line_ends, new_line_ends), new.text.tokens)
    firsts = both(old.firsts, np.asarray(new.firsts, dtype=np.int64) + len(old.text.line_ends), np.int64)
    dead_bound = None
    if old.dead_bound is not None:  # the lines dead now were dead before or held by a dropped row
        dropped = np.flatnonzero(~np.asarray(keep, dtype=bool))
        first, count = np.asarray(old.firsts, dtype=np.int64)[dropped], np.asarray(old.counts, dtype=np.int64)[dropped]
        dead = _line_starts(old.text.line_ends, first + count) - _line_starts(old.text.line_ends, first)
        dead_bound = old.dead_bound + int(dead.sum())
    frags = column(old.frags, new_frags)
    outer = column(old.nesting, new.nesting)
    if nesting:  # the few rows whose outline was read again, spliced in (decoding every row cost ~50 ms)
        rows = rows_named(frags, nesting)
        again = np.arange(len(outer), dtype=np.int64)
        again[rows] = -1
        outer = outer.spliced(again, [nesting[frag] for frag in frags.take(rows)])
    segment = Segment(frags, column(old.names, new.names), column(old.qns, new.qns), files, [path_of[f] for f in files],
                      file_of, both(old.starts, new.starts, np.int64), both(old.ends, new.ends, np.int64),
                      heads, head_offsets[1:], firsts, both(old.counts, new.counts, np.int64),
                      both(old.containers, new.containers, np.int8), column(old.outlines, new.outlines), outer, text,
                      hot, numbering=old.numbering, dead_bound=dead_bound, prefix=old.prefix, strict=strict)
    return Merged(segment, source < 0)


@dataclass(frozen=True)
class Update:
    """How an updated segment came from the one saved before: what splicing the caches needs."""

    old_rows: int  # rows of the old segment: documents of the old keyword index
    old_placed: int  # of them placed: fragments of the old ranking index
    kept: np.ndarray  # the old rows kept, ascending: the updated segment's rows not read again, in order
    kept_placed: np.ndarray  # per kept row its position in the old ranking index (-1: not placed)
    fresh: np.ndarray  # per row of the updated segment: read again
    moved: set[str]  # kept fragments whose nesting outline was read again
    changed: set[str]  # the paths of the rows dropped or read again
    was: np.ndarray  # per row of the updated segment read again, the old row of the same keyword document (-1: none)

    @classmethod
    def of(cls, old: Segment, keep: np.ndarray, new: Segment, segment: Segment, fresh: np.ndarray,
           moved: set[str], was: np.ndarray) -> Update | None:
        """None when a fragment has two rows (a dict of places, not splicing, decides which counts).
        ``fresh``: per row of ``segment``, whether it is one of ``new``'s (``merged`` says); ``was``: per
        row of ``segment``, the old row whose keyword document it has again (a fragment written again)."""
        if not segment.ordered:
            return None
        kept = np.flatnonzero(keep)
        if int((~fresh).sum()) != kept.size:
            return None
        placed = old.placed()
        position = np.cumsum(placed) - 1
        old_file_of = np.asarray(old.file_of, dtype=np.int64)
        changed = {old.paths[f] for f in distinct(old_file_of[~np.asarray(keep, dtype=bool)]).tolist() if f >= 0}
        changed |= {path for path in new.paths}
        changed.discard(None)  # type: ignore[arg-type]
        return cls(len(old), int(placed.sum()), kept, np.where(placed[kept], position[kept], -1), fresh, moved,
                   changed, was)  # type: ignore[arg-type]


def _line_starts(line_ends: Any, lines: np.ndarray) -> np.ndarray:
    """Where each of ``lines`` starts in the token array (a line one past the last: the array's end),
    read in place: prepending a 0 copied every line end."""
    lines = np.asarray(lines, dtype=np.int64)
    if not lines.size:
        return np.zeros(0, dtype=np.int64)
    return np.where(lines > 0, np.asarray(line_ends[np.maximum(lines - 1, 0)], dtype=np.int64), 0)
