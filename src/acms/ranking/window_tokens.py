"""The ranking index's windows as token numbers, a few files at a time.

A file's text is rebuilt from its fragments' lines (the first fragment giving a line wins, as
:func:`acms.ranking.windows.file_lines`); its windows are runs of ``WINDOW`` known lines every
``STRIDE`` (:func:`acms.ranking.windows.windows`), whose tokens are the lines' tokens end to end.
Every line is in two windows, so the windows' tokens end to end were twice the corpus's: here they
are handed to the keyword builder (:meth:`acms.index.keyword.KeywordIndex.from_chunks`) a chunk of
files at a time instead of as one array.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from acms.index.keyword import KeywordIndex
from acms.index.ranges import ranges
from acms.index.token_table import TokenizedLines
from acms.ranking.windows import STRIDE, WINDOW

__all__ = ["CHUNK_TOKENS", "DENSE_TOKENS_PER_LINE", "FileLines", "FileWindows", "TokenWindows", "file_windows"]

CHUNK_TOKENS = 1 << 20  # windows' tokens handed over at once
FILES_AT_ONCE = 256  # files whose lines are numbered in one sort (one ``np.unique`` a file cost ~0.6 ms)
# A file whose lines hold this many search terms on average was built, not written: minified or
# generated code (``jquery.js`` in a static folder, 360 a line; a generated Unicode table, 1,760).
# Written code and prose stay under ~20 (the dev set's six repositories and the standard library:
# source at most ~12, licences and PEM files ~18, an SVG logo 33).
DENSE_TOKENS_PER_LINE = 40


@dataclass(frozen=True)
class FileLines:
    """One file's fragments in their order: each one's first line number in the file, its first line
    in the ``TokenizedLines`` and its number of lines."""

    starts: np.ndarray
    firsts: np.ndarray
    counts: np.ndarray


def _gather(flat: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``flat[starts[i]:ends[i]]`` end to end, and where each piece starts in the result (one more: the end)."""
    lengths = ends - starts
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    index = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1], dtype=np.int64)
    return flat[index], offsets


@dataclass
class TokenWindows:
    """The windows of ``files`` (in that order): iterate ``chunks()`` once; ``window_file`` and
    ``window_lines`` (and ``ids``) grow as it goes."""

    files: Sequence[FileLines]
    text: TokenizedLines
    ids: list[str] = field(default_factory=list)
    window_file: list[int] = field(default_factory=list)
    window_lines: list[tuple[int, int]] = field(default_factory=list)
    dense: list[int] = field(default_factory=list)  # files of at least DENSE_TOKENS_PER_LINE terms a line

    def chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(tokens of consecutive windows end to end, their lengths)."""
        ends = self.text.line_ends  # read at the picked lines only: an update's few files (not a copy of every end)
        parts: list[np.ndarray] = []
        lengths: list[np.ndarray] = []
        held = 0
        for number, (numbers, picked) in enumerate(_known_lines(self.files)):
            bounds: list[tuple[int, int]] = []  # a window's first and one-past-last line (in ``numbers``)
            for i in range(0, numbers.size, STRIDE):
                last = min(i + WINDOW, numbers.size)
                self.ids.append(str(len(self.window_file)))
                self.window_file.append(number)
                self.window_lines.append((int(numbers[i]), int(numbers[last - 1])))
                bounds.append((i, last))
                if i + WINDOW >= numbers.size:
                    break
            spans = np.asarray(bounds, dtype=np.int64).reshape(-1, 2)
            picked_ends = np.asarray(ends[picked], dtype=np.int64)
            picked_starts = np.where(picked > 0, np.asarray(ends[np.maximum(picked - 1, 0)], dtype=np.int64), 0)
            file_tokens, at = _gather(self.text.ids, picked_starts, picked_ends)  # the file's tokens, line by line
            if file_tokens.size >= DENSE_TOKENS_PER_LINE * max(numbers.size, 1):
                self.dense.append(number)
            got, offsets = _gather(file_tokens, at[spans[:, 0]], at[spans[:, 1]])
            parts.append(got)
            lengths.append(np.diff(offsets))
            held += got.size
            if held >= CHUNK_TOKENS:
                yield np.concatenate(parts), np.concatenate(lengths)
                parts, lengths, held = [], [], 0
        if lengths:
            yield np.concatenate(parts), np.concatenate(lengths)


def _known_lines(files: Sequence[FileLines]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per file: its known line numbers, sorted, and the line of the table each comes from (the first
    fragment giving a line wins). One stable sort for ``FILES_AT_ONCE`` files: the keys (file, line)
    keep the files apart, so each file's first occurrences are its own."""
    for at in range(0, len(files), FILES_AT_ONCE):
        batch = files[at : at + FILES_AT_ONCE]
        sizes = np.asarray([int(lines.counts.sum()) for lines in batch], dtype=np.int64)
        if not sizes.sum():
            yield from ((np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)) for _ in batch)
            continue
        numbers = np.concatenate([ranges(lines.starts, lines.counts) for lines in batch])
        firsts = np.concatenate([ranges(lines.firsts, lines.counts) for lines in batch])
        low, span = int(numbers.min()), int(numbers.max() - numbers.min()) + 1
        keys = np.repeat(np.arange(len(batch), dtype=np.int64), sizes) * span + (numbers - low)
        unique, first = np.unique(keys, return_index=True)  # stable: the first occurrence of a key
        ends = np.searchsorted(unique, np.arange(1, len(batch) + 1, dtype=np.int64) * span)
        begin = 0
        for end in ends.tolist():
            yield unique[begin:end] % span + low, firsts[first[begin:end]]
            begin = end


@dataclass(frozen=True)
class FileWindows:
    """The files (sorted paths) and their windows: file number and (first, last) line of each, and the
    keyword index over their tokens (ids "0", "1", ...); the numbers of the dense (built) files."""

    files: list[str]
    window_file: list[int]
    window_lines: list[tuple[int, int]]
    index: KeywordIndex
    dense: list[int] = field(default_factory=list)


def file_windows(rows: Sequence[Any], text: TokenizedLines, numbering: str = "") -> FileWindows:
    """The windows of the files of ``rows`` (fragments with ``path``, ``start``, ``first_line``,
    ``lines``: a file's lines come from its fragments in ``rows``' order). Only this needs the texts'
    token numbers; what else the ranking index holds is built from ``rows`` after. ``numbering``: the
    name of ``text``'s token numbering (:class:`acms.index.keyword.Counts`)."""
    by_file: dict[str, list[Any]] = {}
    for r in rows:
        by_file.setdefault(r.path, []).append(r)
    files = sorted(by_file)
    windows = TokenWindows([FileLines(*(np.asarray(column, dtype=np.int64) for column in
                                        zip(*((r.start, r.first_line, r.lines) for r in by_file[path]))))
                            for path in files], text)
    index = KeywordIndex.from_chunks(windows.ids, windows.chunks(), text.tokens, numbering=numbering)  # a few files at a time
    return FileWindows(files, windows.window_file, windows.window_lines, index, windows.dense)
