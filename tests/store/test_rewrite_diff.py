"""``rewrite_files`` as a diff: each old quad the batch holds stays (counted once, however often the batch
repeats it), each one it lacks goes, and only a fragment's vector survives a batch that lacks it, when the
batch writes that fragment again in the same graph: a vector on anything else, or on a fragment written
into another graph or not at all, goes with the rest."""

from __future__ import annotations

from pathlib import Path

from pyoxigraph import Literal, NamedNode, Quad

from acms.store.oxigraph import OxigraphStore
from acms.vocab import RDF, TIER_HOT, TIER_WARM, UKO

EX = "https://example.org/"
F, FN, FRAG, MOVED, COOLED, GONE = (NamedNode(EX + n) for n in ("file", "fn", "frag", "moved", "cooled", "gone"))
W, H = TIER_WARM, TIER_HOT


def _vector(node: NamedNode, graph: NamedNode) -> Quad:
    return Quad(node, UKO.vector, Literal("AAAAAA=="), graph)


OLD = [
    Quad(F, RDF.type, UKO.File, W), Quad(F, UKO.lineCount, Literal("3"), W),
    Quad(FN, RDF.type, UKO.Function, W), Quad(FN, UKO.inFile, F, W), _vector(FN, W),  # a vector not on a fragment
    Quad(FN, UKO.hasFragment, FRAG, W),
    Quad(FRAG, RDF.type, UKO.Fragment, W), Quad(FRAG, UKO.inFile, F, W), _vector(FRAG, W),
    Quad(MOVED, RDF.type, UKO.Fragment, W), Quad(MOVED, UKO.inFile, F, W), _vector(MOVED, W),
    Quad(COOLED, RDF.type, UKO.Fragment, H), Quad(COOLED, UKO.inFile, F, H), _vector(COOLED, H),
    Quad(GONE, RDF.type, UKO.Fragment, W), Quad(GONE, UKO.inFile, F, W), _vector(GONE, W),
]
NEW = [
    Quad(F, RDF.type, UKO.File, W), Quad(F, UKO.lineCount, Literal("4"), W),
    Quad(FN, RDF.type, UKO.Function, W), Quad(FN, UKO.inFile, F, W), Quad(FN, UKO.hasFragment, FRAG, W),
    Quad(FRAG, RDF.type, UKO.Fragment, W), Quad(FRAG, UKO.inFile, F, W),
    Quad(MOVED, RDF.type, UKO.Fragment, H), Quad(MOVED, UKO.inFile, F, H),  # written again, into hot
    Quad(COOLED, RDF.type, UKO.Fragment, W), Quad(COOLED, UKO.inFile, F, W),  # and into warm
]


def test_the_diff_keeps_what_the_batch_holds_and_only_a_rewritten_fragments_vector(tmp_path: Path) -> None:
    store = OxigraphStore(tmp_path / "graph")
    try:
        store.load(OLD)
        with store.atomic():
            done = store.rewrite_files([], [F], [], NEW + NEW[:3], old=OLD)  # a batch that repeats quads
        after = set(store.quads())
    finally:
        store.close()
    assert after == {*NEW, _vector(FRAG, W)}
    kept = len({*OLD} & {*NEW})
    assert done is not None
    assert (done.removed, done.inserted, done.kept) == (len(OLD) - kept - 1, len(NEW) - kept, kept)


def test_the_diff_reads_the_files_quads_when_the_run_did_not(tmp_path: Path) -> None:
    store = OxigraphStore(tmp_path / "graph")
    try:
        store.load(OLD)
        with store.atomic():
            done = store.rewrite_files([], [F], [], NEW)
        after = set(store.quads())
    finally:
        store.close()
    assert after == {*NEW, _vector(FRAG, W)}
    assert done is not None and done.kept == len({*OLD} & {*NEW})
