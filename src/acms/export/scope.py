"""Which quads an export covers: the whole graph, a tier, the module graph, an entity's neighbourhood,
or the result of a user's CONSTRUCT.

The whole graph and a tier are streamed from the store (one pattern read per graph: dump speed,
nothing held in memory); a viewer format asks only for the predicates its view reads
(:data:`acms.export.view.PREDICATES`), so vectors and hashes are never even decoded. The other scopes
are computed by queries and are small.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass

from pyoxigraph import DefaultGraph, NamedNode, Quad

from acms.errors import UsageError
from acms.sparql import catalog
from acms.sparql.guard import check_query
from acms.store.protocol import GraphStore
from acms.strategies.descriptor import Phase
from acms.strategies.registry import StrategyRegistry
from acms.vocab import GRAPH_META, RDF, TIERS, code_iri_ends, names_end

NAV = "breadth-depth-navigator"


def _quads(store: GraphStore, key: str, bindings: dict | None = None) -> list[Quad]:
    rows = store.select(catalog.text(key), bindings)
    return [Quad(r["s"], r["p"], r["o"], r.get("g", DefaultGraph())) for r in rows]  # type: ignore[arg-type]


@dataclass(frozen=True)
class Graphs:
    """A scope of whole named graphs, read as a stream."""

    graphs: tuple[NamedNode, ...]

    def stream(self, store: GraphStore, predicates: Sequence[NamedNode] | None = None,
               skip_kinds: Collection[str] = ()) -> Iterator[Quad]:
        """All quads, or those with ``predicates``; ``rdf:type`` quads are then read per class, leaving out
        the classes named in ``skip_kinds`` (fragments: half the type quads of an index)."""
        kinds = [r["k"] for r in store.select(catalog.text("export/kinds"), {"g": list(self.graphs)})
                 if r["k"].value.rsplit("#", 1)[-1] not in skip_kinds] if predicates else []
        for graph in self.graphs:
            if predicates is None:
                yield from store.quads(graph)
                continue
            for predicate in predicates:
                if predicate == RDF.type:
                    for kind in kinds:
                        yield from store.quads(graph, predicate, kind)
                else:
                    yield from store.quads(graph, predicate)


def whole() -> Graphs:
    """The tiers and the meta graph (not the ontology)."""
    return Graphs((*TIERS.values(), GRAPH_META))


def tier(name: str) -> Graphs:
    if name not in TIERS:
        raise UsageError(f"unknown tier {name!r}; tiers: {', '.join(TIERS)}")
    return Graphs((TIERS[name],))


def modules(store: GraphStore) -> list[Quad]:
    return _quads(store, "export/modules")


def neighbourhood(store: GraphStore, entity: str, depth: int) -> list[Quad]:
    """The entity (IRI, path, qualified or short name) and everything within ``depth`` structural edges."""
    nav = StrategyRegistry.default().get(NAV)
    resolve = nav.query_text(Phase("graph", 1.0, "resolve-focus.rq"))
    if entity.startswith(("http://", "https://")):
        seeds = [NamedNode(entity)]
    else:
        from pyoxigraph import Literal

        seeds = [r["entity"] for r in store.select(resolve, {"key": Literal(entity)})]  # type: ignore[misc]
        if not seeds and names_end(entity):  # Class.method: by its last part, then the end of the IRI
            seeds = [r["entity"] for r in store.select(resolve, {"key": Literal(entity.rsplit(".", 1)[1])})
                     if code_iri_ends(r["entity"].value, entity)]  # type: ignore[misc]
    if not seeds:
        raise UsageError(f"no entity matches {entity!r} (give an IRI, a path, a qualified name or its end, "
                         "Class.method, or a short name)")
    seen = {s.value: s for s in seeds}
    frontier = list(seeds)
    for _ in range(depth):
        reached: list[NamedNode] = []
        for name in ("neighbors-out.rq", "neighbors-in.rq"):
            for r in store.select(nav.query_text(Phase("graph", 1.0, name)), {"node": frontier}):
                node = r["entity"]
                if isinstance(node, NamedNode) and node.value not in seen:
                    seen[node.value] = node
                    reached.append(node)
        frontier = reached
        if not frontier:
            break
    return _quads(store, "export/describe-nodes", {"node": list(seen.values())})


def construct(store: GraphStore, query: str) -> list[Quad]:
    check_query(query)
    return store.construct(query)


def require(quads: Sequence[Quad]) -> Sequence[Quad]:
    if not quads:
        raise UsageError("the export scope is empty (nothing indexed, or nothing matches)")
    return quads
