"""The SPARQL 1.1 Service Description of the endpoint (``GET /sparql`` without a query).

https://www.w3.org/TR/sparql11-service-description/: what the endpoint speaks (query, and update when
allowed), its result formats, its features (union default graph, federated query when ``SERVICE`` is
allowed) and its default dataset: what the default graph is and which named graphs the store holds.
Runs in a worker process, with the index's shared lock held, like a query.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyoxigraph as ox

from acms.server.sparql_protocol import GRAPH_FORMATS, TURTLE, Answer, Limits, negotiate
from acms.sparql.dataset import CURRENT_GRAPHS, DefaultGraph
from acms.store.protocol import GraphStore
from acms.vocab import DCT, DCT_NS, RDF

__all__ = ["describe_service"]

SD = "http://www.w3.org/ns/sparql-service-description#"
FORMATS = "http://www.w3.org/ns/formats/"
RESULT_FORMATS = ("SPARQL_Results_JSON", "SPARQL_Results_XML", "SPARQL_Results_CSV", "SPARQL_Results_TSV",
                  "Turtle", "N-Triples", "RDF_XML", "JSON-LD")


def _sd(name: str) -> ox.NamedNode:
    return ox.NamedNode(SD + name)


def _triples(store: GraphStore, endpoint: str, limits: Limits) -> Iterator[ox.Triple]:
    service, dataset, default = ox.BlankNode(), ox.BlankNode(), ox.BlankNode()
    yield ox.Triple(service, RDF.type, _sd("Service"))
    yield ox.Triple(service, _sd("endpoint"), ox.NamedNode(endpoint))
    yield ox.Triple(service, _sd("supportedLanguage"), _sd("SPARQL11Query"))
    if limits.allow_update:
        yield ox.Triple(service, _sd("supportedLanguage"), _sd("SPARQL11Update"))
    for name in RESULT_FORMATS:
        yield ox.Triple(service, _sd("resultFormat"), ox.NamedNode(FORMATS + name))
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
    prefixes = {"sd": SD, "formats": FORMATS, "dcterms": DCT_NS}
    return Answer(ox.serialize(_triples(store, endpoint, limits), format=rdf, prefixes=prefixes) or b"", media)
