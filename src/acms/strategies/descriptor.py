"""A strategy is a folder: ``strategy.toml`` (this descriptor) plus the ``.rq`` files its phases run.

Declarative on purpose, so a user adds a strategy by dropping a folder (``--strategies-dir``), with no
code: a phase names one of the engines (``keyword``, ``vector``, ``graph``), its share of the budget
and, for ranked engines, the query that describes and scores the candidates.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from acms.errors import ConfigError

ENGINES = ("keyword", "vector", "graph")
CAPABILITIES = ("keyword", "vectors", "graph")


@dataclass(frozen=True)
class Phase:
    engine: str
    share: float
    query: str | None  # path relative to the strategy folder


@dataclass(frozen=True)
class StrategyDescriptor:
    name: str
    quality: float
    summary: str
    requires: tuple[str, ...]
    phases: tuple[Phase, ...]
    handles: dict[str, float] = field(default_factory=dict)
    min_similarity: float = 0.15
    folder: Traversable | None = None
    builtin: bool = True

    def query_text(self, phase: Phase) -> str:
        if phase.query is None or self.folder is None:
            raise ConfigError(f"strategy {self.name}: phase {phase.engine} has no query")
        # Built-ins are on the file system (wheel or checkout), so a phase may share a sibling's query.
        path = (Path(str(self.folder)) / phase.query).resolve()
        if not path.is_file():
            raise ConfigError(f"strategy {self.name}: query file not found: {phase.query}")
        return path.read_text(encoding="utf-8")

    def can_handle(self, has_focus: bool, capabilities: set[str]) -> tuple[float, str]:
        """Confidence in [0, 1] for a request, and why."""
        missing = [c for c in self.requires if c not in capabilities]
        if missing:
            return 0.0, f"needs {', '.join(missing)}"
        if has_focus and "focus" in self.handles:
            return self.handles["focus"], "request has focus entities"
        return self.handles.get("default", 1.0), "general request"


def parse_descriptor(text: str, folder: Traversable | None, builtin: bool) -> StrategyDescriptor:
    try:
        data: dict[str, Any] = tomllib.loads(text)
        phases = tuple(
            Phase(engine=str(p["engine"]), share=float(p.get("share", 1.0)), query=p.get("query"))
            for p in data.get("phase", [])
        )
        desc = StrategyDescriptor(
            name=str(data["name"]),
            quality=float(data["quality"]),
            summary=str(data.get("summary", "")),
            requires=tuple(data.get("requires", ())),
            phases=phases,
            handles={k: float(v) for k, v in data.get("can_handle", {}).items()},
            min_similarity=float(data.get("min_similarity", 0.15)),
            folder=folder,
            builtin=builtin,
        )
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"invalid strategy descriptor in {folder}: {exc}") from None
    bad = [p.engine for p in desc.phases if p.engine not in ENGINES]
    if bad or not desc.phases:
        raise ConfigError(f"strategy {desc.name}: phases must use engines {', '.join(ENGINES)} (got {bad or 'none'})")
    unknown = [c for c in desc.requires if c not in CAPABILITIES]
    if unknown:
        raise ConfigError(f"strategy {desc.name}: unknown capability {unknown}; known: {', '.join(CAPABILITIES)}")
    if not 0.0 <= desc.quality <= 1.0:
        raise ConfigError(f"strategy {desc.name}: quality must be within [0, 1]")
    return desc
