"""The SPARQL endpoint's store work: answering a SPARQL 1.1 Protocol query or update, a Graph Store
Protocol read or write, and the Service Description, over a ``GraphStore``, within the server's limits.

``acms serve`` parses the HTTP requests (:mod:`acms.server`) and runs these in its worker processes,
each with its own ``shared`` session on the index (``start_worker``), so that a query past its deadline
is stopped by ending its process. Every byte of an answer is written by pyoxigraph's own serializers,
through the store protocol's result types (:mod:`acms.sparql.results`): a SELECT's rows, read through
the row-checking generator, are serialized from their terms (``SelectResult.serialize``: exact, about
70 ms for 10k rows x 4 variables); CONSTRUCT triples stream from the same generator into
``pyoxigraph.serialize``.
"""

from __future__ import annotations

import re
import signal
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from acms.errors import (
    AcmsError,
    MethodNotAllowed,
    NotAcceptable,
    NotFound,
    PayloadTooLarge,
    ProtocolError,
    QueryLimitExceeded,
    QueryRejected,
    StoreError,
    Unavailable,
    UnsupportedMediaType,
    query_failed,
)
from acms.memory import limit_arenas
from acms.service.session import Mode, RemoteTarget, Session, open_session
from acms.sparql import catalog
from acms.sparql.dataset import CURRENT_GRAPHS, DefaultGraph, dataset_arguments
from acms.sparql.guard import check_query, refuse_update, scan
from acms.sparql.results import AskResult, GraphResult, SelectResult
from acms.sparql.runner import memory_limit_error
from acms.store.layout import IndexLayout
from acms.store.protocol import GraphStore
from acms.vocab import DCT, DCT_NS, RDF

JSON_RESULTS = "application/sparql-results+json"
TURTLE = "text/turtle"
RESULT_FORMATS: Mapping[str, ox.QueryResultsFormat] = {
    JSON_RESULTS: ox.QueryResultsFormat.JSON,
    "application/json": ox.QueryResultsFormat.JSON,
    "application/sparql-results+xml": ox.QueryResultsFormat.XML,
    "application/xml": ox.QueryResultsFormat.XML,
    "text/csv": ox.QueryResultsFormat.CSV,
    "text/tab-separated-values": ox.QueryResultsFormat.TSV,
}
GRAPH_FORMATS: Mapping[str, ox.RdfFormat] = {
    TURTLE: ox.RdfFormat.TURTLE,
    "application/n-triples": ox.RdfFormat.N_TRIPLES,
    "application/rdf+xml": ox.RdfFormat.RDF_XML,
    "application/ld+json": ox.RdfFormat.JSON_LD,
}
# Answer with the canonical media type of the format chosen (an alias in Accept gets the real one).
CANONICAL: Mapping[str, str] = {"application/json": JSON_RESULTS, "application/xml": "application/sparql-results+xml"}

_WORD = re.compile(r"[A-Za-z_]+")
UPDATE_HINT = " as a query; send it as the 'update' parameter or as application/sparql-update"


class Kind(str, Enum):
    QUERY = "query"
    UPDATE = "update"


@dataclass(frozen=True)
class Operation:
    """A query or an update as the protocol delivered it."""

    kind: Kind
    text: str
    default_graphs: tuple[ox.NamedNode, ...] = ()
    named_graphs: tuple[ox.NamedNode, ...] = ()
    union_default_graph: bool = False  # the request's ``union-default-graph`` parameter


@dataclass(frozen=True)
class Answer:
    body: bytes
    media_type: str


@dataclass(frozen=True)
class Limits:
    """What the server allows: set once, from ``acms serve``'s options."""

    timeout_s: float = 10.0
    max_rows: int = 10_000
    allow_update: bool = False
    allow_service: bool = False
    default_graph: DefaultGraph = DefaultGraph.CURRENT


# -- content negotiation ----------------------------------------------------------------------------
def _accepted(accept: str) -> list[str]:
    """Media ranges of an Accept header, best first (q-value, then order); q=0 dropped."""
    ranked = []
    for index, part in enumerate(accept.split(",")):
        media, *params = (p.strip() for p in part.split(";"))
        q = 1.0
        for p in params:
            key, _, value = p.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if media and q > 0:
            ranked.append((-q, index, media.lower()))
    return [m for _, _, m in sorted(ranked)]


