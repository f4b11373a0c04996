"""The node/edge view of an export, built in one pass over a stream of quads.

Nodes are the typed entities (fragments, index runs and embedding models left out: they are text and
bookkeeping, not structure). Each node knows its containment parent (``contains`` / ``defines``), so
viewers can nest packages, modules and their members; a Python file and the module it defines are
one node (the module, with the file's path). Edges are the relations between nodes: code structure
(imports, calls, inherits, references), documentation (documents, mentions), history (a commit
``touches`` what it changed, a version is a ``version of`` its entity, ``ended by`` the commit that
replaced it) and decisions (``about``), plus
the object properties of loaded ontology extensions. A node cap keeps huge graphs openable in viewers
that need one (the dropped count is reported).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pyoxigraph import Literal, NamedNode, Quad

from acms.vocab import PROV, RDF, RDFS, UKO, UKO_NS, fragment_owner

__all__ = ["DIRECTED", "EDGE_PREDICATES", "GraphView", "Node", "PREDICATES", "SKIP_KINDS", "build"]

# relation name by predicate; structural ones also give the child's parent
_STRUCTURE = {UKO.contains.value: "contains", UKO.defines.value: "defines"}
EDGE_PREDICATES: dict[str, str] = {
    **_STRUCTURE,
    UKO.imports.value: "imports", UKO.calls.value: "calls", UKO.inherits.value: "inherits",
    UKO.references.value: "references", UKO.documents.value: "documents", UKO.mentions.value: "mentions",
    UKO.touches.value: "touches", PROV.specializationOf.value: "version of", UKO.supersededBy.value: "superseded by",
    PROV.wasInvalidatedBy.value: "ended by", PROV.wasRevisionOf.value: "revision of",
    PROV.wasInformedBy.value: "follows", UKO.about.value: "about", UKO.plan.value: "plan",
    UKO.parentPlan.value: "plan",
}
DIRECTED = frozenset(EDGE_PREDICATES.values())  # every relation acms draws reads from subject to object
_LITERALS = {p: p[len(UKO_NS):] for p in (UKO.qualifiedName.value, UKO.name.value, UKO.path.value,
                                         UKO.sourceRef.value, UKO.docstring.value, UKO.lineCount.value,
                                         UKO.message.value, UKO.title.value, UKO.text.value)}
_LITERALS[RDFS.label.value] = "label"
# every predicate the view reads: a whole-store export pulls only these (not vectors, hashes, line numbers
# that sourceRef already holds, or the hasFragment links that fragment IRIs already hold)
PREDICATES: tuple[NamedNode, ...] = tuple(NamedNode(p) for p in (RDF.type.value, *EDGE_PREDICATES, *_LITERALS))
SKIP_KINDS = frozenset({"Fragment", "IndexRun", "EmbeddingModel"})  # text and bookkeeping, not structure
_PREVIEW_LINES, _PREVIEW_CHARS = 12, 600
_LOD_RANK = {"micro": 0, "atomic": 1, "macro": 2}
_FRAGMENT = "/frag/"


@dataclass
class Node:
    id: str
    kind: str = ""
    label: str = ""
    where: str = ""
    doc: str = ""
    size: int = 1
    tier: str = ""
    parent: str = ""
    preview: str = ""


@dataclass
class GraphView:
    nodes: dict[str, Node] = field(default_factory=dict)  # parents before their children
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    dropped: int = 0


def _in(iri: str, namespaces: Mapping[str, str]) -> str | None:
    """``prefix:local`` when ``iri`` is in one of the extension namespaces (prefix -> namespace)."""
    for prefix, ns in namespaces.items():
        if iri.startswith(ns) and len(iri) > len(ns):
            return f"{prefix}:{iri[len(ns):]}"
    return None


def _lines(source_ref: str) -> int:
    """The line count of ``path:start-end`` (0 when it does not say)."""
    start, _, end = source_ref.rpartition(":")[2].partition("-")
    return int(end) - int(start) + 1 if start.isdigit() and end.isdigit() else 0


def _preview(text: str) -> str:
    lines = text.split("\n", _PREVIEW_LINES)[:_PREVIEW_LINES]
    out = "\n".join(lines)
    return out[:_PREVIEW_CHARS] + ("\n…" if len(out) > _PREVIEW_CHARS or text.count("\n") >= _PREVIEW_LINES else "")


class _Builder:
    def __init__(self, namespaces: Mapping[str, str]) -> None:
        self.namespaces = namespaces
        self.kinds: dict[str, tuple[str, str]] = {}  # id -> (kind, tier)
        self.ext_kinds: dict[str, tuple[str, str]] = {}
        self.props: dict[str, dict[str, str]] = {}
        self.previews: dict[str, tuple[int, str]] = {}  # fragment owner key -> (lod rank, preview)
        self.edges: set[tuple[str, str, str]] = set()

    def add(self, q: Quad) -> None:
        p, s, o = q.predicate.value, q.subject.value, q.object
        if p == RDF.type.value:
            if isinstance(o, NamedNode):
                tier = q.graph_name.value.rsplit("/", 1)[-1] if isinstance(q.graph_name, NamedNode) else ""
                ext = _in(o.value, self.namespaces)
                if ext:
                    self.ext_kinds.setdefault(s, (ext, tier))
                elif o.value.startswith(UKO_NS) and o.value[len(UKO_NS):] not in SKIP_KINDS:
                    self.kinds.setdefault(s, (o.value[len(UKO_NS):], tier))
        elif isinstance(o, Literal):
            key = _LITERALS.get(p)
            if _FRAGMENT in s:  # a fragment: only its text, as its entity's preview (the best level of detail)
                if key == "text":
                    parts = s.rsplit("/", 3)  # …/frag/<owner>/<lod>/<hash>
                    rank = _LOD_RANK.get(parts[-2], 3)
                    if rank < self.previews.get(parts[-3], (9, ""))[0]:
                        self.previews[parts[-3]] = (rank, _preview(o.value))
            elif key:
                self.props.setdefault(s, {})[key] = o.value
        else:
            relation = EDGE_PREDICATES.get(p) or _in(p, self.namespaces)
            if relation:
                self.edges.add((s, relation, o.value))

    def _node(self, iri: str, kind: str, tier: str) -> Node:
        p = self.props.get(iri, {})
        node = Node(iri, kind, tier=tier)
        node.label = (p.get("qualifiedName") or p.get("name") or p.get("path") or p.get("title")
                      or (p.get("message", "").split("\n", 1)[0][:80] if kind == "Change" else "")
                      or p.get("label") or iri.rsplit("/", 1)[-1])
        node.where = p.get("sourceRef") or p.get("path", "")
        node.doc = (p.get("docstring") or "").strip().split("\n", 1)[0]
        node.size = _lines(p.get("sourceRef", "")) or int(p.get("lineCount", 1) or 1)
        node.preview = self.previews.get(fragment_owner(iri), (0, ""))[1]
        return node

    def finish(self, max_nodes: int) -> GraphView:
        view = GraphView()
        typed = {**self.kinds, **self.ext_kinds}
        nodes = {iri: self._node(iri, kind, tier) for iri, (kind, tier) in typed.items()}
        # a Python file and the one module it defines are one node: the module, with the file's path
        alias: dict[str, str] = {}
        ordered = sorted(self.edges)
        for s, relation, o in ordered:
            if relation == "defines" and nodes.get(s, Node("")).kind == "File" and nodes.get(o, Node("")).kind == "Module":
                alias[s] = o
                nodes[o].where = nodes[s].where or nodes[o].where
                nodes[o].size = max(nodes[o].size, nodes[s].size)
        for file in alias:
            del nodes[file]
        edges: set[tuple[str, str, str]] = set()
        for s, relation, o in ordered:
            s, o = alias.get(s, s), alias.get(o, o)
            if s == o or s not in nodes or o not in nodes:
                continue
            if relation in ("contains", "defines"):
                nodes[o].parent = nodes[o].parent or s
            edges.add((s, relation, o))
        if len(nodes) > max_nodes:
            keep = sorted(nodes.values(), key=lambda n: (-n.size, n.id))[:max_nodes]
            view.dropped = len(nodes) - max_nodes
            nodes = {n.id: n for n in keep}
            edges = {e for e in edges if e[0] in nodes and e[2] in nodes}
        for node in nodes.values():
            if node.parent not in nodes:
                node.parent = ""
        view.nodes = _parents_first(nodes)
        view.edges = sorted(edges)
        return view


def _parents_first(nodes: dict[str, Node]) -> dict[str, Node]:
    children: dict[str, list[str]] = {}
    for node in sorted(nodes.values(), key=lambda n: (n.label, n.id)):
        children.setdefault(node.parent, []).append(node.id)
    out: dict[str, Node] = {}
    todo = list(reversed(children.get("", [])))
    while todo:
        iri = todo.pop()
        if iri in out:
            continue
        out[iri] = nodes[iri]
        todo.extend(reversed(children.get(iri, [])))
    for iri, node in nodes.items():  # a containment cycle (never written by acms): keep its nodes anyway
        if iri not in out:
            node.parent = ""
            out[iri] = node
    return out


def build(quads: Iterable[Quad], max_nodes: int, namespaces: Mapping[str, str] | None = None) -> GraphView:
    """The view of ``quads`` (read once, as they stream); ``namespaces`` maps the loaded extensions'
    prefixes to their namespaces: their classes become kinds and their object properties edges."""
    builder = _Builder(namespaces or {})
    for q in quads:
        builder.add(q)
    return builder.finish(max_nodes)
