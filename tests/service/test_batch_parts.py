"""The one batch gathers its fragment parts once: ``stay_hot`` finds the hot entities' fragments among the
parts' owners as it found them by reading every quad, and ``archive`` compares the old texts with the parts
as it did with the quads. And ``_held`` takes the old fragment parts in its one pass over a file's quads as
``fragment_parts`` takes them from the quads outside the cold tier."""

from __future__ import annotations

from pyoxigraph import BlankNode, Literal, NamedNode, Quad

from acms.service.indexing.old_quads import _held, stay_hot
from acms.store.oxigraph import in_memory
from acms.temporal.versions import archive, fragment_parts
from acms.vocab import RDF, TIER_COLD, TIER_HOT, TIER_WARM, UKO

EX = "https://example.org/"
F, E, SHARED, OTHER = (NamedNode(EX + n) for n in ("file", "e", "shared", "other"))
FRAG_E, FRAG_BOTH, FRAG_OTHER = (NamedNode(EX + n) for n in ("frag/e", "frag/both", "frag/other"))
W = TIER_WARM


def _batch() -> list[Quad]:
    return [
        Quad(F, RDF.type, UKO.File, W), Quad(F, UKO.hasFragment, FRAG_OTHER, W),
        Quad(E, RDF.type, UKO.Function, W), Quad(E, UKO.inFile, F, W), Quad(E, UKO.hasFragment, FRAG_E, W),
        Quad(E, UKO.hasFragment, FRAG_BOTH, W), Quad(E, UKO.calls, OTHER, W),
        Quad(OTHER, RDF.type, UKO.Function, W), Quad(OTHER, UKO.inFile, F, W), Quad(OTHER, UKO.hasFragment, FRAG_BOTH, W),
        *(q for frag, text in ((FRAG_E, "def e(): pass"), (FRAG_BOTH, "both"), (FRAG_OTHER, "module"))
          for q in (Quad(frag, RDF.type, UKO.Fragment, W), Quad(frag, UKO.lod, Literal("micro"), W),
                    Quad(frag, UKO.text, Literal(text), W), Quad(frag, UKO.inFile, F, W))),
    ]


def test_stay_hot_with_the_parts_owners_moves_what_the_scan_moves() -> None:
    quads = _batch()
    owners = fragment_parts(quads).owners
    for hot in ({E}, {OTHER}, {F}, {E, OTHER}, {NamedNode(EX + "absent")}):
        moved = stay_hot(quads, hot, owners)
        assert moved == stay_hot(quads, hot), hot
    assert {q.subject for q in stay_hot(quads, {E}, owners) if q.graph_name == TIER_HOT} == {E, FRAG_E, FRAG_BOTH}
    # a hot blank node (never emitted, but the scan would move its fragments): the parts are not used
    blank = BlankNode()
    odd = [*quads, Quad(blank, UKO.hasFragment, FRAG_OTHER, W)]
    assert stay_hot(odd, {blank}, fragment_parts(odd).owners) == stay_hot(odd, {blank})  # type: ignore[arg-type]


def test_archive_compares_the_same_with_the_batchs_parts_as_with_its_quads() -> None:
    store = in_memory()
    old = _batch()
    store.load(old)
    new = [q for q in old if q.object != Literal("def e(): pass")] + [Quad(FRAG_E, UKO.text, Literal("def e(): 1"), W)]
    by_quads = archive(store, [F], new, "S", "2026-01-01T00:00:00Z", old)
    by_parts = archive(store, [F], fragment_parts(new), "S", "2026-01-01T00:00:00Z", old)
    assert by_parts.entities == by_quads.entities == [E]
    assert set(by_parts.quads) == set(by_quads.quads) and by_parts.updates == by_quads.updates


def test_held_takes_the_fragment_parts_outside_the_cold_tier() -> None:
    quads = _batch() + [Quad(FRAG_E, UKO.text, Literal("an old text"), TIER_COLD),
                        Quad(E, UKO.hasFragment, FRAG_OTHER, TIER_COLD), Quad(FRAG_OTHER, UKO.lod, Literal("macro"), TIER_COLD),
                        Quad(E, UKO.qualifiedName, Literal("m.e"), W), Quad(E, UKO.qualifiedName, Literal("m.cold"), TIER_COLD)]
    entities, names, hot, parts = _held(F, quads)
    expected = fragment_parts(q for q in quads if q.graph_name != TIER_COLD)
    assert (parts.lod, parts.text, parts.owners) == (expected.lod, expected.text, expected.owners)
    assert entities == {E, OTHER} and names == {"m.e"} and hot == set()
