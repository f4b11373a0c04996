"""auto: a request's traits route history, plan and decision questions to the strategies that declare them."""

from __future__ import annotations

from typing import Any

import pytest

from acms.assembly.protocol import parse_request
from acms.errors import ConfigError
from acms.strategies.descriptor import parse_descriptor
from acms.strategies.registry import StrategyRegistry
from acms.strategies.traits import request_traits

ALL = {"keyword", "vectors", "graph"}


def request(intent: str, **extra: Any):  # noqa: ANN201 - a RenderRequest
    return parse_request({"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "intent": intent,
                          "request_id": "t", "budgets": {"tokens_max": 1000, "time_ms": 1000}, **extra})


@pytest.mark.parametrize(("intent", "extra", "traits"), [
    ("why was parse_header changed", {}, {"history"}),
    ("when did we introduce the retry loop in fetch", {}, {"history"}),
    ("show the history of the tokenizer", {}, {"history"}),
    ("what did we decide about session storage", {}, {"decision"}),
    ("add a cache to the parser", {}, set()),
    ("change the parser to accept tabs", {}, set()),  # "change" alone is a task, not a history question
    ("who changed the retry loop", {}, {"history"}),
    ("When was the tokenizer rewritten?", {}, {"history"}),
    # a wh-word in a task's subordinate clause is no question about the past
    ("fix FileSystemCache.clear()\nthe temp files we need when updating the cache using a tempfile and\n"
     "an atomic rename.\nadded a _list_dir() method", {}, set()),
    ("encode the query when parameters are present: they must not be added twice", {}, set()),
    ("add expiry", {"plan": "storage", "focus": ["pkg.store"]}, {"plan", "focus"}),
])
def test_traits(intent: str, extra: dict[str, Any], traits: set[str]) -> None:
    assert request_traits(request(intent, **extra)) == traits


@pytest.mark.parametrize(("intent", "extra", "strategy"), [
    ("why was parse_header changed", {}, "temporal-archaeology"),
    ("why was parse_header changed", {"focus": ["parse_header"]}, "temporal-archaeology"),
    ("what did we decide about session storage", {}, "plan-decision-context"),
    ("add session expiry", {"plan": "storage"}, "plan-decision-context"),
    ("add a cache to the parser", {}, "arce"),
    ("who calls parse_header", {"focus": ["parse_header"]}, "breadth-depth-navigator"),
])
def test_auto_routes_by_trait(intent: str, extra: dict[str, Any], strategy: str) -> None:
    req = request(intent, **extra)
    choice = StrategyRegistry.default().choose("auto", request_traits(req), ALL)
    assert choice.strategy.name == strategy, choice.reason


def test_unknown_trait_in_a_descriptor_is_a_config_error() -> None:
    text = 'name = "x"\nquality = 0.5\n[can_handle]\nweather = 1.0\n[[phase]]\nengine = "keyword"\nquery = "q.rq"\n'
    with pytest.raises(ConfigError, match="unknown can_handle trait"):
        parse_descriptor(text, None, builtin=False)
