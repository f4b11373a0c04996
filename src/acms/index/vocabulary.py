"""The caches' token numbering as saved: tokens by number, and a hash index to find a token's number.

Why: an update of the caches tokenises the rows it reads again in the numbering the saved segment
uses, so it must find the number of each token it meets. A dict of every token (a standard library:
200k) cost a one-file refresh ~50 ms to read and build, for the ~2k tokens the file holds. Here the
tokens are a memory-mapped :class:`StringColumn` beside their CRC-32s, sorted, with the numbers in that
order: a token is found by a binary search of its hash and a comparison with the tokens of that hash.
An update only appends tokens (the ``tail``, a short list); a compaction numbers them again, and the
save that follows hashes them all again (~70 ms a standard library, as often as a compaction).
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
        """Every token hashed (a full build's, or a compaction's numbering)."""
        if isinstance(tokens, Vocabulary) and not tokens.tail:
            return tokens
        values = list(tokens)
        hashes = np.fromiter((zlib.crc32(t.encode("utf-8")) for t in values), dtype=np.uint32, count=len(values))
        order = np.argsort(hashes, kind="stable").astype(np.int32)
        return cls(StringColumn.of(values), hashes[order], order)

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
        whole = self if not self.tail else Vocabulary.of(list(self))
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
