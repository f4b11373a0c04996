"""What plans and decisions look like outside the graph: statuses and the records commands print."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

STATUSES = ("proposed", "accepted", "rejected", "deprecated", "superseded", "retired")
# Statuses a decision may be recorded with; "retired" is what superseding does, not a choice.
RECORDABLE = ("proposed", "accepted", "rejected", "deprecated")
# Not current any more: plan-decision-context scores these x0.6 (so does queries/strategies/…).
HISTORICAL = ("retired", "superseded", "deprecated")
RECORDED_PREFIX = "D-"  # recorded decisions are D-1, D-2, …; ADR decisions are named by their path


@dataclass(frozen=True)
class DecisionInfo:
    """One decision as ``plan show`` / ``decision list`` report it."""

    id: str
    iri: str
    title: str
    status: str
    tier: str
    plan: str | None = None  # plan name
    source: str | None = None  # the ADR file, for ingested decisions
    created: str | None = None
    retired_at: str | None = None
    text: str = ""  # the statement: what was decided and why
    about: list[str] = field(default_factory=list)  # qualified names / paths (IRIs when unnamed)
    supersedes: list[str] = field(default_factory=list)  # decision ids
    superseded_by: list[str] = field(default_factory=list)

    @property
    def retired(self) -> bool:
        return self.tier == "cold" or self.status in HISTORICAL

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["retired"] = self.retired
        return data


@dataclass(frozen=True)
class PlanInfo:
    """A plan with its decisions and sub-plans (a tree)."""

    name: str
    iri: str
    parent: str | None
    created: str | None
    decisions: list[DecisionInfo] = field(default_factory=list)
    children: list[PlanInfo] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "iri": self.iri, "parent": self.parent, "created": self.created,
            "decisions": [d.as_dict() for d in self.decisions],
            "children": [c.as_dict() for c in self.children],
        }
