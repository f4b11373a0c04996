"""The tier policy and its rules: which current entities are hot, and moving them there.

Policy (settings ``hot_commits``, ``hot_days``, ``hot_use_days``): a current entity (file, code element,
section) is **hot** when one of the last ``hot_commits`` ingested commits touched it, when a commit or a
re-index changed it in the last ``hot_days`` days, or when an assembled context used it in the last
``hot_use_days`` days; every other current entity is **warm**; superseded versions, commits and
retired decisions are **cold**. An entity moves with its fragments. The selection queries and the two
moves (``demote-hot``, then ``promote-hot``) are SPARQL in ``queries/rules/``; a rebalance is one
update request, so readers never see an entity in two tiers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from pyoxigraph import Literal, NamedNode

from acms.config import Settings
from acms.sparql import catalog
from acms.store.oxigraph import OxigraphStore
from acms.vocab import TIERS, XSD


@dataclass(frozen=True)
class Policy:
    hot_commits: int
    hot_days: float
    hot_use_days: float

    @classmethod
    def of(cls, settings: Settings) -> Policy:
        return cls(settings.hot_commits, settings.hot_days, settings.hot_use_days)

    def describe(self) -> dict[str, str]:
        return {
            "hot": (f"current entities touched by the last {self.hot_commits} commits, changed in the last "
                    f"{self.hot_days:g} days, or used in an assembled context in the last {self.hot_use_days:g} days"),
            "warm": "the rest of the current project",
            "cold": "superseded versions of files and entities, commits, retired decisions",
        }


@dataclass(frozen=True)
class Rebalance:
    hot_entities: int
    reasons: dict[str, int]


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def time_literal(moment: datetime) -> Literal:
    return Literal(iso(moment), datatype=XSD.dateTime)


def hot_entities(store: OxigraphStore, policy: Policy, now: datetime | None = None) -> dict[str, set[NamedNode]]:
    """Entity IRIs the policy calls hot, by reason (an entity may have several)."""
    now = now or datetime.now(UTC)
    out: dict[str, set[NamedNode]] = {}
    if policy.hot_commits > 0:
        recent = [r["change"] for r in store.select(catalog.text("rules/recent-changes"))][: policy.hot_commits]
        if recent:
            rows = store.select(catalog.text("rules/touched-by"), {"change": recent})  # type: ignore[dict-item]
            out["recent commits"] = {r["e"] for r in rows}  # type: ignore[misc]
    if policy.hot_days > 0:
        since = {"since": time_literal(now - timedelta(days=policy.hot_days))}
        changed = {r["e"] for r in store.select(catalog.text("rules/revised-since"), since)}
        changed |= {r["e"] for r in store.select(catalog.text("rules/changed-since"), since)}
        out["changed recently"] = changed  # type: ignore[assignment]
    if policy.hot_use_days > 0:
        since = {"since": time_literal(now - timedelta(days=policy.hot_use_days))}
        out["used recently"] = {r["e"] for r in store.select(catalog.text("rules/used-since"), since)}  # type: ignore[misc]
    return out


def rebalance(store: OxigraphStore, policy: Policy, now: datetime | None = None) -> Rebalance:
    """Apply the policy: demote all of hot, promote the hot set, in one transaction."""
    by_reason = hot_entities(store, policy, now)
    chosen = sorted({e for es in by_reason.values() for e in es if isinstance(e, NamedNode)}, key=lambda n: n.value)
    ops: list[tuple[str, dict[str, list[NamedNode]] | None]] = [(catalog.text("rules/demote-hot.ru"), None)]
    if chosen:
        ops.append((catalog.text("rules/promote-hot.ru"), {"e": chosen}))
    store.replace(ops, [])
    hot = store.select(catalog.text("rules/entities-in-tier"), {"tier": TIERS["hot"]})
    return Rebalance(hot_entities=len(hot), reasons={k: len(v) for k, v in sorted(by_reason.items())})


def violations(store: OxigraphStore) -> list[tuple[str, int]]:
    """Resources with triples in more than one tier (the QC query); empty when consistent."""
    return [(r["s"].value, int(r["tiers"].value)) for r in store.select(catalog.text("rules/qc-one-tier"))]


def counts(store: OxigraphStore) -> dict[str, dict[str, int]]:
    """Triples and entities per tier."""
    triples = {r["graph"].value: int(r["n"].value) for r in store.select(catalog.text("stats/tiers"))}
    out = {}
    for name, graph in TIERS.items():
        entities = store.select(catalog.text("rules/entities-in-tier"), {"tier": graph})
        out[name] = {"triples": triples.get(graph.value, 0), "entities": len(entities)}
    return out


def record_use(store: OxigraphStore, entities: Iterable[str], now: datetime | None = None) -> int:
    """Count one use of each entity (meta graph). Returns how many were recorded."""
    iris = sorted({NamedNode(e) for e in entities if e.startswith(("http://", "https://", "urn:"))}, key=lambda n: n.value)
    if iris:
        store.update(catalog.text("rules/record-use.ru"), {"e": iris, "now": time_literal(now or datetime.now(UTC))})
    return len(iris)
