"""The tier policy's choice asks which candidates are current in rank order, a chunk at a time, and stops
at ``hot_max``: the hot set and the reasons are those of asking for every candidate at once and ranking
the current ones (the rule as it reads), whatever mix of current and gone candidates leads the ranks."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from pyoxigraph import NamedNode, Quad

from acms.sparql import catalog
from acms.store.oxigraph import OxigraphStore, in_memory
from acms.temporal import tiers
from acms.vocab import GRAPH_META, PROV, RDF, TIER_COLD, TIER_HOT, TIER_WARM, UKO

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def _store(seed: int, entities: int) -> OxigraphStore:
    """Entities revised or used at random times in the last days, about half of them still current
    (hot or warm), the gone ones often the most recent."""
    rng = random.Random(seed)
    store = in_memory()
    quads = []
    for i in range(entities):
        e = NamedNode(f"https://example.org/e{i:04d}")
        current = rng.random() < 0.5
        recent = rng.random() * (1 if not current else 6)  # days ago: the gone ones lead the ranks
        moment = tiers.time_literal(NOW - timedelta(days=recent, seconds=rng.randrange(3) * 60))
        if rng.random() < 0.7:
            v = NamedNode(f"{e.value}/v/{i}")
            quads += [Quad(v, PROV.specializationOf, e, TIER_COLD), Quad(v, PROV.invalidatedAtTime, moment, TIER_COLD)]
        else:
            quads.append(Quad(e, UKO.lastUsedAt, moment, GRAPH_META))
        if current:
            quads.append(Quad(e, RDF.type, UKO.Function, TIER_HOT if i % 3 == 0 else TIER_WARM))
    store.load(quads)
    return store


def _as_the_rule_reads(store: OxigraphStore, policy: tiers.Policy) -> tuple[list[NamedNode], dict[str, int]]:
    """Every candidate asked at once, the current ones ranked, the first ``hot_max`` kept."""
    by_reason = tiers.hot_entities(store, policy, NOW)
    last: dict[NamedNode, str] = {}
    for found in by_reason.values():
        for e, stamp in found.items():
            last[e] = max(last.get(e, ""), stamp)
    if not last:
        return [], {}
    candidates = sorted(last, key=lambda n: n.value)
    current = {r["e"] for r in store.select(catalog.text("history/current-entities"), {"e": candidates})}
    ranked = sorted((e for e in candidates if e in current), key=lambda e: (last[e], e.value), reverse=True)
    chosen = ranked[: max(policy.hot_max, 0)]
    return chosen, {k: sum(1 for e in v if e in set(chosen)) for k, v in sorted(by_reason.items())}


def _asking(monkeypatch: pytest.MonkeyPatch) -> list[NamedNode]:
    """The entities the choice asks whether they are current, as it asks."""
    asked: list[NamedNode] = []
    real = OxigraphStore.select_stream

    def counted(self: OxigraphStore, query: str, bindings: object = None):  # type: ignore[no-untyped-def]
        if query == catalog.text("history/current-entities"):
            asked.extend(bindings["e"])  # type: ignore[index]
        return real(self, query, bindings)  # type: ignore[arg-type]

    monkeypatch.setattr(OxigraphStore, "select_stream", counted)
    return asked


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("hot_max", [0, 1, 7, 40, 150, 400])
def test_the_chunked_choice_is_the_whole_one(seed: int, hot_max: int) -> None:
    store = _store(seed, 300)
    policy = tiers.Policy(hot_commits=0, hot_days=7, hot_use_days=7, hot_max=hot_max)
    chosen = tiers.choose(store, policy, NOW)
    assert chosen == _as_the_rule_reads(store, policy)
    assert len(chosen[0]) == min(hot_max, len({r["e"] for r in store.select(
        "SELECT DISTINCT ?e WHERE { GRAPH ?g { ?e a ?k } }")}))


def test_a_choice_asks_only_the_leading_ranks(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(4, 600)
    asked = _asking(monkeypatch)
    tiers.choose(store, tiers.Policy(hot_commits=0, hot_days=7, hot_use_days=7, hot_max=20), NOW)
    assert asked and len(asked) < 600 / 2


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("hot_max", [0, 7, 150])
def test_the_hot_tier_s_entities_are_taken_as_current_without_asking(seed: int, hot_max: int,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebalance knows the hot tier's entities (it reads them anyway): they are current, so the choice
    asks only about the others, and chooses as when it asks about every candidate."""
    store = _store(seed, 300)
    policy = tiers.Policy(hot_commits=0, hot_days=7, hot_use_days=7, hot_max=hot_max)
    hot = {r["e"] for r in store.select(catalog.text("rules/entities-in-tier"), {"tier": TIER_HOT})}
    asked = _asking(monkeypatch)
    assert tiers.choose(store, policy, NOW, current=hot) == _as_the_rule_reads(store, policy)
    assert not set(asked) & hot


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_choice_after_a_rebalance_asks_only_about_gone_candidates(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the policy's choice is the hot tier (a steady state, as after every refresh), the next choice
    asks about no current entity: the leading ranks are hot, and only candidates that are gone (in no
    current tier) are not known to be current."""
    store = _store(seed, 300)
    policy = tiers.Policy(hot_commits=0, hot_days=7, hot_use_days=7, hot_max=40)
    tiers.rebalance(store, policy, NOW)
    hot = {r["e"] for r in store.select(catalog.text("rules/entities-in-tier"), {"tier": TIER_HOT})}
    current = {r["e"] for r in store.select("SELECT DISTINCT ?e WHERE { GRAPH ?g { ?e a ?k } }")}
    asked = _asking(monkeypatch)
    assert tiers.choose(store, policy, NOW, current=hot) == _as_the_rule_reads(store, policy)
    assert not set(asked) & current
