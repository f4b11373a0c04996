"""The caches' token numbering as saved: tokens by number, and a hash index to find a token's number.

Why: an update of the caches tokenises the rows it reads again in the numbering the saved segment
uses, so it must find the number of each token it meets. A dict of every token (a standard library:
200k) cost a one-file refresh ~50 ms to read and build, for the ~2k tokens the file holds. Here the
tokens are a memory-mapped :class:`StringColumn` beside their CRC-32s, sorted, with the numbers in that
order: a token is found by a binary search of its hash and a comparison with the tokens of that hash.
An update only appends tokens (the ``tail``, a short list), hashed into the base when saved whole; a
compaction numbers them again, and the save that follows hashes them all again (~70 ms a standard
library, as often as a compaction). The keyword indexes save their terms so too, beside bm25s' JSON
vocabulary (:class:`acms.index.keyword.Postings`).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np

from acms.index.string_column import StringColumn

__all__ = ["Vocabulary"]


class Vocabulary(Sequence[str]):
    """``base`` (hashed: ``hashes`` sorted, ``order`` the numbers in that order) then ``tail``."""

    def __init__(self, base: StringColumn, hashes: np.ndarray, order: np.ndarray, tail: Sequence[str] = ()) -> None:
        self.base, self.hashes, self.order = base, hashes, order
        self.tail = list(tail)
        self._n_base = len(base)
        self._tail_numbers = {token: self._n_base + i for i, token in enumerate(self.tail)}

    @classmethod
    def of(cls, tokens: Sequence[str]) -> Vocabulary:
        """Every token hashed (a full build's, or a compaction's numbering); a vocabulary with a tail gets
        only its tail hashed (``whole``)."""
        if isinstance(tokens, Vocabulary):
            return tokens.whole()
        encoded = [t.encode("utf-8") for t in tokens]
        hashes = _hashes(encoded)
        order = np.argsort(hashes, kind="stable").astype(np.int32)
        return cls(_column(encoded), hashes[order], order)

    def whole(self) -> Vocabulary:
        """The tail hashed into the base: what ``of`` makes of every token, the base's hashes kept (each
        tail token goes after the base's of its hash, in number order, as a stable sort puts it). Hashing
        a standard library's 200k tokens again cost ~0.1 s a save."""
        if not self.tail:
            return self
        encoded = [t.encode("utf-8") for t in self.tail]
        tail_hashes = _hashes(encoded)
        tail_order = np.argsort(tail_hashes, kind="stable")
        sorted_tail = tail_hashes[tail_order]
        at = np.searchsorted(np.asarray(self.hashes), sorted_tail, side="right")
        hashes = np.insert(np.asarray(self.hashes, dtype=np.uint32), at, sorted_tail)
        order = np.insert(np.asarray(self.order, dtype=np.int32), at, (self._n_base + tail_order).astype(np.int32))
        added = _column(encoded)
        base = self.base
        column = StringColumn(np.concatenate([np.asarray(base.blob, dtype=np.uint8), np.asarray(added.blob)]),
                              np.concatenate([np.asarray(base.offsets, dtype=np.int64),
                                              int(base.offsets[-1]) + np.asarray(added.offsets[1:])]))
        return Vocabulary(column, hashes, order)

    def __len__(self) -> int:
        return self._n_base + len(self.tail)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step == 1 and start >= self._n_base:
                return self.tail[start - self._n_base : stop - self._n_base]
            return [self[j] for j in range(start, stop, step)]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("vocabulary index out of range")
        return self.base[i] if i < self._n_base else self.tail[i - self._n_base]

    def __iter__(self) -> Iterator[str]:
        return iter(self.base.tolist() + self.tail)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Vocabulary, list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def number(self, token: str) -> int | None:
        """The token's number, or None when it has none."""
        found = self._tail_numbers.get(token)
        if found is not None:
            return found
        h = zlib.crc32(token.encode("utf-8"))
        hashes = self.hashes
        # the key as the array's type: a Python int made numpy cast all 200k hashes to int64 first (~25 µs)
        at = int(np.searchsorted(hashes, hashes.dtype.type(h)))
        while at < hashes.size and int(hashes[at]) == h:  # tokens of one hash (a few pairs in 200k)
            n = int(self.order[at])
            if self.base[n] == token:
                return n
            at += 1
        return None

    def extended(self, tokens: Sequence[str]) -> Vocabulary:
        """These tokens numbered after this vocabulary's."""
        return Vocabulary(self.base, self.hashes, self.order, self.tail + list(tokens)) if tokens else self

    def save_base(self, directory: Path, name: str) -> int:
        """Write the hashed part (hashing the tail first when there is one); how many tokens it holds."""
        whole = self.whole()
        whole.base.save(directory, name)
        np.save(directory / f"{name}.hashes.npy", np.asarray(whole.hashes, dtype=np.uint32))
        np.save(directory / f"{name}.order.npy", np.asarray(whole.order, dtype=np.int32))
        return len(whole)

    @staticmethod
    def files(name: str) -> list[str]:
        """The file names ``save_base`` writes (``nulls``: never, a token is a string)."""
        return [f"{name}.blob.npy", f"{name}.offsets.npy", f"{name}.hashes.npy", f"{name}.order.npy"]

    @classmethod
    def load(cls, directory: Path, name: str, tail: Sequence[str] = ()) -> Vocabulary:
        """The tokens memory-mapped; raises ``OSError`` or ``ValueError`` when the files are missing or do not fit."""
        base = StringColumn.load(directory, name)
        # read whole (~1.6 MB for 200k tokens, ~0.5 ms): a binary search of a memory-mapped array touches a
        # page at each of its ~18 steps, ~25 µs a token of an update's first lookups
        hashes = np.load(directory / f"{name}.hashes.npy", allow_pickle=False)
        order = np.load(directory / f"{name}.order.npy", allow_pickle=False)
        if base.nulls is not None or hashes.shape != (len(base),) or order.shape != (len(base),):
            raise ValueError(f"{name}: a vocabulary whose hash index does not fit its tokens")
        return cls(base, hashes, order, tail)


def _hashes(encoded: Sequence[bytes]) -> np.ndarray:
    return np.fromiter(map(zlib.crc32, encoded), dtype=np.uint32, count=len(encoded))


def _column(encoded: Sequence[bytes]) -> StringColumn:
    """Strings already encoded as a column (``StringColumn.of`` encodes them itself)."""
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    return StringColumn(np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets)
