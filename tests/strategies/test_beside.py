"""The walk's beside edge over a small project the tests index: with a focus, the other members of its
class and its file's top-level definitions come as one-line references, its class first and nearest
first, though the focus's code names none of them; the budget holds; off (``beside = 0``) they do not
come; without a focus the best seed stands in for it. Beside a focus whose body leaves the task's seeds
no room as bodies, the best seeds are walked from all the same (``next_seeds``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from acms.assembly.protocol import parse_request
from acms.errors import ConfigError
from acms.retrieval.search import Searcher
from acms.service.assembly import AssemblyResult, assemble
from acms.strategies.expand import ExpandOptions
from acms.strategies.registry import StrategyRegistry
from acms.tokens import count
from .walks import arce_with, indexed_searcher

# Cart.add names nothing else in its file; a change to it (reserve the stock of the line it adds) will
# likely touch or use Cart.total, Cart.clear and round_price, which only their place beside it points at.
CART = '''"""A shopping cart."""


def round_price(value):
    """Round a price to cents."""
    return round(value, 2)


class Cart:
    """Lines of a cart."""

    def __init__(self):
        self.lines = []

    def add(self, sku, qty):
        """Add a line to the cart."""
        self.lines = self.lines + [(sku, qty)]

    def total(self, prices):
        """The cart's total at these prices."""
        return sum(prices[sku] * qty for sku, qty in self.lines)

    def clear(self):
        """Empty the cart."""
        self.lines = []


def format_receipt(cart, prices):
    """The receipt text for a cart."""
    return "\\n".join(f"{sku} x{qty}" for sku, qty in cart.lines)
'''
# The task's words are the warehouse's: its functions are the seeds and fill the bodies' share, so what
# comes of the cart file comes by the walk.
STOCK = '''"""Stock levels in the warehouse."""

''' + "".join(f'''

def reserve_stock_{i}(warehouse, sku, quantity):
    """Hold a quantity of stock in warehouse {i} for an order.

    The warehouse keeps reserved stock apart from free stock; a reservation that exceeds the free
    quantity of the warehouse holds what there is and reports the rest as a shortfall of stock.
    """
    free = warehouse.free_stock(sku)
    held = min(free, quantity)
    warehouse.hold_stock(sku, held)
    return quantity - held
''' for i in range(8)) + '''

def audit_line(log, line):
    """Append a line to the audit log."""
    log.append(line)

