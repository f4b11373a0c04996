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
    ("who calls parse_header", {"focus": ["parse_header"]}, "arce"),
])
def test_auto_routes_by_trait(intent: str, extra: dict[str, Any], strategy: str) -> None:
    req = request(intent, **extra)
    choice = StrategyRegistry.default().choose("auto", request_traits(req), ALL)
    assert choice.strategy.name == strategy, choice.reason


def test_unknown_trait_in_a_descriptor_is_a_config_error() -> None:
    text = 'name = "x"\nquality = 0.5\n[can_handle]\nweather = 1.0\n[[phase]]\nengine = "keyword"\nquery = "q.rq"\n'
    with pytest.raises(ConfigError, match="unknown can_handle trait"):
        parse_descriptor(text, None, builtin=False)


@pytest.mark.parametrize(("intent", "direction"), [
    ("who calls resolve_focus", "in"),
    ("callers of parse_header", "in"),
    ("where is normalize used?", "in"),
    ("which classes extend Base", "in"),
    ("what does index_project call", "out"),
    ("dependencies of the packer", "out"),
    ("how does the packer keep the budget", None),
])
def test_edge_direction(intent: str, direction: str | None) -> None:
    from acms.strategies.traits import edge_direction

    assert edge_direction(intent) == direction


def test_the_navigator_walks_the_way_the_task_asks(tmp_path) -> None:  # noqa: ANN001
    """"who calls X" puts X's callers before its callees (they tied at one hop and came in IRI order,
    callees first here); "what does X call" the other way round. The real index of a small project."""
    from acms.api import Index

    (tmp_path / "app.py").write_text(
        "def alpha_helper(x):\n    return x + 1\n\n\ndef center(x):\n    return alpha_helper(x) * 2\n\n\n"
        "def zeta_caller(y):\n    return center(y) - 3\n", encoding="utf-8")
    with Index.open(tmp_path) as idx:
        idx.index()

        def order(task: str) -> list[str]:
            items = idx.assemble(task, budget=2000, strategy="breadth-depth-navigator", focus=["app.center"]).assembled.items
            return [i.candidate.name for i in items]

        callers = order("who calls center")
        assert callers.index("app.zeta_caller") < callers.index("app.alpha_helper")
        callees = order("what does center call")
        assert callees.index("app.alpha_helper") < callees.index("app.zeta_caller")


def test_the_navigator_orders_tied_nodes_by_the_task_words(tmp_path) -> None:  # noqa: ANN001
    """Two callers one hop from the focus tie on the walk; the one whose body matches the task's words
    comes first, whichever it is (before, a fixed tie-breaker decided), and callers stay before callees."""
    from acms.api import Index

    (tmp_path / "app.py").write_text(
        "def center(x):\n    return helper(x) * 2\n\n\ndef helper(x):\n    return x + 1\n\n\n"
        "def shift_caller(values):\n    shifted = [center(v) + 3 for v in values]  # shift the values\n    return shifted\n\n\n"
        "def totals_caller(rows):\n    totals = [center(r) for r in rows]\n    return sum(totals)  # scale the totals\n",
        encoding="utf-8")
    with Index.open(tmp_path) as idx:
        idx.index()

        def order(task: str) -> list[str]:
            items = idx.assemble(task, budget=2000, strategy="breadth-depth-navigator", focus=["app.center"]).assembled.items
            return [i.candidate.name for i in items]

        by_totals, by_shift = order("who calls center to scale the totals"), order("who calls center to shift values")
        assert by_totals.index("app.totals_caller") < by_totals.index("app.shift_caller") < by_totals.index("app.helper")
        assert by_shift.index("app.shift_caller") < by_shift.index("app.totals_caller") < by_shift.index("app.helper")
