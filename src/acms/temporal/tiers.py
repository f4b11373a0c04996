"""The tier policy and its rules: which current entities are hot, and moving them there.

Policy (settings ``hot_commits``, ``hot_days``, ``hot_use_days``, ``hot_max``): a current entity (file,
code element, section) is **hot** when one of the last ``hot_commits`` ingested commits touched it, when
a commit or a re-index changed it in the last ``hot_days`` days, or when an assembled context used it in
the last ``hot_use_days`` days; at most ``hot_max`` of them, the most recently active first (hot is a
working set, not "everything this month"). Every other current entity is **warm**; superseded
versions, commits and retired decisions are **cold**. An entity moves with its fragments. The selection
queries and the moves (``demote-hot``, ``promote-hot``: only the entities whose tier changes, since
moving a triple costs about as much as writing it) are SPARQL in ``queries/rules/``; a rebalance is one
update request, so readers never see an entity in two tiers.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from pyoxigraph import Literal, NamedNode

from acms.config import Settings
from acms.sparql import catalog
from acms.store.protocol import GraphStore, SupportsStreamingSelect
from acms.temporal.versions import Update
from acms.vocab import TIERS, XSD


@dataclass(frozen=True)
class Policy:
    hot_commits: int
    hot_days: float
    hot_use_days: float
    hot_max: int = 500

    @classmethod
    def of(cls, settings: Settings) -> Policy:
        return cls(settings.hot_commits, settings.hot_days, settings.hot_use_days, settings.hot_max)

    def describe(self) -> dict[str, str]:
        return {
            "hot": (f"current entities touched by the last {self.hot_commits} commits, changed in the last "
                    f"{self.hot_days:g} days, or used in an assembled context in the last {self.hot_use_days:g} "
                    f"days; at most {self.hot_max}, most recent first"),
            "warm": "the rest of the current project",
            "cold": "superseded versions of files and entities, commits, retired decisions",
        }


@dataclass(frozen=True)
class Rebalance:
    hot_entities: int
    promoted: int
    demoted: int
    reasons: dict[str, int]
    hot: tuple[str, ...] = ()  # the hot tier's entities now, sorted (what ``rules/entities-in-tier.rq`` gives)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def time_literal(moment: datetime) -> Literal:
    return Literal(iso(moment), datatype=XSD.dateTime)


def hot_entities(store: GraphStore, policy: Policy, now: datetime | None = None,
                 revised: Mapping[str, str] | None = None) -> dict[str, dict[NamedNode, str]]:
    """Entity IRIs the policy calls hot, by reason, each with the time of its latest activity. ``revised``:
    what ``revised_since`` gives for this ``now`` (an index run's ledger, :mod:`acms.temporal.revisions`)."""
    now = now or datetime.now(UTC)
    out: dict[str, dict[NamedNode, str]] = {}

    def collect(reason: str, key: str, bindings: dict[str, object]) -> None:
        found = out.setdefault(reason, {})
        for r in _rows(store, key, bindings):
            e, last = r["e"], _sortable(r["last"].value)  # type: ignore[union-attr]
            if isinstance(e, NamedNode):
                found[e] = max(last, found.get(e, ""))

    if policy.hot_commits > 0:
        recent = [r["change"] for r in store.select(catalog.text("rules/recent-changes"))][: policy.hot_commits]
        if recent:
            collect("recent commits", "rules/touched-by", {"change": recent})
    if policy.hot_days > 0:  # changed by a re-index (a new version) or by a commit
        since = now - timedelta(days=policy.hot_days)
        found = out.setdefault("changed recently", {})
        for iri, last in (revised_since(store, since) if revised is None else revised).items():
            e = NamedNode(iri)
            found[e] = max(_sortable(last), found.get(e, ""))
        collect("changed recently", "rules/changed-since", {"since": time_literal(since)})
    if policy.hot_use_days > 0:
        collect("used recently", "rules/used-since", {"since": time_literal(now - timedelta(days=policy.hot_use_days))})
    return out


def revised_since(store: GraphStore, since: datetime) -> dict[str, str]:
    """Entity IRI -> the latest time one of its versions was superseded (by a re-index or a commit), for
    those superseded at or after ``since`` (``rules/revised-since.rq``)."""
    out: dict[str, str] = {}
    for r in _rows(store, "rules/revised-since", {"since": time_literal(since)}):
        e, last = r["e"], r["last"]
        if isinstance(e, NamedNode) and isinstance(last, Literal):
            out[e.value] = last.value
    return out


def _rows(store: GraphStore, key: str, bindings: Mapping[str, object]) -> Iterable[Mapping[str, object]]:
    """A selection's rows as they are evaluated where the store can (no dict of terms a row: the uses and
    versions of a standard library after a few branch switches are thousands of rows every run)."""
    if isinstance(store, SupportsStreamingSelect):
        return store.select_stream(catalog.text(key), bindings)  # type: ignore[arg-type, return-value]
    return store.select(catalog.text(key), bindings)  # type: ignore[arg-type]


@lru_cache(maxsize=1 << 16)  # the same stamps every run: a refresh's window holds thousands of revisions
def _sortable(stamp: str) -> str:
    """Commit times carry offsets (+01:00), acms' own are UTC (Z): compare them as UTC."""
    if not stamp:
        return ""
    try:
        return iso(datetime.fromisoformat(stamp))
    except ValueError:
        return stamp


def choose(store: GraphStore, policy: Policy, now: datetime | None = None, current: Collection[NamedNode] = (),
           revised: Mapping[str, str] | None = None) -> tuple[list[NamedNode], dict[str, int]]:
    """The hot set: current entities only, most recent activity first, at most ``hot_max``. ``current``:
    entities known to be current (the hot tier's, which a rebalance reads anyway): not asked about.
    ``revised``: as for ``hot_entities``."""
    by_reason = hot_entities(store, policy, now, revised)
    last: dict[NamedNode, str] = {}
    for found in by_reason.values():
        for e, stamp in found.items():
            last[e] = max(last.get(e, ""), stamp)
    if not last:
        return [], {}
    # The candidates by rank, asked whether they are current in rank order until ``hot_max`` are: each
    # round asks about the candidates not known to be current among the fewest that would fill the set
    # if they all were. In a steady state the leading ones are hot already, and a one-file refresh asks
    # about the few it changed (asking for the ~340 a standard library's rank 1,000 reached took ~25 ms
    # of every refresh; for all ~3.4k candidates whose contexts were used, ~0.05 s)
    ranked = sorted(last, key=lambda e: (last[e], e.value), reverse=True)
    wanted = max(policy.hot_max, 0)
    chosen: list[NamedNode] = []
    start = 0
    while len(chosen) < wanted and start < len(ranked):
        need = wanted - len(chosen)
        chunk = ranked[start : start + need]
        start += len(chunk)
        ask = [e for e in chunk if e not in current]
        found = {r["e"] for r in _rows(store, "history/current-entities", {"e": ask})} if ask else set()
        chosen += [e for e in chunk if e in found or e in current]
    kept = set(chosen)
    return chosen, {k: sum(1 for e in v if e in kept) for k, v in sorted(by_reason.items())}


def rebalance(store: GraphStore, policy: Policy, now: datetime | None = None,
              revised: Mapping[str, str] | None = None) -> Rebalance:
    """Apply the policy: move only what changes tier (a steady state moves nothing), in one transaction.
    ``revised``: as for ``hot_entities``."""
    hot_now = {r["e"] for r in store.select(catalog.text("rules/entities-in-tier"), {"tier": TIERS["hot"]})}
    chosen, reasons = choose(store, policy, now, current={e for e in hot_now if isinstance(e, NamedNode)},
                             revised=revised)
    wanted = set(chosen)
    demote = sorted((e for e in hot_now - wanted if isinstance(e, NamedNode)), key=lambda n: n.value)
    promote = sorted(wanted - hot_now, key=lambda n: n.value)
    ops: list[Update] = []
    if demote:
        ops.append((catalog.text("rules/demote-hot.ru"), {"e": demote}))
    if promote:
        ops.append((catalog.text("rules/promote-hot.ru"), {"e": promote}))
    if ops:
        store.replace(ops, [])  # type: ignore[arg-type]
    return Rebalance(hot_entities=len(wanted), promoted=len(promote), demoted=len(demote), reasons=reasons,
                     hot=tuple(sorted(e.value for e in wanted)))


def violations(store: GraphStore) -> list[tuple[str, int]]:
    """Resources with triples in more than one tier (the QC query); empty when consistent."""
    return [(r["s"].value, int(r["tiers"].value)) for r in store.select(catalog.text("rules/qc-one-tier"))]


def counts(store: GraphStore) -> dict[str, dict[str, int]]:
    """Triples and entities per tier."""
    triples = {r["graph"].value: int(r["n"].value) for r in store.select(catalog.text("stats/tiers"))}
    out = {}
    for name, graph in TIERS.items():
        entities = store.select(catalog.text("rules/entities-in-tier"), {"tier": graph})
        out[name] = {"triples": triples.get(graph.value, 0), "entities": len(entities)}
    return out


def record_use(store: GraphStore, entities: Iterable[str], now: datetime | None = None) -> int:
    """Count one use of each entity (meta graph). Returns how many were recorded."""
    iris = sorted({NamedNode(e) for e in entities if e.startswith(("http://", "https://", "urn:"))}, key=lambda n: n.value)
    if iris:
        store.update(catalog.text("rules/record-use.ru"), {"e": iris, "now": time_literal(now or datetime.now(UTC))})
    return len(iris)
