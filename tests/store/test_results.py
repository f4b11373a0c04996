"""``query_raw``'s result types: the embedded store and a real Oxigraph server give equal answers in
them (unbound variables, blank nodes, literals with a language or a datatype, logical graph names),
the embedded store's rows stream as they are evaluated, each serializes in the standard formats, and
a bounded query (child process) answers as an in-process one."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path

import pyoxigraph as ox
import pytest
from pyoxigraph import BlankNode, Literal, NamedNode, Quad

from acms.errors import StoreError
from acms.sparql.results import AskResult, GraphResult, SelectResult, collect, serialize_rows
from acms.sparql.runner import QueryLimits
from acms.store.http_client import Endpoints
from acms.store.oxigraph import OxigraphStore
from acms.store.protocol import GraphStore
from acms.store.remote import RemoteStore, RemoteTarget
from acms.vocab import TIER_HOT, TIER_WARM, XSD

A, B, C = NamedNode("urn:a"), NamedNode("urn:b"), NamedNode("urn:c")
P, Q, R = NamedNode("urn:p"), NamedNode("urn:q"), NamedNode("urn:r")
INNER, LONE = BlankNode("inner"), BlankNode("lone")
QUADS = [
    Quad(A, P, Literal("one", language="en"), TIER_HOT),
    Quad(A, Q, Literal("42", datatype=XSD.integer), TIER_HOT),
    Quad(A, R, INNER, TIER_HOT),
    Quad(INNER, P, Literal("inner", language="fr-ca"), TIER_HOT),
    Quad(B, P, Literal("two"), TIER_HOT),  # no urn:q: unbound in the OPTIONAL
    Quad(LONE, P, Literal("3.5", datatype=NamedNode("urn:dt")), TIER_WARM),
    Quad(C, P, Literal("2024-01-01", datatype=XSD.date), TIER_WARM),
]
SELECT = "SELECT ?s ?o ?n ?g WHERE { GRAPH ?g { ?s <urn:p> ?o OPTIONAL { ?s <urn:q> ?n } } }"
PLAIN = "SELECT ?s ?o ?n WHERE { GRAPH ?g { ?s <urn:p> ?o FILTER(isIRI(?s)) OPTIONAL { ?s <urn:q> ?n } } } ORDER BY ?s"
RESULT_FORMATS = [ox.QueryResultsFormat.JSON, ox.QueryResultsFormat.XML, ox.QueryResultsFormat.CSV,
                  ox.QueryResultsFormat.TSV]
CONSTRUCT = "CONSTRUCT { ?s <urn:copy> ?o } WHERE { GRAPH ?g { ?s ?p ?o } }"


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory, oxigraph_server: str) -> Iterator[dict[str, GraphStore]]:
    """The same quads in an embedded store and in a project of the session's Oxigraph server."""
    embedded = OxigraphStore(tmp_path_factory.mktemp("results") / "graph")
    project = f"results{id(embedded):x}"
    remote = RemoteStore.open(RemoteTarget(Endpoints(oxigraph_server), project), read_only=False, create=True)
    both: dict[str, GraphStore] = {"embedded": embedded, "remote": remote}
    try:
        for store in both.values():
            store.load(QUADS)
        yield both
    finally:
        for store in both.values():
            store.close()


def _key(term: object) -> str:
    return "_:" if isinstance(term, BlankNode) else str(term)


def _rows_shape(rows: Iterable[dict[str, object]]) -> list[list[tuple[str, str]]]:
    """Rows with each blank node named by its first appearance (stores label them their own way)."""
    ordered = sorted(rows, key=lambda r: sorted((n, _key(t)) for n, t in r.items()))
    names: dict[object, str] = {}
    shape = []
    for row in ordered:
        cells = []
        for name, term in sorted(row.items()):
            if isinstance(term, BlankNode):
                term = names.setdefault(term, f"_:b{len(names)}")
            cells.append((name, str(term)))
        shape.append(cells)
    return shape


def _canonical(triples: Iterable[ox.Triple]) -> set[Quad]:
    dataset = ox.Dataset([Quad(t.subject, t.predicate, t.object) for t in triples])
    dataset.canonicalize(ox.CanonicalizationAlgorithm.UNSTABLE)
    return set(dataset)


