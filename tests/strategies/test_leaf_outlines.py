"""A function or method that holds nothing has no stored outline (it would say only what its entity's
signature, decorators and doc string say): the navigator's depth phase makes it from them, as ingest
would have, with the IRI a stored one would have had."""

from __future__ import annotations

from pathlib import Path

import pytest

from acms.assembly.protocol import parse_request
from acms.config import Settings
from acms.ingest.emit import sha256
from acms.ingest.fragments import leaf_outline
from acms.retrieval.search import Searcher
from acms.service.assembly import assemble
from acms.service.indexing import index_project
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore
from acms.strategies.registry import StrategyRegistry
from acms.vocab import IriMinter

CALLERS = 8


def _caller(i: int) -> str:
    body = "".join(f"    x = target(x) + {j}\n" for j in range(40))
    return (f'@register\n@cached(size={i})\ndef caller_{i}(x: int) -> int:\n'
            f'    """Caller number {i} of the target.\n\n    More text."""\n{body}    return x\n')


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("leaf") / "proj"
    root.mkdir()
    (root / "core.py").write_text(
        '"""Core."""\n\n\ndef register(f):\n    return f\n\n\ndef cached(size):\n    return lambda f: f\n\n\n'
        'def target(x: int) -> int:\n    """The target."""\n    return x + 1\n\n\n'
        'def outer():\n    def inner():\n        return 1\n    return inner\n\n\n'
        + "\n\n".join(_caller(i) for i in range(CALLERS)))
    (root / "shapes.py").write_text("class Box:\n    def area(self):\n        return 1\n")
    layout = IndexLayout(root / ".acms")
    store = OxigraphStore(layout.graph)
    index_project(root, store, Settings(embed_on_index=False), layout=layout)
    yield Searcher(store, layout, Settings())
    store.close()


def _outlined(store: OxigraphStore) -> set[str]:
    rows = store.select('SELECT DISTINCT ?qn WHERE { GRAPH ?g { ?e uko:qualifiedName ?qn ; uko:hasFragment ?f . '
                        '?f uko:lod "macro" } }')
    return {r["qn"].value for r in rows}


def test_only_what_holds_something_stores_an_outline(searcher: Searcher) -> None:
    # a module, a class (even of one method) and a function that defines one keep theirs
    assert _outlined(searcher.store) == {"core", "shapes", "shapes.Box", "core.outer"}


def test_the_depth_phase_makes_the_outlines_it_shows(searcher: Searcher) -> None:
    request = parse_request({"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "request_id": "r1",
                             "intent": "what calls target", "strategy": "breadth-depth-navigator",
                             "focus": ["core.target"], "budgets": {"tokens_max": 1500, "time_ms": 5000}})
    items = assemble(request, searcher, StrategyRegistry.default()).assembled.items
    bodies = [p.candidate for p in items if p.candidate.lod == "micro" and p.candidate.name.startswith("core.caller_")]
    outlines = [p.candidate for p in items if p.candidate.lod == "macro" and p.candidate.name.startswith("core.caller_")]
    assert bodies and len(outlines) >= 2  # the budget shows a few callers whole, the others as outlines
    minter = IriMinter("proj")
    for c in outlines:
        i = int(c.name.rsplit("_", 1)[1])
        text = f'@cached(size={i})\n@register\ndef caller_{i}(x: int) -> int:\n    """Caller number {i} of the target."""\n    ...'
        assert c.text == text == leaf_outline(f"def caller_{i}(x: int) -> int:", ["register", f"cached(size={i})"],
                                              f"Caller number {i} of the target.\n\n    More text.")
        assert c.path == "core.py" and c.end_line - c.start_line == 46  # the function's lines, decorators included
        assert c.fragment == minter.fragment(minter.code("core.py", c.name), "macro", sha256(text)).value
