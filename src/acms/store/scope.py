"""Per-project graph names in a shared store: the logical names acms uses, the physical names it stores.

Everything above ``acms.store`` (queries, ``vocab.TIER_HOT`` …) names the five graphs of *the*
project: ``https://w3id.org/acms/tier/{hot,warm,cold}`` and ``…/graph/{meta,ontology}``. An embedded
store holds one project, so there the logical names are the stored ones. A shared store (a remote
SPARQL engine) holds many projects, so each project's graphs live under its own IRI::

    https://w3id.org/acms/tier/hot  ->  https://w3id.org/acms/id/<project>/tier/hot

A ``GraphScope`` translates at the store boundary: query and update text (the five IRIs, always written
in full as ``<…>`` in ``queries/``), bound terms and written quads go out physical; rows come back
logical. A project's run marker (:mod:`acms.store.remote`) lives in a sixth graph, ``…/graph/control``,
that no logical name reaches.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pyoxigraph import DefaultGraph, NamedNode, Quad

from acms.terms import Term
from acms.vocab import GRAPH_META, GRAPH_ONTOLOGY, ID_NS, TIER_COLD, TIER_HOT, TIER_WARM, slug

__all__ = ["ACMS_BASE", "LOGICAL_GRAPHS", "GraphScope"]

ACMS_BASE = "https://w3id.org/acms/"
LOGICAL_GRAPHS: tuple[NamedNode, ...] = (TIER_HOT, TIER_WARM, TIER_COLD, GRAPH_META, GRAPH_ONTOLOGY)


class GraphScope:
    """The physical graph names of one project in a shared store, and the translation both ways."""

    def __init__(self, project: str) -> None:
        self.slug = slug(project)
        self.base = f"{ID_NS}{self.slug}/"
        self.project = NamedNode(self.base)
        self.control = NamedNode(f"{self.base}graph/control")
        self._out = {g: NamedNode(self.base + g.value.removeprefix(ACMS_BASE)) for g in LOGICAL_GRAPHS}
        self._back = {p: g for g, p in self._out.items()}
        self._text = {f"<{g.value}>": f"<{p.value}>" for g, p in self._out.items()}
        self._pattern = re.compile("|".join(re.escape(k) for k in self._text))

    @property
    def graphs(self) -> list[NamedNode]:
        """The project's five physical graphs (tiers, meta, ontology), in ``LOGICAL_GRAPHS`` order."""
        return list(self._out.values())

    def physical(self, graph: NamedNode) -> NamedNode:
        return self._out.get(graph, graph)

    def term_out(self, term: Term) -> Term:
        return self._out.get(term, term) if isinstance(term, NamedNode) else term

    def term_back(self, term: Term) -> Term:
        return self._back.get(term, term) if isinstance(term, NamedNode) else term

    def text(self, sparql: str) -> str:
        """The query or update with the five logical graph IRIs replaced by this project's."""
        return self._pattern.sub(lambda m: self._text[m.group(0)], sparql)

    def quad_out(self, quad: Quad) -> Quad:
        g = quad.graph_name
        if isinstance(g, NamedNode) and g in self._out:
            return Quad(quad.subject, quad.predicate, quad.object, self._out[g])
        return quad

    def quads_out(self, quads: Iterable[Quad]) -> list[Quad]:
        return [self.quad_out(q) for q in quads]

    def logical_graph(self, graph: NamedNode | DefaultGraph) -> NamedNode | DefaultGraph:
        return self._back.get(graph, graph) if isinstance(graph, NamedNode) else graph
