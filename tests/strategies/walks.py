"""What the tests of the default walk's edges share: a project indexed by the CLI as a user would, read
through a Searcher, and the shipped registry with ``arce``'s expand options changed."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner

from acms.cli.main import cli
from acms.config import Settings
from acms.retrieval.search import Searcher
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore
from acms.strategies.engine import BUILTIN_ENGINES
from acms.strategies.registry import StrategyRegistry


def searcher_of(files: Mapping[str, str], root: Path) -> Iterator[Searcher]:
    """``files`` (path -> text) written under ``root``, indexed, and read through a Searcher."""
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    yield from indexed_searcher(root)


def indexed_searcher(root: Path) -> Iterator[Searcher]:
    """``acms index root``, then a Searcher over its store (closed when the generator is)."""
    result = CliRunner().invoke(cli, ["index", str(root)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    layout = IndexLayout(root / ".acms")
    store = OxigraphStore.open_existing(layout.graph)
    try:
        yield Searcher(store, layout, Settings())
    finally:
        store.close()


def arce_with(**options: object) -> StrategyRegistry:
    """A registry whose ``arce`` is the shipped one with these expand options changed."""
    arce = StrategyRegistry.default().get("arce")
    phases = tuple(replace(p, options={**p.options, **options}) if p.engine == "expand" else p for p in arce.phases)
    reg = StrategyRegistry()
    for name, engine in BUILTIN_ENGINES:
        reg.register_engine(name, engine, builtin=True)
    for desc in StrategyRegistry.default().all():  # the navigator's queries serve arce's focus lookup
        reg.register(replace(arce, phases=phases) if desc.name == "arce" else desc)
    return reg
