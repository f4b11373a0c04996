"""``rewrite_files`` keeps the vector of a fragment the batch writes again under its IRI in the same graph
(its IRI holds its text's hash: the same text, so the same vector of the index's one model), and lets go
of the vectors of fragments the batch does not write again or writes into another tier."""

from __future__ import annotations

from pathlib import Path

from pyoxigraph import Literal, NamedNode, Quad

from acms.store.oxigraph import OxigraphStore
from acms.vocab import RDF, TIER_HOT, TIER_WARM, UKO

EX = "https://example.org/"
F, STAYS, GOES, MOVES = (NamedNode(EX + n) for n in ("file", "frag/stays", "frag/goes", "frag/moves"))


def _fragment(frag: NamedNode, graph: NamedNode, text: str) -> list[Quad]:
    return [Quad(frag, RDF.type, UKO.Fragment, graph), Quad(frag, UKO.inFile, F, graph),
            Quad(frag, UKO.text, Literal(text), graph)]


def _vector(frag: NamedNode, graph: NamedNode) -> Quad:
    return Quad(frag, UKO.vector, Literal("AAAAAA=="), graph)


OLD = [Quad(F, RDF.type, UKO.File, TIER_WARM),
       *_fragment(STAYS, TIER_WARM, "def a(): pass"), _vector(STAYS, TIER_WARM),
       *_fragment(GOES, TIER_WARM, "def b(): pass"), _vector(GOES, TIER_WARM),
       *_fragment(MOVES, TIER_HOT, "def c(): pass"), _vector(MOVES, TIER_HOT)]
NEW = [Quad(F, RDF.type, UKO.File, TIER_WARM), *_fragment(STAYS, TIER_WARM, "def a(): pass"),
       *_fragment(MOVES, TIER_WARM, "def c(): pass")]  # GOES is no more; MOVES is written warm


def test_a_fragment_written_again_keeps_its_vector_and_the_others_lose_theirs(tmp_path: Path) -> None:
    store = OxigraphStore(tmp_path / "graph")
    try:
        store.load(OLD)
        with store.atomic():
            done = store.rewrite_files([], [F], [], NEW, old=OLD)
        after = set(store.quads())
    finally:
        store.close()
    assert after == {*NEW, _vector(STAYS, TIER_WARM)}
    assert done is not None and done.removed == len(OLD) - len({*OLD} & {*NEW}) - 1  # all but the kept vector
