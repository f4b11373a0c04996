"""The walk's co-change edge over a real git repository the tests build and index with ``--history``.

``app/billing.py`` (A) and ``app/ledger.py`` (B) always change together, ``app/weather.py`` (C) never
does with A except in two formatting runs that touch forty other files as well. A task about A must
bring B's touched definitions as signatures, never C's; without the commit-size cut the formatting
runs tie C to A; without history the walk's output is the same bytes as with the edge turned off."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from acms import Index
from acms.assembly.protocol import parse_request
from acms.cli.main import cli
from acms.config import Settings
from acms.errors import ConfigError
from acms.retrieval.search import Searcher
from acms.service.assembly import AssemblyResult, assemble
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore
from acms.strategies.expand import ExpandOptions
from acms.strategies.registry import StrategyRegistry
from acms.tokens import count

from ..store.conftest import oxigraph_server  # noqa: F401  (a real Oxigraph server for the session)
from ..temporal.gitrepo import commit, git
from .walks import arce_with

BILLING = '''"""Invoices."""


def compute_invoice_total(items):
    """Sum the invoice lines."""
    return sum(price * qty for price, qty in items)


def apply_discount(total, rate):
    """Take the discount rate off an invoice total."""
    return total * (1 - rate)
'''
LEDGER = '''"""Bookkeeping."""


def record_entry(book, amount):
    """Write one amount into the book."""
    book.append(amount)
    return book


def post_journal(book):
    """Close the book for the period."""
    return list(book)
'''
WEATHER = '''"""Forecasts."""


def forecast_rain(clouds):
    """Chance of rain from cloud cover."""
    return min(1.0, clouds / 8)
'''
FILLERS = 40
TASK = "compute the invoice total and apply the discount rate"


def _filler(i: int, stamp: str) -> str:
    return f'"""Generated table {i}."""\n\n\ndef table_{i}():\n    return {i}  {stamp}\n'


def _edit(root: Path, path: str, old: str, new: str) -> None:
    f = root / path
    text = f.read_text()
    assert old in text, (path, old)
    f.write_text(text.replace(old, new, 1))


def _build(root: Path) -> None:
    """A and B change together three times, C twice alone, and A and C in two formatting runs that
    touch twenty fillers each (22 files: over the default cut of 20)."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for path, text in (("app/billing.py", BILLING), ("app/ledger.py", LEDGER), ("app/weather.py", WEATHER)):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / "gen").mkdir()
    for i in range(FILLERS):
        (root / "gen" / f"table_{i}.py").write_text(_filler(i, ""))
    day = iter(range(1, 20))

    def done(message: str) -> None:
        commit(root, message, "Ada", f"2025-02-{next(day):02d}T10:00:00+00:00")

    done("Add billing, ledger, weather and tables")
    _edit(root, "app/billing.py", "price * qty", "qty * price")
    _edit(root, "app/ledger.py", "book.append(amount)", "book.append(round(amount, 2))")
    done("Round ledger amounts with invoice totals")
    _edit(root, "app/billing.py", "(1 - rate)", "(1.0 - rate)")
    _edit(root, "app/ledger.py", "book.append(round(amount, 2))", "book.append(round(amount, 4))")
    done("Discounts as floats, four digits in the ledger")
    _edit(root, "app/billing.py", "for price, qty in items)", "for price, qty in items if qty)")
    _edit(root, "app/ledger.py", "return list(book)", "return tuple(book)")
    done("Skip empty invoice lines; journals are tuples")
    for n in range(2):
        _edit(root, "app/weather.py", f"clouds / {8 + n}", f"clouds / {9 + n}")
        done(f"Rain model tweak {n}")
    for run, tables in enumerate((range(20), range(20, 40))):
        _edit(root, "app/billing.py", "Sum the invoice lines.", f"Sum the invoice lines{'.' * (run + 2)}")
        _edit(root, "app/weather.py", f"Chance{' ' * (run + 1)}of", f"Chance{' ' * (run + 2)}of")
        for i in tables:
            (root / "gen" / f"table_{i}.py").write_text(_filler(i, f"# format {run}"))
        done(f"Format run {run}")