def negotiate(accept: str, options: Mapping[str, Any], default: str) -> tuple[str, Any]:
    """The media type to answer with: the best acceptable option, the default for ``*/*`` or no header."""
    if not accept.strip():
        return default, options[default]
    for media in _accepted(accept):
        if media in options:
            return CANONICAL.get(media, media), options[media]
        if media == "*/*" or media == f"{default.split('/')[0]}/*":
            return default, options[default]
        if media.endswith("/*"):
            major = media[:-1]
            for name in options:
                if name.startswith(major):
                    return CANONICAL.get(name, name), options[name]
    offered = ", ".join(n for n in options if n not in CANONICAL)
    raise NotAcceptable(f"cannot answer with {accept!r}; this result is available as {offered}")


# -- running (in a worker process) ------------------------------------------------------------------
def _checked(items: Iterable[Any], deadline: float, max_rows: int, timeout_s: float) -> Iterator[Any]:
    """Yield items while the deadline holds and at most ``max_rows`` of them."""
    clock = time.monotonic
    for count, item in enumerate(items):
        if clock() > deadline:
            raise Unavailable(f"query exceeded the {timeout_s:g} s timeout (--query-timeout) after "
                            f"{count:,} rows and was stopped; narrow it or add a LIMIT")
        if count >= max_rows:
            raise PayloadTooLarge(f"the result has more than {max_rows:,} rows (--max-rows); add a LIMIT or narrow it")
        yield item


def run_query(store: GraphStore, op: Operation, accept: str, limits: Limits, deadline: float) -> Answer:
    """Check, evaluate, consume within the limits, serialize (in a worker process, see ``workers``)."""
    check_query(op.text, allow_service=limits.allow_service)
    refuse_update(op.text, UPDATE_HINT if limits.allow_update else "")
    outcome = _evaluate(store, op, accept, limits, deadline)
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def _evaluate(store: GraphStore, op: Operation, accept: str, limits: Limits,
              deadline: float) -> Answer | ProtocolError | AcmsError:
    """The answer, or the failure as a fresh exception.

    pyoxigraph's result iterators (which the rows and triples are read from) are "unsendable": only the
    thread that made them may drop them. An exception raised past this function would carry frames that
    still hold them to whichever thread drops it, so failures are returned instead, built anew once
    every reference is gone.
    """
    mode = DefaultGraph.ALL if op.union_default_graph else limits.default_graph
    result = store.query_raw(op.text, **dataset_arguments(op.text, mode, op.default_graphs, op.named_graphs))
    try:
        if isinstance(result, AskResult):
            media, fmt = negotiate(accept, RESULT_FORMATS, JSON_RESULTS)
            return Answer(result.serialize(fmt), media)
        if isinstance(result, GraphResult):
            media, rdf = negotiate(accept, GRAPH_FORMATS, TURTLE)
            triples = _checked(result, deadline, limits.max_rows, limits.timeout_s)
            return Answer(GraphResult(triples).serialize(rdf, store.prefixes()), media)
        media, fmt = negotiate(accept, RESULT_FORMATS, JSON_RESULTS)
        rows = _checked(result, deadline, limits.max_rows, limits.timeout_s)
        return Answer(SelectResult(result.variables, rows).serialize(fmt), media)
    except (ProtocolError, StoreError) as exc:  # StoreError: a remote store's answer it could not read
        return type(exc)(exc.message)
    except (OSError, RuntimeError) as exc:  # e.g. while rows are pulled from the store
        return query_failed(exc)


def refuse_load(text: str) -> None:
    """``LOAD <url>`` makes pyoxigraph fetch the URL (like SERVICE): never from the endpoint."""
    if any(word.upper() == "LOAD" for word in _WORD.findall(scan(text).code)):
        raise QueryRejected("LOAD is refused: it would make the store fetch a URL")


def run_update(store: GraphStore, op: Operation, limits: Limits) -> None:
    """Check and apply an update (one transaction); the caller holds the index's exclusive lock."""
    check_query(op.text, allow_service=limits.allow_service)
    refuse_load(op.text)
    store.update(op.text)


class Change(str, Enum):
    REPLACE = "PUT"
    MERGE = "POST"
    DROP = "DELETE"


