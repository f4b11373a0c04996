"""A strategy is a folder: ``strategy.toml`` (this descriptor) plus the ``.rq`` files its phases run.

Declarative on purpose, so a user adds a strategy by dropping a folder (``--strategies-dir``), with no
code: a phase names one of the registered engines (built in: ``rank``, ``keyword``, ``vector``, ``graph``,
``query``; the registry checks the name), its share of the
budget and, for ranked and query engines, the query that describes and scores the candidates. A
``expand`` phase walks the graph from the earlier phases' candidates (the seeds), with its edge
weights, depth and budget shares as its table's other keys (:mod:`acms.strategies.expand`). A
``query`` phase is pure SPARQL: it gets the request's focus entities and plan as VALUES and returns
scored candidates; ``fallback`` names the query to run when it returns none.

``can_handle`` maps request traits to confidence: ``default``, ``focus`` (focus entities given), and
the specialist traits ``plan`` (the request names a plan), ``history`` ("why was X changed") and
``decision`` ("what did we decide about X"). A request with a specialist trait goes to the strategies
that declare it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from acms.errors import ConfigError
from acms.text_checks import strict_toml

CAPABILITIES = ("keyword", "vectors", "graph")
SPECIALIST_TRAITS = {"plan", "history", "decision"}
TRAIT_REASONS = {
    "focus": "request has focus entities",
    "plan": "request names a plan",
    "history": "task asks about history",
    "decision": "task asks about decisions",
}


_PHASE_KEYS = {"engine", "share", "query", "fallback", "breadth"}


@dataclass(frozen=True)
class Phase:
    engine: str
    share: float
    query: str | None  # path relative to the strategy folder
    fallback: str | None = None  # query engine: run when ``query`` returns no rows
    breadth: int | None = None  # graph engine: hops when the request does not say
    # Engine-specific settings: every other key of the ``[[phase]]`` table (an ``expand`` phase's edge
    # weights, depth and budget shares), checked by the engine that reads them.
    options: Mapping[str, Any] = field(default_factory=dict)


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

    def has_query(self, name: str) -> bool:
        return self.folder is not None and (Path(str(self.folder)) / name).is_file()

    def query_text(self, phase: Phase, name: str | None = None) -> str:
        name = name or phase.query
        if name is None or self.folder is None:
            raise ConfigError(f"strategy {self.name}: phase {phase.engine} has no query")
        # Built-ins are on the file system (wheel or checkout), so a phase may share a sibling's query.
        path = (Path(str(self.folder)) / name).resolve()
        if not path.is_file():
            raise ConfigError(f"strategy {self.name}: query file not found: {name}")
        return path.read_text(encoding="utf-8")

    @property
    def specialties(self) -> set[str]:
        return set(self.handles) & SPECIALIST_TRAITS

    def can_handle(self, traits: set[str], capabilities: set[str]) -> tuple[float, str]:
        """Confidence in [0, 1] for a request with these traits, and why."""
        missing = [c for c in self.requires if c not in capabilities]
        if missing:
            return 0.0, f"needs {', '.join(missing)}"
        matched = sorted(t for t in traits if t in self.handles)
        if matched:
            best = max(matched, key=lambda t: self.handles[t])
            return self.handles[best], TRAIT_REASONS[best]
        return self.handles.get("default", 1.0), "general request"


def parse_descriptor(text: str, folder: Traversable | None, builtin: bool) -> StrategyDescriptor:
    try:
        data: dict[str, Any] = strict_toml(text)  # InputProblem is a ValueError: caught below
        phases = tuple(
            Phase(engine=str(p["engine"]), share=float(p.get("share", 1.0)), query=p.get("query"),
                  fallback=p.get("fallback"), breadth=p.get("breadth"),
                  options={k: v for k, v in p.items() if k not in _PHASE_KEYS})
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
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"invalid strategy descriptor in {folder}: {exc}") from None
    if not desc.phases:
        raise ConfigError(f"strategy {desc.name}: a strategy needs at least one [[phase]]")
    if any(p.engine == "query" and not p.query for p in desc.phases):
        raise ConfigError(f"strategy {desc.name}: a query phase needs a query file")
    unknown_traits = sorted(set(desc.handles) - {"default", "focus"} - SPECIALIST_TRAITS)
    if unknown_traits:
        raise ConfigError(f"strategy {desc.name}: unknown can_handle trait {unknown_traits}; known: "
                          f"default, focus, {', '.join(sorted(SPECIALIST_TRAITS))}")
    unknown = [c for c in desc.requires if c not in CAPABILITIES]
    if unknown:
        raise ConfigError(f"strategy {desc.name}: unknown capability {unknown}; known: {', '.join(CAPABILITIES)}")
    if not 0.0 <= desc.quality <= 1.0:
        raise ConfigError(f"strategy {desc.name}: quality must be within [0, 1]")
    return desc
