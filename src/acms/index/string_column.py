"""A column of strings (and Nones) as one UTF-8 blob, its offsets and a mask of the Nones.

Why: the derived caches keep a string or two per fragment (a standard library: 73k names, qualified
names, outlines). As Python lists, each refresh read them back whole (~20 ms), spliced them (~10 ms)
and wrote them whole again; as a column they are memory-mapped, and an update copies the kept rows'
bytes in a few long runs (:meth:`StringColumn.spliced`), decoding only the rows it reads. A numpy
string array would pad every entry to the longest at four bytes a character.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any, overload

import numpy as np

from acms.index.ranges import ranges

__all__ = ["MANY_RUNS", "StringColumn", "as_column", "listed", "spliced_rows", "spliced_runs", "taken"]

# Runs of kept rows past which a splice gathers every value through an index instead of copying a run
# at a time (a standard library's qualified names: one file's rows redone, 4 ms a run at a time against
# 25 ms gathered; a 300-file switch's, 58 ms against 16)
MANY_RUNS = 2_048


class StringColumn(Sequence[Any]):
    """``strings[i]`` is ``blob[offsets[i]:offsets[i + 1]]`` decoded, or None where ``nulls[i]`` (no
    ``nulls``: none is None). Indexed like a list; iterating decodes every row."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray, nulls: np.ndarray | None = None) -> None:
        self.blob, self.offsets, self.nulls = blob, offsets, nulls

    @classmethod
    def of(cls, strings: Iterable[str | None]) -> StringColumn:
        values = list(strings)
        encoded = [b"" if s is None else s.encode("utf-8") for s in values]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        nulls = np.fromiter((s is None for s in values), dtype=bool, count=len(values))
        return cls(np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets, nulls if nulls.any() else None)

    def __len__(self) -> int:
        return int(self.offsets.size) - 1

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError("string column index out of range")
        i %= n
        if self.nulls is not None and self.nulls[i]:
            return None
        return bytes(self.blob[int(self.offsets[i]) : int(self.offsets[i + 1])]).decode("utf-8")

    def __iter__(self) -> Iterator[Any]:
        return iter(self.tolist())

    def tolist(self) -> list[Any]:
        """Every row, decoded at once."""
        return self._decoded(bytes(self.blob), np.asarray(self.offsets, dtype=np.int64).tolist(), self.nulls)

    def take(self, rows: Sequence[int] | np.ndarray) -> list[Any]:
        """The strings of ``rows``, decoded at once: one by one, an update's few thousand cost ~2 µs each."""
        rows = np.asarray(rows, dtype=np.int64)
        if not rows.size:
            return []
        offsets = np.asarray(self.offsets, dtype=np.int64)
        starts, ends = offsets[rows], offsets[rows + 1]
        within = np.zeros(rows.size + 1, dtype=np.int64)
        np.cumsum(ends - starts, out=within[1:])
        raw = np.asarray(self.blob)[ranges(starts, ends - starts)].tobytes()
        nulls = None if self.nulls is None else np.asarray(self.nulls, dtype=bool)[rows]
        return self._decoded(raw, within.tolist(), nulls)

    @staticmethod
    def _decoded(raw: bytes, bounds: list[int], nulls: np.ndarray | None) -> list[Any]:
        """``raw[bounds[k]:bounds[k + 1]]`` for every ``k``, decoded (all at once when ASCII: its byte
        offsets are character offsets), None where ``nulls`` says."""
        if raw.isascii():
            text = raw.decode("ascii")
            out: list[Any] = [text[a:b] for a, b in pairwise(bounds)]
        else:
            out = [raw[a:b].decode("utf-8") for a, b in pairwise(bounds)]
        if nulls is not None:
            for k in np.flatnonzero(nulls).tolist():
                out[k] = None
        return out

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (StringColumn, list, tuple)):
            return self.tolist() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"StringColumn({len(self)} strings)"

    def spliced(self, source: np.ndarray, redone: Sequence[str | None]) -> StringColumn:
        """This column's strings at ``source`` (kept) and ``redone``'s at the -1s, in order, without
        decoding the kept ones (:func:`spliced_runs`)."""
        source = np.asarray(source, dtype=np.int64)
        kept = source >= 0
        encoded = [np.frombuffer(b"" if s is None else s.encode("utf-8"), dtype=np.uint8) for s in redone]
        blob, out_offsets = spliced_runs(self.blob, self.offsets, source, encoded)
        nulls = None
        redone_nulls = [s is None for s in redone]
        if self.nulls is not None or any(redone_nulls):
            nulls = np.zeros(source.size, dtype=bool)
            if self.nulls is not None:
                nulls[kept] = np.asarray(self.nulls, dtype=bool)[source[kept]]
            nulls[~kept] = redone_nulls
            nulls = nulls if nulls.any() else None
        return StringColumn(blob, out_offsets, nulls)

    def save(self, directory: Path, name: str) -> None:
        np.save(directory / f"{name}.blob.npy", np.asarray(self.blob, dtype=np.uint8))
        np.save(directory / f"{name}.offsets.npy", np.asarray(self.offsets, dtype=np.int64))
        if self.nulls is not None:
            np.save(directory / f"{name}.nulls.npy", np.asarray(self.nulls, dtype=bool))

    @classmethod
    def load(cls, directory: Path, name: str) -> StringColumn:
        """Memory-mapped; raises ``OSError`` or ``ValueError`` for a missing or unreadable column."""
        nulls_path = directory / f"{name}.nulls.npy"
        column = cls(np.load(directory / f"{name}.blob.npy", mmap_mode="r", allow_pickle=False),
                     np.load(directory / f"{name}.offsets.npy", mmap_mode="r", allow_pickle=False),
                     np.load(nulls_path, mmap_mode="r", allow_pickle=False) if nulls_path.is_file() else None)
        if column.offsets.ndim != 1 or column.offsets.size < 1 or int(column.offsets[-1]) != column.blob.size or \
                (column.nulls is not None and column.nulls.size != len(column)):
            raise ValueError(f"{name}: a string column whose offsets do not fit its blob")
        return column