@dataclass(frozen=True)
class GraphRequest:
    """Which graph a request is about: ``graph`` is None for the default graph."""

    graph: ox.NamedNode | None


def _stored_graphs(store: GraphStore, mode: DefaultGraph) -> list[ox.NamedNode | ox.DefaultGraph]:
    """The store graphs whose union is the default graph in ``mode``."""
    if mode is DefaultGraph.EMPTY:
        return [ox.DefaultGraph()]
    if mode is DefaultGraph.CURRENT:
        return list(CURRENT_GRAPHS)
    return [ox.DefaultGraph(), *store.named_graphs()]  # type: ignore[list-item]


def _graph_triples(store: GraphStore, graphs: list[ox.NamedNode | ox.DefaultGraph]) -> Iterator[ox.Triple]:
    seen: set[ox.Triple] | None = set() if len(graphs) > 1 else None  # a union is a set of triples
    for graph in graphs:
        for quad in store.quads(graph):
            triple = quad.triple
            if seen is not None:
                if triple in seen:
                    continue
                seen.add(triple)
            yield triple


def read_graph(store: GraphStore, request: GraphRequest, mode: DefaultGraph, accept: str) -> Answer:
    """The graph's triples, serialized by pyoxigraph in the negotiated format (404 for an unknown graph)."""
    media, rdf = negotiate(accept, GRAPH_FORMATS, TURTLE)
    if request.graph is None:
        graphs = _stored_graphs(store, mode)
    elif store.has_graph(request.graph):
        graphs = [request.graph]
    else:
        raise NotFound(f"no graph {request.graph.value} in this store")
    body = ox.serialize(_graph_triples(store, graphs), format=rdf, prefixes=store.prefixes())
    return Answer(body or b"", media)


def write_graph(store: GraphStore, request: GraphRequest, change: Change, body: bytes,
                content_type: str) -> int:
    """Apply a change to a named graph in one transaction; the HTTP status to answer with."""
    graph = request.graph
    if graph is None:
        raise MethodNotAllowed("the default graph is read-only here (a view of the stored graphs); "
                                 "write a named graph with ?graph=IRI")
    existed = store.has_graph(graph)
    if change is Change.DROP:
        if not existed:
            raise NotFound(f"no graph {graph.value} in this store")
        store.drop_graph(graph)
        return 204
    quads = [ox.Quad(t.subject, t.predicate, t.object, graph) for t in _parse_graph(body, content_type)]
    if change is Change.REPLACE:
        store.replace([(catalog.text("graphstore/clear-graph.ru"), {"g": graph})], quads)
    else:
        store.load(quads)
    return 204 if existed else 201


def _parse_graph(body: bytes, content_type: str) -> list[ox.Triple]:
    media = content_type.split(";")[0].strip().lower()
    rdf = ox.RdfFormat.from_media_type(media) if media else None
    if rdf is None or rdf.supports_datasets:
        offered = ", ".join(GRAPH_FORMATS)
        raise UnsupportedMediaType(f"unsupported content type {media or '(none)'!r}; send a graph as {offered}")
    try:
        return [ox.Triple(q.subject, q.predicate, q.object) for q in ox.parse(body, format=rdf)]
    except SyntaxError as exc:
        raise ProtocolError(f"the body is not valid {rdf.name}: {exc}") from None


SD = "http://www.w3.org/ns/sparql-service-description#"
FORMATS_NS = "http://www.w3.org/ns/formats/"
SERVICE_RESULT_FORMATS = ("SPARQL_Results_JSON", "SPARQL_Results_XML", "SPARQL_Results_CSV", "SPARQL_Results_TSV",
                  "Turtle", "N-Triples", "RDF_XML", "JSON-LD")


def _sd(name: str) -> ox.NamedNode:
    return ox.NamedNode(SD + name)


