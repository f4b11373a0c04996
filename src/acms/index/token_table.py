"""Texts tokenised once, for several derived indexes.

Building the keyword index, the ranking index's windows and the LSA vectors each tokenised the same
fragment texts again. A ``TokenTable`` numbers tokens in order of first sight and keeps texts as
token numbers line by line, so one pass over the corpus feeds them all: a text's tokens, or any run
of its lines' tokens, are slices of one int32 array (``search_terms_by_line``).
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import count

import numpy as np

from acms.index.appended import Appended
from acms.index.ranges import ranges
from acms.index.tokenize import NEWLINE, search_terms, search_terms_by_line
from acms.index.vocabulary import Vocabulary

__all__ = ["TokenTable", "TokenizedLines"]


@dataclass(frozen=True)
class TokenizedLines:
    """Texts as token numbers, line by line: line ``j``'s tokens are ``ids[line_ends[j - 1]:line_ends[j]]``
    (from 0 for the first), numbers into ``tokens``; the lines of one text are consecutive."""

    ids: np.ndarray | Appended  # int32; an update's: the saved array and the lines it appended
    line_ends: np.ndarray | Appended  # int64
    tokens: Sequence[str]  # a list, or a saved Vocabulary (and the tokens numbered since)


class TokenTable:
    """Numbers tokens in order of first sight and collects texts tokenised line by line, into the
    keyword indexes' terms (``search_terms``, as ``KeywordIndex.build`` tokenises)."""

    def __init__(self, tokens: Sequence[str] = ()) -> None:
        """``tokens``: a vocabulary to go on from (a saved one, its ``NEWLINE`` first): they keep their
        numbers and new tokens come after them."""
        self.vocab: dict[str, int] = defaultdict(count(len(tokens)).__next__)
        self.vocab.update(zip(tokens, range(len(tokens))))
        self.number = self.vocab.__getitem__
        self.newline = self.number(NEWLINE)
        self._ids = array("i")  # texts' tokens with a NEWLINE after every line (the last too)
        self._lines = 0

    @classmethod
    def over(cls, vocabulary: Vocabulary) -> TokenTable:
        """``TokenTable(vocabulary)`` that looks each token up in the saved ``vocabulary`` when it first
        meets it (:class:`_LookedUp`), rather than numbering every token first: for an update of a few
        files (~2k tokens against a standard library's 200k)."""
        table = cls()
        table.vocab = _LookedUp(vocabulary)
        table.number = table.vocab.__getitem__
        table.newline = table.number(NEWLINE)
        return table

    @classmethod
    def going_on(cls, vocab: dict[str, int]) -> TokenTable:
        """``TokenTable(tokens)`` from the numbering an earlier table left (``vocab``, token -> number,
        numbered 0 … n - 1): copied in C rather than numbered again (~20 ms per 200k tokens)."""
        table = cls()
        table.vocab = defaultdict(count(len(vocab)).__next__, vocab)
        table.number = table.vocab.__getitem__
        table.newline = table.number(NEWLINE)
        return table

    def add_lines(self, text: str) -> tuple[int, int]:
        """Tokenise ``text``: (its first line's number, its number of lines)."""
        first = self._lines
        self._ids.extend(map(self.number, search_terms_by_line(text)))
        self._ids.append(self.newline)
        self._lines += text.count("\n") + 1
        return first, self._lines - first

    def copied_lines(self, text: TokenizedLines, firsts: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Lines ``firsts[k]`` … ``firsts[k] + counts[k] - 1`` of ``text`` (tokenised by a table this one
        goes on from: the same numbers) added as they are, for texts known to be those lines' (a
        fragment written again unchanged): the first line of each, in this table."""
        firsts, counts = np.asarray(firsts, dtype=np.int64), np.asarray(counts, dtype=np.int64)
        lines = ranges(firsts, counts)
        ends = np.asarray(text.line_ends[lines], dtype=np.int64) if lines.size else np.zeros(0, dtype=np.int64)
        starts = np.where(lines > 0, np.asarray(text.line_ends[np.maximum(lines - 1, 0)], dtype=np.int64), 0) \
            if lines.size else np.zeros(0, dtype=np.int64)
        tokens = np.asarray(text.ids[ranges(starts, ends - starts)], dtype=np.int32) if lines.size else np.zeros(0, dtype=np.int32)
        block = np.insert(tokens, np.cumsum(ends - starts), np.int32(self.newline))  # a NEWLINE after every line
        self._ids.frombytes(block.astype(np.int32, copy=False).tobytes())
        at = self._lines + np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64) if counts.size \
            else np.zeros(0, dtype=np.int64)
        self._lines += int(counts.sum())
        return at

    def ids(self, text: str) -> array:
        return array("i", map(self.number, search_terms(text)))

    def lines(self) -> TokenizedLines:
        """The texts added so far; the table keeps numbering further tokens but takes no more texts.

        The line breaks are dropped in place, a block at a time: a copy of the corpus's token
        numbers, and a mask as long, were the caches' largest arrays after the numbers themselves.
        """
        raw = np.frombuffer(self._ids, dtype=np.int32) if len(self._ids) else np.zeros(0, dtype=np.int32)
        breaks: list[np.ndarray] = []
        kept = 0
        for start in range(0, raw.size, _BLOCK):
            block = raw[start : start + _BLOCK]
            at = np.flatnonzero(block == self.newline)
            breaks.append(kept + at - np.arange(at.size))  # the tokens before each break
            tokens = block[block != self.newline]  # a copy: the block's tokens move forward, never past it
            raw[kept : kept + tokens.size] = tokens
            kept += tokens.size
        self.add_lines = self.copied_lines = self._closed  # type: ignore[method-assign]
        ids = raw[:kept]
        line_ends = np.concatenate(breaks) if breaks else np.zeros(0, dtype=np.int64)
        return TokenizedLines(ids, line_ends, self.tokens())

    def tokens(self) -> Sequence[str]:
        """Every token by number: those of the vocabulary it went on from, then those it added."""
        vocab = self.vocab
        return vocab.vocabulary.extended(vocab.added) if isinstance(vocab, _LookedUp) else list(vocab)

    def numbering(self) -> dict[str, int] | None:
        """Every token's number (None when it looked tokens up: it knows only those it met)."""
        return None if isinstance(self.vocab, _LookedUp) else self.vocab

    def _closed(self, *_: object) -> tuple[int, int]:
        raise RuntimeError("this TokenTable's lines were taken: it takes no more texts")


_BLOCK = 1 << 20  # tokens moved at once by ``TokenTable.lines``


class _LookedUp(dict[str, int]):
    """A numbering going on from a saved vocabulary: a token it has not met is looked up there, and
    numbered after it (and after the tokens added before) when the vocabulary lacks it."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        super().__init__()
        self.vocabulary = vocabulary
        self.added: list[str] = []

    def __missing__(self, token: str) -> int:
        number = self.vocabulary.number(token)
        if number is None:
            number = len(self.vocabulary) + len(self.added)
            self.added.append(token)
        self[token] = number
        return number
