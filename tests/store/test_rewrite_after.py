"""``rewrite_files``' deletes after the files' diff may take quads the diff kept; those come back. Only the
kept quads with a term the deletes bound are looked for again, or every kept quad when one has no
bindings."""

from __future__ import annotations

from pathlib import Path

from pyoxigraph import Literal, NamedNode, Quad

from acms.sparql import catalog
from acms.store.oxigraph import OxigraphStore
from acms.vocab import RDF, TIER_WARM, UKO

EX = "https://example.org/"
F, A, GONE, KEPT = (NamedNode(EX + n) for n in ("file", "a", "gone", "kept"))
OLD = [Quad(F, RDF.type, UKO.File, TIER_WARM), Quad(A, UKO.inFile, F, TIER_WARM), Quad(A, RDF.type, UKO.Function, TIER_WARM),
       Quad(A, UKO.calls, GONE, TIER_WARM), Quad(A, UKO.calls, KEPT, TIER_WARM), Quad(A, UKO.name, Literal("a"), TIER_WARM)]
# the new batch keeps every old quad but the name, and holds the edge to the entity the deletes take edges to
NEW = [q for q in OLD if q.predicate != UKO.name] + [Quad(A, UKO.name, Literal("b"), TIER_WARM)]
# other files' edges to the vanished entity: the delete takes them for good
OTHER = NamedNode(EX + "other")
ELSEWHERE = [Quad(OTHER, UKO.calls, GONE, TIER_WARM), Quad(OTHER, UKO.calls, KEPT, TIER_WARM)]


def _rewrite(tmp_path: Path, after: list[tuple[str, dict[str, object] | None]]) -> set[Quad]:
    store = OxigraphStore(tmp_path / "graph")
    try:
        store.load(OLD + ELSEWHERE)
        with store.atomic():
            done = store.rewrite_files([], [F], after, NEW)  # type: ignore[arg-type]
        assert done is not None and (done.removed, done.inserted, done.kept) == (1, 2, 5)  # the edge came back
        return set(store.quads())
    finally:
        store.close()


def test_a_kept_quad_a_bound_delete_takes_comes_back_and_the_others_stay(tmp_path: Path) -> None:
    after = [(catalog.text("ingest/delete-incoming.ru"), {"gone": [GONE]})]
    assert _rewrite(tmp_path, after) == {*NEW, ELSEWHERE[1]}


def test_after_a_delete_without_bindings_every_kept_quad_is_looked_for(tmp_path: Path) -> None:
    after: list[tuple[str, dict[str, object] | None]] = [
        (f"DELETE WHERE {{ GRAPH <{TIER_WARM.value}> {{ ?s <{UKO.calls.value}> <{GONE.value}> }} }}", None)]
    assert _rewrite(tmp_path, after) == {*NEW, ELSEWHERE[1]}
