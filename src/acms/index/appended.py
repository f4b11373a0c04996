"""A one-dimensional array kept as the parts it was appended from, read like one array without copying.

Why: the caches' token array and its line ends (a standard library's: 16 and 7 MB) only grow by an
update, which appends the lines of the rows it read again. Joined into one array, every refresh copied
both twice (when loading the saved base and its tail, and when appending the new lines), and the copies
of memory-mapped pages sometimes cost 50 ms more; yet an update reads only the lines it appended,
and saves only those. ``np.asarray`` of an :class:`Appended` joins the parts, for the readers that
need the whole array (a full build's, a compaction's).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["Appended", "appended"]


class Appended:
    """``parts`` end to end; indexed with an int, a slice (step 1) or an array of ints like an ndarray."""

    def __init__(self, parts: Sequence[np.ndarray]) -> None:
        self.parts = [p for p in parts if p.size] or list(parts[:1])
        self.dtype = np.result_type(*self.parts)
        self.ends = np.cumsum([p.size for p in self.parts], dtype=np.int64)
        self.size = int(self.ends[-1]) if self.ends.size else 0
        self.shape = (self.size,)
        self.ndim = 1

    def __len__(self) -> int:
        return self.size

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        joined = np.concatenate(self.parts) if len(self.parts) > 1 else np.asarray(self.parts[0])
        return joined if dtype is None else joined.astype(dtype, copy=False)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            start, stop, step = key.indices(self.size)
            if step != 1:
                return np.asarray(self)[key]
            pieces = []
            begin = 0
            for part, end in zip(self.parts, self.ends.tolist()):
                lo, hi = max(start, begin), min(stop, end)
                if lo < hi:
                    pieces.append(part[lo - begin : hi - begin])
                begin = end
            if len(pieces) == 1:
                return pieces[0]
            return np.concatenate(pieces) if pieces else np.zeros(0, dtype=self.dtype)
        index = np.asarray(key)
        if index.dtype == bool:
            index = np.flatnonzero(index)
        if index.ndim == 0:
            i = int(index) + (self.size if int(index) < 0 else 0)
            if not 0 <= i < self.size:
                raise IndexError("index out of range")
            n = int(np.searchsorted(self.ends, i, side="right"))
            return self.parts[n][i - (int(self.ends[n - 1]) if n else 0)]
        index = index.astype(np.int64, copy=False)
        index = np.where(index < 0, index + self.size, index)
        if index.size and (int(index.min()) < 0 or int(index.max()) >= self.size):
            raise IndexError("index out of range")
        which = np.searchsorted(self.ends, index, side="right")
        out = np.empty(index.shape, dtype=self.dtype)
        begin = 0
        for n, (part, end) in enumerate(zip(self.parts, self.ends.tolist())):
            mask = which == n
            if mask.any():
                out[mask] = part[index[mask] - begin]
            begin = end
        return out


def appended(first: np.ndarray | Appended, then: np.ndarray) -> np.ndarray | Appended:
    """``first`` and ``then`` end to end, without copying ``first``'s first part: its other parts (what
    updates appended since it was saved, small) are joined with ``then``, so a process that keeps updating
    one array holds two parts, not one per update. ``first`` itself when nothing follows."""
    if not then.size:
        return first
    if not isinstance(first, Appended):
        return Appended([first, then])
    head, *rest = first.parts
    return Appended([head, np.concatenate([*rest, then]) if rest else then])