def spliced_runs(values: np.ndarray, offsets: np.ndarray, source: np.ndarray,
                 redone: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Rows of variable length (row ``i`` is ``values[offsets[i]:offsets[i + 1]]``) spliced: row ``k`` of
    the result is row ``source[k]``, or the next of ``redone`` where ``source[k]`` is -1; (values, offsets).
    Kept rows come in runs whose sources follow each other (all but a changed file's): each run is one
    slice of ``values``, so an update copies a few long pieces rather than gathering every value through
    an index as long as ``values`` (~60 ms a standard library's two string columns)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    source = np.asarray(source, dtype=np.int64)
    kept, starts = _runs(source)
    if len(starts) > MANY_RUNS:  # a branch switch's rows: every value gathered through an index, in C
        length = np.zeros(source.size, dtype=np.int64)
        length[kept] = offsets[source[kept] + 1] - offsets[source[kept]]
        length[~kept] = [piece.size for piece in redone]
        out_offsets = np.zeros(source.size + 1, dtype=np.int64)
        np.cumsum(length, out=out_offsets[1:])
        out = np.empty(int(out_offsets[-1]), dtype=values.dtype)
        at = np.flatnonzero(kept)
        out[ranges(out_offsets[at], length[at])] = np.asarray(values)[ranges(offsets[source[at]], length[at])]
        if redone:
            at = np.flatnonzero(~kept)
            pieces = [np.asarray(r, dtype=values.dtype) for r in redone]
            out[ranges(out_offsets[at], length[at])] = np.concatenate(pieces)
        return out, out_offsets
    # A run of kept rows is a slice of ``values`` and of ``offsets`` (shifted to where the run lands: each
    # row's length gathered through ``source`` was ~2 ms a column, eight a refresh); a run of redone rows
    # is one row (they never follow each other as sources do), the next of ``redone`` in order.
    fresh = iter(redone)
    pieces: list[np.ndarray] = []
    out_offsets = np.empty(source.size + 1, dtype=np.int64)
    out_offsets[0] = at = 0
    for begin, end in pairwise(starts):
        if kept[begin]:
            first, last = int(source[begin]), int(source[end - 1]) + 1
            lo, hi = int(offsets[first]), int(offsets[last])
            np.add(offsets[first + 1:last + 1], at - lo, out=out_offsets[begin + 1:end + 1])
            pieces.append(np.asarray(values[lo:hi]))
            at += hi - lo
        else:
            piece = np.asarray(next(fresh), dtype=values.dtype)
            pieces.append(piece)
            at += piece.size
            out_offsets[end] = at
    return (np.concatenate(pieces) if pieces else np.zeros(0, dtype=values.dtype)), out_offsets


def spliced_rows(values: np.ndarray, source: np.ndarray, redone: np.ndarray) -> np.ndarray:
    """Rows of one width (``values``' first axis) spliced as :func:`spliced_runs` splices rows of any
    length: row ``k`` is ``values[source[k]]``, or the next row of ``redone`` where ``source[k]`` is -1
    (its type, as wide as both). A run of kept rows is one slice: gathered through ``source`` and
    scattered again, a standard library's 73k rows cost ~1-8 ms a column of an update."""
    source = np.asarray(source, dtype=np.int64)
    values, redone = np.asarray(values), np.asarray(redone)
    out = np.empty((source.size, *values.shape[1:]), dtype=np.result_type(values, redone))
    kept, starts = _runs(source)
    if len(starts) > MANY_RUNS:
        out[kept] = values[source[kept]]
        out[~kept] = redone
        return out
    fresh = 0
    for begin, end in pairwise(starts):
        if kept[begin]:
            first = int(source[begin])
            out[begin:end] = values[first:first + end - begin]
        else:
            out[begin] = redone[fresh]
            fresh += 1
    return out


def _runs(source: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Which rows are kept (``source >= 0``), and where each run starts, then the row count: a run is kept
    rows whose sources follow each other, or one redone row."""
    kept = source >= 0
    follows = np.zeros(source.size, dtype=bool)  # a kept row right after its source's predecessor
    follows[1:] = kept[1:] & kept[:-1] & (source[1:] == source[:-1] + 1)
    return kept, np.flatnonzero(~follows).tolist() + [source.size]


def as_column(strings: Sequence[str | None]) -> StringColumn:
    """``strings`` as a column (itself when it is one)."""
    return strings if isinstance(strings, StringColumn) else StringColumn.of(strings)


def taken(strings: Sequence[Any], rows: np.ndarray) -> list[Any]:
    """``strings`` at ``rows``: a column's decoded together (:meth:`StringColumn.take`, and the like of a
    sequence that reads many at once), a list's indexed."""
    take = getattr(strings, "take", None)
    if take is not None and not isinstance(strings, np.ndarray):
        return take(rows)  # type: ignore[no-any-return]
    return [strings[i] for i in np.asarray(rows, dtype=np.int64).tolist()]


def listed(strings: Sequence[Any]) -> list[Any]:
    """The strings as a list (a column's decoded at once: one by one, 73k took ~0.1 s)."""
    return strings.tolist() if isinstance(strings, StringColumn) else list(strings)