def _service_triples(store: GraphStore, endpoint: str, limits: Limits) -> Iterator[ox.Triple]:
    service, dataset, default = ox.BlankNode(), ox.BlankNode(), ox.BlankNode()
    yield ox.Triple(service, RDF.type, _sd("Service"))
    yield ox.Triple(service, _sd("endpoint"), ox.NamedNode(endpoint))
    yield ox.Triple(service, _sd("supportedLanguage"), _sd("SPARQL11Query"))
    if limits.allow_update:
        yield ox.Triple(service, _sd("supportedLanguage"), _sd("SPARQL11Update"))
    for name in SERVICE_RESULT_FORMATS:
        yield ox.Triple(service, _sd("resultFormat"), ox.NamedNode(FORMATS_NS + name))
    if limits.default_graph is DefaultGraph.ALL:
        yield ox.Triple(service, _sd("feature"), _sd("UnionDefaultGraph"))
    if limits.allow_service:
        yield ox.Triple(service, _sd("feature"), _sd("BasicFederatedQuery"))
    yield ox.Triple(service, _sd("defaultDataset"), dataset)
    yield ox.Triple(dataset, RDF.type, _sd("Dataset"))
    yield ox.Triple(dataset, _sd("defaultGraph"), default)
    yield ox.Triple(default, RDF.type, _sd("Graph"))
    what = limits.default_graph.help
    if limits.default_graph is DefaultGraph.CURRENT:
        what += ": " + ", ".join(g.value for g in CURRENT_GRAPHS)
    yield ox.Triple(default, DCT.description,
                    ox.Literal(f"The default graph is {what}; a query's FROM or the protocol's "
                               "default-graph-uri / named-graph-uri / union-default-graph choose another."))
    for graph in sorted(store.named_graphs(), key=str):
        named = ox.BlankNode()
        yield ox.Triple(dataset, _sd("namedGraph"), named)
        yield ox.Triple(named, RDF.type, _sd("NamedGraph"))
        yield ox.Triple(named, _sd("name"), graph)  # type: ignore[arg-type]


def describe_service(store: GraphStore, endpoint: str, limits: Limits, accept: str) -> Answer:
    """The description in the negotiated RDF format (Turtle by default)."""
    media, rdf = negotiate(accept, GRAPH_FORMATS, TURTLE)
    prefixes = {"sd": SD, "formats": FORMATS_NS, "dcterms": DCT_NS}
    return Answer(ox.serialize(_service_triples(store, endpoint, limits), format=rdf, prefixes=prefixes) or b"", media)


# -- a worker process ----------------------------------------------------------------------------
_session: Session | None = None  # the worker process's session on the index (set once, at its start)


# -- in the worker process --------------------------------------------------------------------------
def start_worker(index_dir: str, wait: float, remote: RemoteTarget | None = None, memory_mb: int | None = None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # pebble's handler would wait for the native call to end
    if memory_mb and sys.platform != "win32":
        import resource

        limit_arenas(2)  # each thread's arena reserves address space the bound would count
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    global _session
    _session = open_session(IndexLayout(Path(index_dir)), Mode.SHARED, wait=wait, command="acms serve (worker)",
                            remote=remote)


def _index() -> Session:
    assert _session is not None, "worker started without its initializer"
    return _session


def left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


def ready() -> None:
    """Nothing: scheduling it starts the pool's processes."""


def query_job(op: Operation, accept: str, limits: Limits, deadline: float) -> Answer:
    with _index().reading(wait=left(deadline)) as store:
        return run_query(store, op, accept, limits, deadline)


def update_job(op: Operation, limits: Limits, deadline: float) -> None:
    with _index().writing(wait=left(deadline)) as store:
        run_update(store, op, limits)


def read_graph_job(request: GraphRequest, mode: DefaultGraph, accept: str, deadline: float) -> Answer:
    with _index().reading(wait=left(deadline)) as store:
        return read_graph(store, request, mode, accept)


def write_graph_job(request: GraphRequest, change: Change, body: bytes, content_type: str, deadline: float) -> int:
    with _index().writing(wait=left(deadline)) as store:
        return write_graph(store, request, change, body, content_type)


def service_job(endpoint: str, limits: Limits, accept: str, deadline: float) -> Answer:
    with _index().reading(wait=left(deadline)) as store:
        return describe_service(store, endpoint, limits, accept)


def memory_error(memory_mb: int) -> QueryLimitExceeded:
    """What a worker that passed its address-space bound (``query_memory_mb``) is answered as."""
    return memory_limit_error(memory_mb)


ABORTED = -signal.SIGABRT  # a worker's exit code when an allocation past RLIMIT_AS aborted it
