"""The embedding provider contract (its errors, ``ProviderError`` and ``ProviderTimeout``, are in ``acms.errors``).

A provider turns texts into unit vectors. ``model_id`` and ``dimensions`` are recorded with the
vectors (in the graph), so that vectors from different models are never compared: a query
embedded by another model is refused until the vectors are rebuilt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

__all__ = ["EmbeddingProvider", "normalize_rows"]


class EmbeddingProvider(Protocol):
    """Not ``runtime_checkable`` on purpose: on Python 3.11 ``isinstance`` against a protocol
    evaluates its properties, and a remote provider's ``dimensions`` may make a request."""

    @property
    def model_id(self) -> str:
        """Identifies the model: equal ids promise comparable vectors."""
        ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape ``(len(texts), dimensions)``, rows of L2 norm 1.

        A text the model cannot represent at all (no known token, for a vocabulary model) gets
        a zero row: similarity 0 to everything. Raises ``ProviderError``.
        """
        ...

    def healthcheck(self) -> bool:
        """True when ``embed`` is expected to work now; never raises."""
        ...


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """float32 copy of ``matrix`` with rows scaled to unit L2 norm; zero rows stay zero."""
    out = np.asarray(matrix, dtype=np.float32).copy()
    if out.size:
        norms = np.linalg.norm(out, axis=1)
        nonzero = norms > 0
        out[nonzero] /= norms[nonzero, None]
    return out