def _index(root: Path, *extra: str) -> None:
    result = CliRunner().invoke(cli, ["index", str(root), *extra], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The repository indexed with its history, and a copy of its files indexed without."""
    base = tmp_path_factory.mktemp("cochange")
    with_history, plain = base / "repo", base / "plain"
    _build(with_history)
    shutil.copytree(with_history, plain, ignore=shutil.ignore_patterns(".git"))
    _index(with_history, "--history", "50")
    _index(plain)
    return with_history, plain


def _searcher(root: Path) -> Iterator[Searcher]:
    layout = IndexLayout(root / ".acms")
    store = OxigraphStore.open_existing(layout.graph)
    yield Searcher(store, layout, Settings())
    store.close()


@pytest.fixture(scope="module")
def history(repos: tuple[Path, Path]) -> Iterator[Searcher]:
    yield from _searcher(repos[0])


@pytest.fixture(scope="module")
def no_history(repos: tuple[Path, Path]) -> Iterator[Searcher]:
    yield from _searcher(repos[1])


def run(searcher: Searcher, registry: StrategyRegistry, budget: int = 1500) -> AssemblyResult:
    request = parse_request({"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "intent": TASK,
                             "request_id": "r1", "strategy": "arce",
                             "budgets": {"tokens_max": budget, "time_ms": 10000}})
    return assemble(request, searcher, registry)


def names(result: AssemblyResult) -> dict[str, str]:
    return {p.candidate.name: p.candidate.reason for p in result.assembled.items}


def test_a_seed_brings_the_files_that_change_with_it(history: Searcher) -> None:
    result = run(history, StrategyRegistry.default())
    got = names(result)
    assert next(iter(got)).startswith("billing.")  # a seed, first
    ledger = {n: why for n, why in got.items() if n.startswith("ledger.")}
    assert set(ledger) == {"ledger.record_entry", "ledger.post_journal"}
    assert all("changes with app/billing.py" in why for why in ledger.values()), ledger
    assert not any(n.startswith(("weather.", "table_")) for n in got), got
    shown = [p for p in result.assembled.items if p.candidate.name.startswith("ledger.")]
    # a signature, or its body where everything planned left the budget room for it
    assert all("#signature" in p.candidate.fragment if p.candidate.lod == "macro"
               else p.candidate.lod == "micro" and "shown whole" in p.candidate.reason for p in shown)
    # without the edge the ledger is not there: the words of the task do not name it
    assert not any(n.startswith("ledger.") for n in names(run(history, arce_with(cochange=0.0))))


def test_the_definition_touched_most_scores_highest(history: Searcher) -> None:
    """record_entry changed in two of billing's three kept commits, post_journal in one."""
    items = [p.candidate for p in run(history, StrategyRegistry.default()).assembled.items]
    ledger = [c.name for c in items if c.name.startswith("ledger.")]
    assert ledger == ["ledger.record_entry", "ledger.post_journal"]


def test_the_commit_size_cut_drops_formatting_runs(history: Searcher) -> None:
    """Two 22-file formatting runs (and the first commit, 43 files) changed billing and weather; over the
    cut they count for nothing, let through they tie weather to billing (3 of billing's 6 commits)."""
    wide = names(run(history, arce_with(cochange_max_files=100)))
    assert "weather.forecast_rain" in wide and "changes with app/billing.py (3 of 6" in wide[
        "weather.forecast_rain"]
    assert "weather.forecast_rain" not in names(run(history, StrategyRegistry.default()))


def test_min_support_and_files_per_seed_are_honoured(history: Searcher) -> None:
    assert not any(n.startswith("ledger.") for n in names(run(history, arce_with(cochange_min_support=4))))
    assert not any(n.startswith("ledger.") for n in names(run(history, arce_with(cochange_files=0))))
    one = names(run(history, arce_with(cochange_definitions=1)))
    assert [n for n in one if n.startswith("ledger.")] == ["ledger.record_entry"]


@pytest.mark.parametrize("budget", [300, 600, 1500, 4000])
def test_budget_is_respected(history: Searcher, budget: int) -> None:
    result = run(history, StrategyRegistry.default(), budget)
    assert count(result.assembled.rendered) <= budget
    assert result.assembled.used_tokens <= budget


def test_without_history_the_output_is_unchanged(no_history: Searcher) -> None:
    with_edge = run(no_history, StrategyRegistry.default()).assembled.rendered
    without = run(no_history, arce_with(cochange=0.0)).assembled.rendered
    assert with_edge == without
    assert "compute_invoice_total" in with_edge and "record_entry" not in with_edge


def test_options_are_checked() -> None:
    for bad in ({"cochange": 1.5}, {"cochange_max_files": 1}, {"cochange_min_support": 0},
                {"cochange_files": -1}, {"cochange_definitions": 0}, {"cochange_files": "many"}):
        with pytest.raises(ConfigError, match="mine"):
            ExpandOptions.parse("mine", bad)
    opts = ExpandOptions.parse("mine", {"cochange": 0.2, "cochange_max_files": 30})
    assert opts.co_change.weight == 0.2 and opts.co_change.max_files == 30 and opts.co_change.min_support == 2


def test_the_edge_answers_alike_on_a_sparql_server(repos: tuple[Path, Path], history: Searcher,
                                                   oxigraph_server: str) -> None:  # noqa: F811
    """Both queries take every input as VALUES and no custom function: a remote engine gives the same
    context as the embedded store."""
    root = repos[0].parent / "remote"  # a copy of the repository (its own folder for the remote index's caches)
    shutil.copytree(repos[0], root, ignore=shutil.ignore_patterns(".acms"))
    with Index.open(root, store=oxigraph_server, project_name="cochange-remote") as remote:
        remote.index(history=50)
        got = [(p.candidate.name, p.candidate.reason) for p in remote.assemble(TASK, 1500).assembled.items]
    assert got == [(p.candidate.name, p.candidate.reason) for p in run(history, StrategyRegistry.default()).assembled.items]
    assert any(name.startswith("ledger.") and "changes with" in why for name, why in got)