def test_select_rows_are_equal_with_unbound_variables_blank_nodes_and_typed_literals(stores: dict[str, GraphStore]) -> None:
    answers = {name: store.query_raw(SELECT) for name, store in stores.items()}
    for answer in answers.values():
        assert isinstance(answer, SelectResult) and answer.variables == ("s", "o", "n", "g")
    rows = {name: list(answer) for name, answer in answers.items()}  # type: ignore[arg-type]
    assert _rows_shape(rows["embedded"]) == _rows_shape(rows["remote"])
    embedded = rows["embedded"]
    assert len(embedded) == 5
    assert [r for r in embedded if r["s"] == B] == [{"s": B, "o": Literal("two"), "g": TIER_HOT}]  # ?n unbound: absent
    assert {r["o"] for r in embedded if r["s"] == A} == {Literal("one", language="en")}
    assert {r["n"] for r in embedded if "n" in r} == {Literal("42", datatype=XSD.integer)}
    assert {r["g"] for r in rows["remote"]} == {TIER_HOT, TIER_WARM}  # the logical names, not the project's
    blanks = [r["o"] for r in rows["remote"] if isinstance(r["s"], BlankNode)]
    assert set(blanks) == {Literal("inner", language="fr-ca"), Literal("3.5", datatype=NamedNode("urn:dt"))}


def test_a_whole_store_query_names_the_graphs_as_stored(stores: dict[str, GraphStore]) -> None:
    """A cross-project query tells the projects apart by the physical graph names."""
    remote = stores["remote"]
    assert isinstance(remote, RemoteStore)
    text = "SELECT DISTINCT ?g WHERE { GRAPH ?g { <urn:b> <urn:p> ?o } }"
    assert [r["g"] for r in remote.query_raw(text)] == [TIER_HOT]  # type: ignore[union-attr]
    assert [r["g"] for r in remote.query_raw(text, whole_store=True)] == [remote.scope.physical(TIER_HOT)]  # type: ignore[union-attr]


def test_ask_answers_are_equal(stores: dict[str, GraphStore]) -> None:
    for store in stores.values():
        yes = store.query_raw('ASK { GRAPH ?g { ?s <urn:p> "one"@en } }')
        no = store.query_raw('ASK { GRAPH ?g { ?s <urn:p> "one" } }')  # the plain string is another literal
        assert yes == AskResult(True) and bool(yes) and no == AskResult(False) and not no


@pytest.mark.parametrize("query, dataset", [
    (CONSTRUCT, {}),
    ("DESCRIBE <urn:a>", {"default_graph": [TIER_HOT]}),  # the blank node's description comes along
])
def test_graph_answers_are_equal(stores: dict[str, GraphStore], query: str, dataset: dict[str, object]) -> None:
    graphs = {}
    for name, store in stores.items():
        answer = store.query_raw(query, **dataset)
        assert isinstance(answer, GraphResult)
        graphs[name] = _canonical(answer)
    assert graphs["embedded"] == graphs["remote"]
    assert len(graphs["embedded"]) == (len(QUADS) if query == CONSTRUCT else 4)


@pytest.mark.parametrize("fmt", RESULT_FORMATS, ids=lambda f: f.name)
def test_a_select_serializes_alike_from_either_store_and_either_path(stores: dict[str, GraphStore],
                                                                       fmt: ox.QueryResultsFormat) -> None:
    """The embedded store's untouched answer is written by pyoxigraph natively; rows once read (the
    endpoint's checked rows) and the remote store's are written from their terms: the same bytes."""
    native = stores["embedded"].query_raw(PLAIN).serialize(fmt)  # type: ignore[union-attr]
    read = stores["embedded"].query_raw(PLAIN)
    assert isinstance(read, SelectResult)
    from_rows = SelectResult(read.variables, list(read)).serialize(fmt)
    remote = stores["remote"].query_raw(PLAIN).serialize(fmt)  # type: ignore[union-attr]
    assert native == from_rows == remote
    assert b"urn:a" in native and (b"42" in native)


def test_rows_already_read_are_not_serialized_again(stores: dict[str, GraphStore]) -> None:
    answer = stores["embedded"].query_raw(PLAIN)
    assert isinstance(answer, SelectResult)
    first = next(iter(answer))
    rest = answer.serialize(ox.QueryResultsFormat.TSV).decode()
    assert str(first["s"]) not in rest and rest.count("\n") == 1 + 2  # the header and the two rows left


