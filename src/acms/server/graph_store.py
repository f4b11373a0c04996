"""The SPARQL 1.1 Graph Store HTTP Protocol (``/store``), store side: read, replace, merge, drop a graph.

https://www.w3.org/TR/sparql11-http-rdf-update/ with indirect identification: ``?graph=<IRI>`` names a
graph, ``?default`` the default graph. ``GET`` returns the graph (``HEAD`` its headers), by ``Accept``
in the formats of CONSTRUCT results; ``GET ?default`` returns the server's default graph (the union
of the current tiers unless ``--default-graph`` says otherwise, see :mod:`acms.sparql.dataset`).
With ``--allow-update``: ``PUT`` replaces a named graph with the body, ``POST`` adds the body's
triples, ``DELETE`` drops it; each is one transaction under the index's exclusive lock. The default
graph is read-only here (every triple acms keeps lives in a named graph): writing it is a 405.

The reads and writes run in a worker process (:mod:`acms.server.workers`) with the index lock held
(``acms.api.endpoint``: ``read_graph``, ``write_graph``); this module reads the request's graph.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyoxigraph as ox

from acms.api import endpoint
from acms.errors import ProtocolError

__all__ = ["Change", "GraphRequest", "graph_request"]

Change, GraphRequest = endpoint.Change, endpoint.GraphRequest


def graph_request(params: Mapping[str, list[str]]) -> GraphRequest:
    """``?graph=IRI`` or ``?default`` (exactly one of them)."""
    graphs, default = params.get("graph", []), "default" in params
    if default and graphs or len(graphs) > 1 or not (default or graphs):
        raise ProtocolError("name one graph: ?graph=IRI or ?default")
    if default:
        return GraphRequest(None)
    try:
        return GraphRequest(ox.NamedNode(graphs[0]))
    except ValueError:
        raise ProtocolError(f"graph: not a valid IRI: {graphs[0]!r}") from None
