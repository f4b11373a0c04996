"""Index arithmetic shared by the caches' arrays."""

from __future__ import annotations

import numpy as np

__all__ = ["ranges"]


def ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``starts[k] … starts[k] + counts[k] - 1`` for every ``k``, end to end."""
    total = int(counts.sum())
    offsets = np.zeros(counts.size, dtype=np.int64)
    np.cumsum(counts[:-1], out=offsets[1:])
    return np.repeat(starts - offsets, counts) + np.arange(total, dtype=np.int64)
