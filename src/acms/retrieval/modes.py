"""The search modes, apart from the searcher: a command lists them as its choices without the engine."""

from __future__ import annotations

from enum import Enum

__all__ = ["Mode"]


class Mode(str, Enum):
    KEYWORD = "keyword"
    VECTOR = "vector"
    HYBRID = "hybrid"
