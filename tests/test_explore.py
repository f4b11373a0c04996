"""The saved exploration queries answer concretely on the sample project."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import Literal

from acms.sparql import catalog
from acms.store.oxigraph import OxigraphStore
from acms.temporal import tiers

PARAMS = {"name": "parse_header"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, _indexed_sample_template: Path):
    from .conftest import copy_of_indexed

    root = copy_of_indexed(_indexed_sample_template, tmp_path_factory.mktemp("explore"))
    s = OxigraphStore(root / ".acms" / "graph")
    # Split the project across tiers (pkg.util hot, the rest warm), so every answer below also proves
    # that the queries join entities that sit in different tier graphs.
    rows = s.select("SELECT ?e WHERE { GRAPH ?g { ?e uko:inFile ?f . ?f uko:path 'pkg/util.py' } }")
    util = [r["e"].value for r in rows if "/frag/" not in r["e"].value]
    tiers.record_use(s, util)
    tiers.rebalance(s, tiers.Policy(hot_commits=0, hot_days=0, hot_use_days=1))
    assert tiers.counts(s)["hot"]["entities"] == len(util) >= 3
    yield s
    s.close()


def run(store: OxigraphStore, query: str, **params: str) -> list[dict[str, str]]:
    spec = catalog.saved(query)
    bindings = {p: Literal(params.get(p, PARAMS.get(p, ""))) for p, _ in spec.params}
    return [{k: v.value for k, v in r.items()} for r in store.select(spec.text, bindings or None)]


def test_catalogue_is_large_and_documented() -> None:
    saved = [s for s in catalog.all_queries().values() if s.folder == "explore"]
    assert len(saved) >= 12
    assert all(s.summary and s.returns for s in saved)


def test_every_saved_query_runs(store: OxigraphStore) -> None:
    for spec in catalog.all_queries().values():
        if spec.folder == "explore":
            run(store, spec.name)


def test_concrete_answers(store: OxigraphStore) -> None:
    assert [r["callee"] for r in run(store, "callees", name="parse_header")] == ["pkg.util.normalize"]
    assert [r["subclass"] for r in run(store, "subclasses", name="Base")] == ["pkg.mod.Parser"]
    dead = {r["symbol"] for r in run(store, "dead-functions")}
    assert {"pkg.mod.Base.describe", "pkg.mod.make_parser"} <= dead
    assert "pkg.mod.Parser.parse_header" not in dead and "pkg.util.normalize" not in dead
    counts = {r["class"]: int(r["methods"]) for r in run(store, "classes-by-method-count")}
    assert counts == {"pkg.mod.Parser": 3, "pkg.mod.Base": 1}
    assert run(store, "most-depended-on-modules")[0] == {"module": "pkg.util", "importers": "1"}
    assert [r["section"] for r in run(store, "doc-sections-mentioning", name="parse_header")] == ["Usage"]
    assert run(store, "import-cycles") == []
    assert run(store, "largest-files")[0]["path"] == "pkg/mod.py"
    fan = {r["symbol"]: (int(r["fan_in"]), int(r["fan_out"])) for r in run(store, "fan-in-fan-out")}
    assert fan["pkg.util.normalize"][0] == 1 and fan["pkg.mod.Parser.parse_all"][1] >= 2
