"""The public façade: open a project's index, ingest, search, assemble, query.

    from acms import Index
    with Index.open("path/to/project") as idx:
        idx.index()
        print(idx.assemble("how is the budget enforced", budget=2000).rendered)
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Any

from acms.assembly.assemble import AssemblyResult, assemble
from acms.assembly.protocol import RenderRequest, parse_request
from acms.config import Settings, load_settings
from acms.paths import project_root
from acms.ingest.pipeline import IndexReport, index_project
from acms.retrieval.search import Mode, SearchResult, Searcher
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore
from acms.store.protocol import Row
from acms.strategies.registry import StrategyRegistry


class Index:
    """One project's index, opened for writing (one writer process at a time)."""

    def __init__(self, root: Path, settings: Settings, store_dir: Path | None = None) -> None:
        self.root = root
        self.settings = settings
        self.layout = IndexLayout(store_dir or root / settings.store)
        self.store = OxigraphStore(self.layout.graph)
        self.registry = StrategyRegistry.default()
        self._searcher: Searcher | None = None

    @classmethod
    def open(cls, project: str | Path, *, store: str | Path | None = None, **overrides: Any) -> Index:
        root = project_root(project)
        return cls(root, load_settings(root).merged(overrides, "Index.open"), Path(store) if store else None)

    @property
    def searcher(self) -> Searcher:
        if self._searcher is None:
            self._searcher = Searcher(self.store, self.layout, self.settings)
        return self._searcher

    def index(self) -> IndexReport:
        self._searcher = None  # derived caches are keyed by the index state: start afresh
        return index_project(self.root, self.store, self.settings, layout=self.layout)

    def search(self, text: str, mode: str = "hybrid", k: int = 10) -> SearchResult:
        return self.searcher.search(text, Mode(mode), k)

    def assemble(self, task: str, budget: int = 4000, **request: Any) -> AssemblyResult:
        """``request`` takes any render_request.v0 field (strategy, focus, privacy_mode, filters, …)."""
        data = {"version": "v0", "id": "00000000-0000-4000-8000-000000000000", "intent": task,
                "request_id": "api", "budgets": {"tokens_max": budget, "time_ms": request.pop("time_ms", 5000)},
                **request}
        return self.render(parse_request(data))

    def render(self, request: RenderRequest, output: str | None = None) -> AssemblyResult:
        return assemble(request, self.searcher, self.registry, output=output)

    def query(self, sparql: str, bindings: dict[str, Any] | None = None) -> list[Row]:
        return self.store.select(sparql, bindings)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: tuple[type[BaseException], BaseException, TracebackType] | Any) -> None:
        self.close()
