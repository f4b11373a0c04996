"""numpy helpers for what numpy itself does at a cost a short command notices."""

from __future__ import annotations

import numpy as np

__all__ = ["distinct"]


def distinct(values: np.ndarray) -> np.ndarray:
    """``values``' distinct values, sorted, as ``np.unique`` gives them: its first call imports
    ``numpy.ma`` (~6 ms), which every process that refreshes the index paid for this alone."""
    values = np.sort(np.asarray(values).ravel())
    if values.size < 2:
        return values
    first = np.empty(values.size, dtype=bool)
    first[0] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    return values[first]
