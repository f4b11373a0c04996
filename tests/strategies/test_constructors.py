"""The walk's constructors step over a small project the tests index: code that calls a class brings
the class and its constructor, whose parameters are what the call must pass, in Python, JavaScript
(``constructor``), Ruby (``initialize``) and Java (a method named as its class); none with the step off."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from acms.assembly.protocol import parse_request
from acms.retrieval.search import Searcher
from acms.service.assembly import assemble
from acms.strategies.registry import StrategyRegistry
from .walks import arce_with, searcher_of

FILES = {
    "app/__init__.py": "",
    "app/builder.py": ("class Builder:\n    \"\"\"Builds a widget.\"\"\"\n\n    def __init__(self, size, colour='red'):\n"
                       "        self.size = size\n        self.colour = colour\n\n    def build(self):\n"
                       "        return (self.size, self.colour)\n"),
    "app/use.py": "from app.builder import Builder\n\n\ndef make():\n    return Builder(3).build()\n",
    "web/cart.js": ("export class Cart {\n  constructor(owner, limit) {\n    this.owner = owner;\n"
                    "    this.limit = limit;\n  }\n}\n"),
    "web/shop.js": "import { Cart } from './cart.js';\n\nexport function open(owner) {\n  return new Cart(owner, 5);\n}\n",
    "rb/point.rb": "class Point\n  def initialize(x, y)\n    @x = x\n    @y = y\n  end\nend\n",
    "rb/plot.rb": "def plot(x, y)\n  Point.new(x, y)\nend\n",
    "java/Account.java": ("public class Account {\n    private int balance;\n    public Account(int balance) {\n"
                          "        this.balance = balance;\n    }\n}\n"),
    "java/Bank.java": "public class Bank {\n    public Account open() {\n        return new Account(10);\n    }\n}\n",
}


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Searcher]:
    yield from searcher_of(FILES, tmp_path_factory.mktemp("constructors") / "proj")


def placed(searcher: Searcher, focus: str, registry: StrategyRegistry | None = None) -> dict[str, tuple[str, str]]:
    data = {"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f61", "intent": "please refactor",
            "request_id": "r1", "strategy": "arce", "focus": [focus], "budgets": {"tokens_max": 2000, "time_ms": 10000}}
    result = assemble(parse_request(data), searcher, registry or StrategyRegistry.default())
    return {p.candidate.name: (p.candidate.reason, p.candidate.lod) for p in result.assembled.items}


@pytest.mark.parametrize(("focus", "ctor", "cls"), [
    ("app/use.py::make", "app.builder.Builder.__init__", "app.builder.Builder"),
    ("web/shop.js::open", "web.cart.Cart.constructor", "web.cart.Cart"),
    ("java/Bank.java::Bank.open", "java.Account.Account.Account", "java.Account.Account"),
])
def test_a_called_class_brings_its_constructor_as_a_signature(searcher: Searcher, focus: str, ctor: str,
                                                              cls: str) -> None:
    got = placed(searcher, focus)
    assert cls in got, got
    why, lod = got.get(ctor, ("", ""))
    assert why.startswith(f"constructs {cls}") and "(hop 1)" in why and lod == "macro", got
    off = placed(searcher, focus, arce_with(constructors=0.0))
    assert not any(why.startswith("constructs") for why, _ in off.values())


def test_a_reached_class_brings_the_constructor_its_language_names(searcher: Searcher) -> None:
    """Ruby's ``Point.new`` is no static call edge; the class comes by the name the code uses, and its
    ``initialize`` with it."""
    got = placed(searcher, "rb/plot.rb::plot")
    assert got.get("rb.point.Point.initialize", ("",))[0].startswith("constructs rb.point.Point"), got