def test_ask_serializes_in_every_results_format() -> None:
    for fmt in RESULT_FORMATS:
        assert b"true" in AskResult(True).serialize(fmt) and b"false" in AskResult(False).serialize(fmt)


def test_embedded_rows_stream_as_they_are_evaluated(stores: dict[str, GraphStore]) -> None:
    """Rows are made as they are read: after three rows the store has evaluated about three, not all."""
    calls = []

    def seen(term: ox.Literal) -> ox.Literal:
        calls.append(term)
        return term

    values = " ".join(str(n) for n in range(500))
    answer = stores["embedded"].query_raw(
        f"SELECT ?x (<urn:fn:seen>(?x) AS ?y) WHERE {{ VALUES ?x {{ {values} }} }}",
        custom_functions={NamedNode("urn:fn:seen"): seen})
    assert isinstance(answer, SelectResult)
    taken = list(islice(answer, 3))
    assert [int(r["y"].value) for r in taken] == [0, 1, 2]
    assert len(calls) < 50


def test_a_bounded_query_answers_as_an_in_process_one(stores: dict[str, GraphStore]) -> None:
    """The child process's answer (cut at max_rows or whole) in the same types and terms, triple terms
    included."""
    store = stores["embedded"]
    triple = "<<( <urn:a> <urn:p> <urn:c> )>>"
    select = f"SELECT ?s ?o ?n ?t WHERE {{ GRAPH ?g {{ ?s <urn:p> ?o OPTIONAL {{ ?s <urn:q> ?n }} }} BIND({triple} AS ?t) }}"
    construct = f"CONSTRUCT {{ ?s <urn:about> {triple} }} WHERE {{ GRAPH ?g {{ ?s <urn:p> ?o }} }}"
    for max_rows in (None, 50):
        limits = QueryLimits(timeout_s=30, max_rows=max_rows)
        bounded, direct = store.query_raw(select, limits=limits), store.query_raw(select)
        assert isinstance(bounded, SelectResult) and isinstance(direct, SelectResult)
        assert bounded.variables == direct.variables
        assert _rows_shape(bounded) == _rows_shape(direct)
        bounded_graph = store.query_raw(construct, limits=limits)
        assert isinstance(bounded_graph, GraphResult)
        assert _canonical(bounded_graph) == _canonical(store.query_raw(construct))  # type: ignore[arg-type]
    assert collect(store.query_raw(construct, limits=QueryLimits(max_rows=2)), 2).truncated


def test_serialize_rows_keeps_unbound_cells_empty() -> None:
    tsv = serialize_rows(["a", "b"], [{"a": A}, {"b": Literal("x", language="en")}], ox.QueryResultsFormat.TSV)
    assert tsv.decode().splitlines() == ["?a\t?b", "<urn:a>\t", '\t"x"@en']


class _Unreadable(http.server.BaseHTTPRequestHandler):
    """An engine that has no project yet and answers any other query with a row it cannot have sent."""

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        asked = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if b"store%23generation" in asked or b"preferredNamespace" in asked:
            body = b'{"head":{"vars":["gen"]},"results":{"bindings":[]}}'
        else:
            body = (b'{"head":{"vars":["s"]},"results":{"bindings":[{"s":{"type":"uri","value":"urn:a"}},'
                    b'{"s":{"type":"nope","value":"x"}}]}}')
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_row_the_store_cannot_read_is_a_store_error_where_it_is_read() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Unreadable)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        store = RemoteStore(RemoteTarget(Endpoints(f"http://127.0.0.1:{server.server_address[1]}", retries=0), "x"))
        try:
            answer = store.query_raw("SELECT ?s WHERE { ?s ?p ?o }")
            assert isinstance(answer, SelectResult)
            rows = iter(answer)
            assert next(rows) == {"s": A}
            with pytest.raises(StoreError, match="cannot read: Unexpected term type"):
                next(rows)
        finally:
            store.close()
    finally:
        server.shutdown()
        server.server_close()


def test_every_form_answers_in_the_protocols_types(tmp_path: Path) -> None:
    """What ``query_raw`` gives is acms's own container, never the engine's result object."""
    store = OxigraphStore(tmp_path / "graph")
    try:
        store.load(QUADS[:1])
        for text in ("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }", "ASK {}", "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }"):
            answer = store.query_raw(text)
            assert type(answer).__module__ == "acms.sparql.results"
    finally:
        store.close()
