"""Hubs the walk passes by, over a small project the tests index: a helper called from more places than
``max_fan`` brings none of its callers (the edge says little), one called from fewer brings them;
``expand-in-counts.rq``, which keeps the hubs from being read at all, counts what ``expand-in.rq``
lists; a name borne by more entities than resolve (``AMBIGUOUS``) is counted (``name-counts.rq``), not
asked of ``defined-names.rq``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyoxigraph import Literal, NamedNode

from acms.assembly.protocol import parse_request
from acms.retrieval.search import Searcher
from acms.service.assembly import assemble
from acms.strategies.expand import AMBIGUOUS
from acms.strategies.registry import StrategyRegistry
from acms.vocab import UKO, XSD
from .walks import arce_with, searcher_of

CALLERS = 12
FILES = {
    "core/__init__.py": "",
    "core/log.py": 'def log(message):\n    """Write one line."""\n    return message\n',
    "core/rare.py": 'def rare(value):\n    """Seldom used."""\n    return value\n',
    "app/__init__.py": "",
    **{f"app/job{i}.py": f"from core.log import log\n\n\ndef job{i}():\n    return log('{i}')\n\n\ndef run():\n    return {i}\n"
       for i in range(CALLERS)},
    "app/start.py": "def start(task):\n    return run(task) + rare(task)\n",
    "app/once.py": "from core.rare import rare\n\n\ndef first():\n    return rare(1)\n\n\ndef second():\n    return rare(2)\n",
}


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Searcher]:
    yield from searcher_of(FILES, tmp_path_factory.mktemp("fan") / "proj")


def names(searcher: Searcher, focus: str, registry: StrategyRegistry) -> set[str]:
    data = {"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f61", "intent": "please refactor",
            "request_id": "r1", "strategy": "arce", "focus": [focus], "budgets": {"tokens_max": 4000, "time_ms": 10000}}
    result = assemble(parse_request(data), searcher, registry)
    return {p.candidate.name for p in result.assembled.items}


def test_a_hub_s_callers_are_not_followed_past_max_fan(searcher: Searcher) -> None:
    callers = {f"app.job{i}.job{i}" for i in range(CALLERS)}
    assert callers <= names(searcher, "core/log.py::log", arce_with(max_fan=CALLERS))
    assert not callers & names(searcher, "core/log.py::log", arce_with(max_fan=CALLERS - 1))
    assert {"app.once.first", "app.once.second"} <= names(searcher, "core/rare.py::rare", arce_with(max_fan=CALLERS - 1))


def test_a_hub_is_not_asked_for_its_callers(searcher: Searcher) -> None:
    """Past ``max_fan``, the hub's inward calls are left out of ``expand-in.rq``'s rows, not read and dropped."""
    sent: list[str] = []
    store = searcher.store
    store.tracer = lambda text, _seconds: sent.append(text)  # type: ignore[attr-defined]
    try:
        names(searcher, "core/log.py::log", arce_with(max_fan=CALLERS - 1))
    finally:
        store.tracer = None  # type: ignore[attr-defined]
    inward = [t for t in sent if "# name: expand-in\n" in t]
    log = "<https://w3id.org/acms/id/proj/code/core/log.py#core.log.log>"
    assert any("# name: expand-in-counts" in t and log in t for t in sent)
    assert not any(f"({log} " in t and f"<{UKO.calls.value}>" in t.split(log, 1)[1].split(")", 1)[0] for t in inward)


def test_a_common_name_is_counted_not_read(searcher: Searcher) -> None:
    """``run`` (12 bearers) is counted and left; ``rare`` (1) is looked up and resolves."""
    sent: list[str] = []
    store = searcher.store
    store.tracer = lambda text, _seconds: sent.append(text)  # type: ignore[attr-defined]
    try:
        got = names(searcher, "app/start.py::start", arce_with())
    finally:
        store.tracer = None  # type: ignore[attr-defined]
    assert CALLERS > AMBIGUOUS and "core.rare.rare" in got
    counted = [t for t in sent if "# name: name-counts" in t]
    looked_up = [t for t in sent if "# name: defined-names" in t]
    assert any('"run"' in t for t in counted) and looked_up
    assert not any('"run"' in t for t in looked_up) and any('"rare"' in t for t in looked_up)


def test_the_counts_are_what_the_inward_query_lists(searcher: Searcher) -> None:
    folder = StrategyRegistry.default().get("arce").folder
    assert folder is not None
    store = searcher.store
    nodes = [r["e"] for r in store.select("SELECT DISTINCT ?e WHERE { GRAPH ?g { ?e a ?kind } }",
                                          {"kind": [UKO.Function, UKO.Class, UKO.Module]})]
    edges = [UKO.calls, UKO.references, UKO.inherits, UKO.defines, UKO.imports]
    counted = {(r["node"].value, r["edge"].value): int(r["n"].value) for r in store.select(
        (folder / "expand-in-counts.rq").read_text(encoding="utf-8"), {"node": nodes, "edge": edges})}
    listed = {(r["node"].value, r["edge"].value): len(set(r["entities"].value.split())) for r in store.select(
        (folder / "expand-in.rq").read_text(encoding="utf-8"),
        {"node nodeScore": [(n, Literal("1.0", datatype=XSD.double)) for n in nodes],
         "edge weight": [(e, Literal("1.0", datatype=XSD.double)) for e in edges],
         "decay": Literal("1.0", datatype=XSD.double), "most": Literal("100000", datatype=XSD.integer)})}
    assert counted == listed
    log = "https://w3id.org/acms/id/proj/code/core/log.py#core.log.log"
    assert counted[(log, UKO.calls.value)] == CALLERS
    assert NamedNode(log) in nodes
