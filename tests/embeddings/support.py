from __future__ import annotations

import inspect

from acms.embeddings.base import EmbeddingProvider


def conforms(provider: object) -> bool:
    """Structural check against ``EmbeddingProvider`` without evaluating any property."""
    members = ("model_id", "dimensions", "embed", "healthcheck")
    for name in members:
        ours = inspect.getattr_static(EmbeddingProvider, name)
        theirs = inspect.getattr_static(type(provider), name, None)
        if theirs is None or isinstance(ours, property) != isinstance(theirs, property):
            return False
    return True
