"""The GraphStore protocol, the same tests against the embedded store and a real Oxigraph server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from acms.errors import QuerySyntaxError
from acms.store.http_client import Endpoints
from acms.store.oxigraph import OxigraphStore
from acms.store.protocol import GraphResult, GraphStore, SelectResult
from acms.store.remote import RemoteStore, RemoteTarget
from acms.vocab import GRAPH_META, GRAPH_ONTOLOGY, TIER_COLD, TIER_HOT, TIER_WARM, UKO

A, B, C = NamedNode("urn:a"), NamedNode("urn:b"), NamedNode("urn:c")
P = NamedNode("urn:p")


@pytest.fixture(params=["embedded", "remote"])
def store(request: pytest.FixtureRequest, tmp_path: Path, project_name: str) -> Iterator[GraphStore]:
    if request.param == "embedded":
        made: GraphStore = OxigraphStore(tmp_path / "graph")
    else:
        url = request.getfixturevalue("oxigraph_server")
        made = RemoteStore.open(RemoteTarget(Endpoints(url), project_name), read_only=False, create=True)
    try:
        yield made
    finally:
        made.close()


def _seed(store: GraphStore) -> None:
    store.load([Quad(A, P, Literal("one"), TIER_WARM), Quad(B, P, Literal("two"), TIER_HOT),
                Quad(C, P, Literal("old"), TIER_COLD), Quad(A, UKO.name, Literal("a"), GRAPH_META)])


def test_select_binds_terms_and_rows(store: GraphStore) -> None:
    _seed(store)
    rows = store.select("SELECT ?s ?o ?g WHERE { GRAPH ?g { ?s <urn:p> ?o } } ORDER BY ?s", {"s": [A, B]})
    assert [(r["s"], r["o"].value, r["g"]) for r in rows] == [(A, "one", TIER_WARM), (B, "two", TIER_HOT)]
    rows = store.select("SELECT ?s ?w WHERE { GRAPH ?g { ?s <urn:p> ?o } } ORDER BY ?s",
                        {"s w": [(A, Literal(1)), (C, Literal(3))]})
    assert [(r["s"], int(r["w"].value)) for r in rows] == [(A, 1), (C, 3)]
    assert store.ask("ASK { GRAPH ?g { ?s <urn:p> \"two\" } }")
    assert not store.ask("ASK { GRAPH ?g { ?s <urn:p> \"three\" } }")


def test_a_graph_name_binds_and_comes_back_as_acms_names_it(store: GraphStore) -> None:
    _seed(store)
    assert store.count(TIER_WARM) == 1 and store.count(TIER_COLD) == 1 and store.count() == 4
    rows = store.select("SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } }", {"g": TIER_HOT})
    assert [r["s"] for r in rows] == [B]
    assert store.select("SELECT ?s WHERE { GRAPH <https://w3id.org/acms/tier/cold> { ?s ?p ?o } }") == [{"s": C}]
    assert set(store.named_graphs()) >= {TIER_WARM, TIER_HOT, TIER_COLD, GRAPH_META}
    assert store.has_graph(TIER_HOT) and not store.has_graph(NamedNode("https://w3id.org/acms/nothing"))


def test_quads_whole_graph_and_by_pattern(store: GraphStore) -> None:
    _seed(store)
    assert {(q.subject, q.graph_name) for q in store.quads(TIER_WARM)} == {(A, TIER_WARM)}
    assert {q.subject for q in store.quads(predicate=P)} == {A, B, C}
    assert [q.graph_name for q in store.quads(predicate=P, obj=Literal("two"))] == [TIER_HOT]


def test_construct_and_query_raw(store: GraphStore) -> None:
    _seed(store)
    triples = store.construct("CONSTRUCT { ?s <urn:q> ?o } WHERE { GRAPH ?g { ?s <urn:p> ?o } }")
    assert {(q.subject, q.object.value) for q in triples} == {(A, "one"), (B, "two"), (C, "old")}
    raw = store.query_raw("SELECT ?s WHERE { ?s <urn:p> ?o }", default_graph=[TIER_HOT, TIER_WARM])
    assert isinstance(raw, SelectResult) and {s["s"] for s in raw} == {A, B}
    assert bool(store.query_raw("ASK { ?s <urn:p> \"old\" }", use_default_graph_as_union=True))
    raw = store.query_raw("CONSTRUCT { ?s ?p ?o } WHERE { GRAPH <https://w3id.org/acms/tier/hot> { ?s ?p ?o } }")
    assert isinstance(raw, GraphResult) and [t.subject for t in raw] == [B]


def test_update_and_replace_are_each_one_transaction(store: GraphStore) -> None:
    _seed(store)
    store.update("DELETE { GRAPH ?g { ?s <urn:p> ?o } } WHERE { GRAPH ?g { ?s <urn:p> ?o } }", {"s": A})
    assert store.count(TIER_WARM) == 0
    store.replace([("DELETE WHERE { GRAPH <https://w3id.org/acms/tier/hot> { ?s ?p ?o } }", None)],
                  [Quad(A, P, Literal("new"), TIER_HOT)])
    assert [(q.subject, q.object.value) for q in store.quads(TIER_HOT)] == [(A, "new")]
    with pytest.raises(QuerySyntaxError):
        store.replace([("DELETE WHERE { GRAPH <https://w3id.org/acms/tier/hot> { ?s ?p ?o } }", None),
                       ("THIS IS NOT SPARQL", None)], [])
    assert store.count(TIER_HOT) == 1  # the valid first part was not applied either


def test_atomic_lands_whole_or_not_at_all(store: GraphStore) -> None:
    _seed(store)
    before = store.count()
    with pytest.raises(RuntimeError):
        with store.atomic():
            store.load([Quad(NamedNode("urn:x"), P, Literal("x"), TIER_WARM)])
            store.update("DELETE WHERE { GRAPH <https://w3id.org/acms/tier/cold> { ?s ?p ?o } }")
            assert store.count(TIER_COLD) == 0  # the run reads its own writes
            raise RuntimeError("the run failed")
    assert store.count() == before and store.count(TIER_COLD) == 1
    with store.atomic():
        store.load([Quad(NamedNode("urn:x"), P, Literal("x"), TIER_WARM)])
        store.drop_graph(TIER_COLD)
    assert store.count(TIER_WARM) == 2 and not store.has_graph(TIER_COLD)


def test_ontology_and_prefixes(store: GraphStore) -> None:
    assert store.ensure_ontology() is True and store.ensure_ontology() is False
    assert store.count(GRAPH_ONTOLOGY) > 100
    assert store.prefixes()["uko"] == UKO.base
    rows = store.select("SELECT ?c WHERE { GRAPH <https://w3id.org/acms/graph/ontology> { ?c a owl:Class } }")
    assert UKO.Fragment in {r["c"] for r in rows}


def test_a_syntax_error_is_query_syntax_error(store: GraphStore) -> None:
    with pytest.raises(QuerySyntaxError):
        store.select("SELECT ?s WHERE { ?s ?p }")
