"""The index run orchestration (see ``run_index``)."""

from __future__ import annotations

from pathlib import Path

from acms.config import Settings
from acms.ingest.pipeline import IndexReport, Progress, index_project
from acms.store.layout import IndexLayout
from acms.store.protocol import GraphStore

__all__ = ["IndexReport", "Progress", "run_index"]


def run_index(root: Path, store: GraphStore, settings: Settings, layout: IndexLayout, *, history: int = 0,
              progress: Progress | None = None) -> IndexReport:
    return index_project(root, store, settings, progress=progress, layout=layout, history=history)  # type: ignore[arg-type]
