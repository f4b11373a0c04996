"""``check_links``: a streamed first index's cross-file edges checked against their nodes' classes, asked of
the store or, for the entities the run wrote itself, known (issue 14). Either way the same verdicts."""

from __future__ import annotations

from pathlib import Path

from pyoxigraph import Quad

from acms.api import Index
from acms.validation.batch import check_links
from acms.vocab import TIER_WARM, UKO, IriMinter

M = IriMinter("proj")


def test_known_classes_give_the_verdicts_the_store_gives(sample_project: Path) -> None:
    base, parser = M.code("pkg/mod.py", "pkg.mod.Base"), M.code("pkg/mod.py", "pkg.mod.Parser")
    make, normalize = M.code("pkg/mod.py", "pkg.mod.make_parser"), M.code("pkg/util.py", "pkg.util.normalize")
    edges = [
        Quad(parser, UKO.inherits, base, TIER_WARM),  # a class from a class: fine
        Quad(parser, UKO.inherits, make, TIER_WARM),  # a class from a function: violates
        Quad(make, UKO.calls, normalize, TIER_WARM),
    ]
    with Index.open(sample_project, project_name="proj", embed_on_index=False) as idx:
        idx.index()
        store = idx.store
        nodes = [base, parser, make, normalize]
        stored = {r["node"].value: r["type"].value for r in store.select(
            "SELECT ?node ?type WHERE { VALUES ?node { %s } GRAPH ?g { ?node a ?type } }"
            % " ".join(str(n) for n in nodes))}
        assert stored[make.value] == UKO.Function.value and len(stored) == 4
        asked = check_links(store, edges)
        assert [(v.focus, v.value) for v in asked] == [(parser.value, make.value)]
        assert check_links(store, edges, known=stored) == asked
        assert check_links(store, edges, known={parser.value: stored[parser.value]}) == asked  # the rest asked
        wrong = {**stored, make.value: UKO.Class.value, base.value: UKO.Function.value}  # known, not asked
        assert [(v.focus, v.value) for v in check_links(store, edges, known=wrong)] == [(parser.value, base.value)]
