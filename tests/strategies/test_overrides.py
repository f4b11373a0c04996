"""The walk's overrides edge over a small project the tests index: from a method, its namesake in the
base class (``overrides-up.rq``) and in each subclass (``overrides-down.rq``, which builds the
subclass member's IRI from the rule every member's IRI follows, or, for a class with many subclasses
and a rare method name, ``overrides-down-by-name.rq`` from the name's bearers: the same answer), in
Python, JavaScript and Rust (a method implemented for a trait is named by the trait); a task whose
words match no code leaves the walk alone to bring them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from acms.assembly.protocol import parse_request
from acms.retrieval.search import Searcher
from acms.service.assembly import assemble
from acms.strategies.registry import StrategyRegistry
from acms.vocab import UKO
from .walks import arce_with, searcher_of

FILES = {
    "shop/__init__.py": "",
    "shop/base.py": 'class Store:\n    """A store."""\n\n    def total(self, lines):\n        return sum(lines)\n',
    "shop/online.py": ("from shop.base import Store\n\n\nclass OnlineStore(Store):\n"
                       "    def total(self, lines):\n        return sum(lines) + 5\n"),
    "shop/market.py": ("from shop.base import Store\n\n\nclass Market(Store):\n"
                       "    def total(self, lines):\n        return sum(lines) * 2\n"),
    "web/base.js": "export class Base {\n  count(lines) {\n    return lines.length;\n  }\n}\n",
    "web/sub.js": ("import { Base } from './base.js';\n\nexport class Sub extends Base {\n"
                   "  count(lines) {\n    return lines.length + 1;\n  }\n}\n"),
    # Store has 11 subclasses, more than FEW_SUBCLASSES, and "total" 3 bearers: looked down by name
    "shop/stalls.py": "from shop.base import Store\n\n\n" + "".join(
        f"class Stall{i}(Store):\n    def open(self):\n        return {i}\n\n\n" for i in range(9)),
    "rs/lib.rs": ("pub struct Point { x: f64, y: f64 }\n\npub trait Norm {\n    fn norm(&self) -> f64;\n}\n\n"
                  "impl Norm for Point {\n    fn norm(&self) -> f64 {\n        self.x + self.y\n    }\n}\n"),
}


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Searcher]:
    yield from searcher_of(FILES, tmp_path_factory.mktemp("overrides") / "proj")


def reasons(searcher: Searcher, focus: str, registry: StrategyRegistry | None = None) -> dict[str, str]:
    data = {"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "intent": "please refactor",
            "request_id": "r1", "strategy": "arce", "focus": [focus], "budgets": {"tokens_max": 2000, "time_ms": 10000}}
    result = assemble(parse_request(data), searcher, registry or StrategyRegistry.default())
    return {p.candidate.name: p.candidate.reason for p in result.assembled.items}


@pytest.mark.parametrize(("focus", "want"), [
    ("shop/base.py::Store.total", {"shop.online.OnlineStore.total": "overridden from shop.base.Store.total",
                                   "shop.market.Market.total": "overridden from shop.base.Store.total"}),
    ("shop/online.py::OnlineStore.total", {"shop.base.Store.total": "overrides shop.online.OnlineStore.total"}),
    ("web/base.js::Base.count", {"web.sub.Sub.count": "overridden from web.base.Base.count"}),
    ("web/sub.js::Sub.count", {"web.base.Base.count": "overrides web.sub.Sub.count"}),
    ("rs.lib.Norm.norm", {"rs.lib.Point.Norm.norm": "overridden from rs.lib.Norm.norm"}),
    ("rs.lib.Point.Norm.norm", {"rs.lib.Norm.norm": "overrides rs.lib.Point.Norm.norm"}),
])
def test_a_method_brings_its_namesakes_up_and_down_the_hierarchy(searcher: Searcher, focus: str,
                                                                   want: dict[str, str]) -> None:
    got = reasons(searcher, focus)
    for name, why in want.items():
        assert got.get(name, "").startswith(why), (name, got)
    off = reasons(searcher, focus, arce_with(overrides=0.0))
    assert not any(r.startswith(("overrides", "overridden")) for r in off.values())


def _queries_run(searcher: Searcher, focus: str) -> set[str]:
    names: set[str] = set()

    def trace(text: str, _seconds: float) -> None:
        names.update(line[len("# name: "):] for line in text.splitlines() if line.startswith("# name: "))

    store = searcher.store
    store.tracer = trace  # type: ignore[attr-defined]
    try:
        reasons(searcher, focus)
    finally:
        store.tracer = None  # type: ignore[attr-defined]
    return names


def test_a_widely_inherited_class_is_looked_down_from_the_method_s_name(searcher: Searcher) -> None:
    """Store (11 subclasses, more than ``FEW_SUBCLASSES``) with "total" (3 bearers) goes by name; Base (1
    subclass) by its class."""
    wide = _queries_run(searcher, "shop/base.py::Store.total")
    assert "overrides-down-by-name" in wide and "overrides-down" not in wide
    narrow = _queries_run(searcher, "web/base.js::Base.count")
    assert "overrides-down" in narrow and "overrides-down-by-name" not in narrow


def test_both_ways_down_find_the_same_namesakes(searcher: Searcher) -> None:
    """For every method of the project (Python, JavaScript, a Rust trait's and its implementation's), the
    query from the name answers what the query from the class does."""
    arce = StrategyRegistry.default().get("arce")
    folder = arce.folder
    assert folder is not None
    text = {name: (folder / f"{name}.rq").read_text(encoding="utf-8")
            for name in ("method-classes", "overrides-down", "overrides-down-by-name")}
    store = searcher.store
    methods = [r["m"] for r in store.select("SELECT DISTINCT ?m WHERE { GRAPH ?g { ?m a ?kind } }",
                                            {"kind": [UKO.Method]})]
    owners = store.select(text["method-classes"], {"node": methods})
    rows = [(r["node"], r["cls"], r["name"], r["base"]) for r in owners]
    assert len(rows) >= 14  # Store/OnlineStore/Market.total, 9 Stall.open, Base/Sub.count, the trait's norm
    answers = {}
    for way in ("overrides-down", "overrides-down-by-name"):
        answers[way] = sorted((r["node"].value, r["entity"].value)
                              for r in store.select(text[way], {"node cls name base": rows}))
    assert answers["overrides-down"] == answers["overrides-down-by-name"]
    assert ("https://w3id.org/acms/id/proj/code/rs/lib.rs#rs.lib.Norm.norm",
            "https://w3id.org/acms/id/proj/code/rs/lib.rs#rs.lib.Point.Norm.norm") in answers["overrides-down"]
