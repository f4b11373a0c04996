"""The SPARQL 1.1 Graph Store HTTP Protocol (``/store``), store side: read, replace, merge, drop a graph.

https://www.w3.org/TR/sparql11-http-rdf-update/ with indirect identification: ``?graph=<IRI>`` names a
graph, ``?default`` the default graph. ``GET`` returns the graph (``HEAD`` its headers), by ``Accept``
in the formats of CONSTRUCT results; ``GET ?default`` returns the server's default graph (the union
of the current tiers unless ``--default-graph`` says otherwise, see :mod:`acms.sparql.dataset`).
With ``--allow-update``: ``PUT`` replaces a named graph with the body, ``POST`` adds the body's
triples, ``DELETE`` drops it; each is one transaction under the index's exclusive lock. The default
graph is read-only here (every triple acms keeps lives in a named graph): writing it is a 405.

These functions run in a worker process (:mod:`acms.server.workers`) with the index lock held.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum

import pyoxigraph as ox

from acms.server.sparql_protocol import GRAPH_FORMATS, TURTLE, Answer, ProtocolError, negotiate
from acms.sparql import catalog
from acms.sparql.dataset import CURRENT_GRAPHS, DefaultGraph
from acms.store.protocol import GraphStore

__all__ = ["Change", "GraphRequest", "graph_request", "read_graph", "write_graph"]


class Change(str, Enum):
    REPLACE = "PUT"
    MERGE = "POST"
    DROP = "DELETE"


@dataclass(frozen=True)
class GraphRequest:
    """Which graph a request is about: ``graph`` is None for the default graph."""

    graph: ox.NamedNode | None


def graph_request(params: Mapping[str, list[str]]) -> GraphRequest:
    """``?graph=IRI`` or ``?default`` (exactly one of them)."""
    graphs, default = params.get("graph", []), "default" in params
    if default and graphs or len(graphs) > 1 or not (default or graphs):
        raise ProtocolError(400, "name one graph: ?graph=IRI or ?default")
    if default:
        return GraphRequest(None)
    try:
        return GraphRequest(ox.NamedNode(graphs[0]))
    except ValueError:
        raise ProtocolError(400, f"graph: not a valid IRI: {graphs[0]!r}") from None


def _graphs(store: GraphStore, mode: DefaultGraph) -> list[ox.NamedNode | ox.DefaultGraph]:
    """The store graphs whose union is the default graph in ``mode``."""
    if mode is DefaultGraph.EMPTY:
        return [ox.DefaultGraph()]
    if mode is DefaultGraph.CURRENT:
        return list(CURRENT_GRAPHS)
    return [ox.DefaultGraph(), *store.named_graphs()]  # type: ignore[list-item]


def _triples(store: GraphStore, graphs: list[ox.NamedNode | ox.DefaultGraph]) -> Iterator[ox.Triple]:
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
        graphs = _graphs(store, mode)
    elif store.has_graph(request.graph):
        graphs = [request.graph]
    else:
        raise ProtocolError(404, f"no graph {request.graph.value} in this store")
    body = ox.serialize(_triples(store, graphs), format=rdf, prefixes=store.prefixes())
    return Answer(body or b"", media)


def write_graph(store: GraphStore, request: GraphRequest, change: Change, body: bytes,
                content_type: str) -> int:
    """Apply a change to a named graph in one transaction; the HTTP status to answer with."""
    graph = request.graph
    if graph is None:
        raise ProtocolError(405, "the default graph is read-only here (a view of the stored graphs); "
                                 "write a named graph with ?graph=IRI")
    existed = store.has_graph(graph)
    if change is Change.DROP:
        if not existed:
            raise ProtocolError(404, f"no graph {graph.value} in this store")
        store.drop_graph(graph)
        return 204
    quads = [ox.Quad(t.subject, t.predicate, t.object, graph) for t in _parse(body, content_type)]
    if change is Change.REPLACE:
        store.replace([(catalog.text("graphstore/clear-graph.ru"), {"g": graph})], quads)
    else:
        store.load(quads)
    return 204 if existed else 201


def _parse(body: bytes, content_type: str) -> list[ox.Triple]:
    media = content_type.split(";")[0].strip().lower()
    rdf = ox.RdfFormat.from_media_type(media) if media else None
    if rdf is None or rdf.supports_datasets:
        offered = ", ".join(GRAPH_FORMATS)
        raise ProtocolError(415, f"unsupported content type {media or '(none)'!r}; send a graph as {offered}")
    try:
        return [ox.Triple(q.subject, q.predicate, q.object) for q in ox.parse(body, format=rdf)]
    except SyntaxError as exc:
        raise ProtocolError(400, f"the body is not valid {rdf.name}: {exc}") from None
