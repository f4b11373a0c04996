"""What lives in an index directory (default ``.acms/`` at the project root).

    .acms/
      graph/    the Oxigraph store: the single source of truth
      cache/    derived caches, rebuilt from the graph when missing or stale
                (keyword postings, the vector matrix, the fitted default embedding model)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class IndexLayout:
    root: Path

    @property
    def graph(self) -> Path:
        return self.root / "graph"

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    def cache_dir(self, name: str) -> Path:
        return self.cache / name

    def exists(self) -> bool:
        return self.graph.is_dir() and any(self.graph.iterdir())