'''
TASK = "Reserving stock should hold the quantity in the warehouse"
FOCUS = "shop/cart.py::Cart.add"


def shop(tmp_path_factory: pytest.TempPathFactory, stock: str) -> Iterator[Searcher]:
    """The cart and the warehouse (``stock``), indexed."""
    root = tmp_path_factory.mktemp("beside") / "proj"
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "cart.py").write_text(CART)
    (root / "shop" / "stock.py").write_text(stock)
    yield from indexed_searcher(root)


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Searcher]:
    yield from shop(tmp_path_factory, STOCK)


def run(searcher: Searcher, registry: StrategyRegistry, budget: int = 1500, focus: bool = True) -> AssemblyResult:
    data: dict[str, object] = {"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "intent": TASK,
                               "request_id": "r1", "strategy": "arce",
                               "budgets": {"tokens_max": budget, "time_ms": 10000}}
    if focus:
        data["focus"] = [FOCUS]
    return assemble(parse_request(data), searcher, registry)


def beside(result: AssemblyResult) -> list[str]:
    return [p.candidate.name for p in result.assembled.items if p.candidate.reason.startswith("beside")]


def test_the_focus_brings_its_class_then_its_file(searcher: Searcher) -> None:
    result = run(searcher, StrategyRegistry.default())
    items = [p.candidate for p in result.assembled.items]
    assert items[0].name == "shop.cart.Cart.add" and items[0].lod == "micro"
    got = beside(result)
    # the class's members first (nearest first), then the file's top level (nearest first)
    assert got == ["shop.cart.Cart.__init__", "shop.cart.Cart.total", "shop.cart.Cart.clear",
                   "shop.cart.round_price", "shop.cart.format_receipt"]
    total = next(c for c in items if c.name == "shop.cart.Cart.total")
    assert total.lod == "macro" and total.text.strip() == "def total(self, prices):"  # a one-line reference
    assert (total.start_line, total.end_line) == (19, 20)  # its declaration and doc string lines
    assert count(result.assembled.rendered) <= 1500


def test_beside_max_and_the_budget_cut_the_list(searcher: Searcher) -> None:
    assert beside(run(searcher, arce_with(beside_max=2))) == ["shop.cart.Cart.__init__", "shop.cart.Cart.total"]
    full = beside(run(searcher, StrategyRegistry.default()))
    for budget in (300, 450):
        small = run(searcher, StrategyRegistry.default(), budget=budget)
        assert count(small.assembled.rendered) <= budget
        got = beside(small)
        assert set(got) < set(full), budget  # the budget cuts the list


def test_off_the_edge_brings_nothing(searcher: Searcher) -> None:
    assert beside(run(searcher, arce_with(beside=0.0))) == []
    plain = run(searcher, arce_with(beside_seeds=0), focus=False)
    assert beside(plain) == []
    assert plain.assembled.rendered == run(searcher, arce_with(beside=0.0), focus=False).assembled.rendered


def test_without_a_focus_the_best_seed_stands_in(searcher: Searcher) -> None:
    """A task alone: the first stage's best seed is a warehouse function, and what is beside it comes."""
    result = run(searcher, StrategyRegistry.default(), focus=False)
    items = [p.candidate for p in result.assembled.items]
    best = items[0]
    assert best.lod == "micro" and best.path == "shop/stock.py"
    got = {c.name: c.reason for c in items if c.reason.startswith("beside")}
    assert got.get("shop.stock.audit_line", "").startswith(f"beside {best.name} in its file")


@pytest.fixture(scope="module")
def with_helper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Searcher]:
    """Each of the warehouse's functions ends in a helper of its own."""
    parts = STOCK.split("return quantity - held")
    stock = "".join(f"{part}return shortfall_{i}(quantity, held)" for i, part in enumerate(parts[:-1])) + parts[-1]
    yield from shop(tmp_path_factory, stock + "".join(f"\n\ndef shortfall_{i}(wanted, got):\n    return wanted - got\n"
                                                      for i in range(len(parts) - 1)))


def called(result: AssemblyResult) -> set[str]:
    """The helpers the walk reached through a call, and the seed each came from."""
    return {p.candidate.reason.split(" (hop")[0] for p in result.assembled.items if " calls it" in p.candidate.reason}


def test_the_next_seeds_are_walked_from(with_helper: Searcher) -> None:
    """The bodies' share (5 %) holds the focus, or the best seed alone: the next ``next_seeds`` seeds, listed
    as one-line references, are walked from all the same, and their helpers come; without them only the
    best body's (or none, beside a focus)."""
    crowded = run(with_helper, arce_with(bodies=0.05))
    bodies = [p.candidate.name for p in crowded.assembled.items if p.candidate.lod == "micro"]
    assert bodies[0] == "shop.cart.Cart.add"  # the focus first, alone in its share
    assert len(called(crowded)) == 3 and called(run(with_helper, arce_with(bodies=0.05, next_seeds=0))) == set()
    alone = run(with_helper, arce_with(bodies=0.05, next_seeds=2), focus=False)
    best = alone.assembled.items[0].candidate
    assert best.lod == "micro" and best.name.startswith("shop.stock.reserve_stock_")
    reached = called(alone)
    assert len(reached) == 3 and f"{best.name} calls it" in reached  # the best body's, then the next two's
    assert called(run(with_helper, arce_with(bodies=0.05, next_seeds=0), focus=False)) == {f"{best.name} calls it"}


def test_beside_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="lie in \\[0, 1\\]"):
        ExpandOptions.parse("mine", {"beside": 1.5})
    with pytest.raises(ConfigError, match="beside_max >= 0"):
        ExpandOptions.parse("mine", {"beside_max": -1})
    with pytest.raises(ConfigError, match="beside_seeds >= 0"):
        ExpandOptions.parse("mine", {"beside_seeds": -1})
    with pytest.raises(ConfigError, match="next_seeds >= 0"):
        ExpandOptions.parse("mine", {"next_seeds": -1})





