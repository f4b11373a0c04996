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

from acms.vocab import PROV, RDF, RDFS, UKO, UKO_NS

__all__ = ["DIRECTED", "EDGE_PREDICATES", "GraphView", "Node", "PREDICATES", "build"]

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
                                         UKO.sourceRef.value, UKO.docstring.value, UKO.startLine.value,
                                         UKO.endLine.value, UKO.lineCount.value, UKO.message.value,
                                         UKO.title.value, UKO.commitHash.value, UKO.text.value, UKO.lod.value,
                                         UKO.signature.value)}
_LITERALS[RDFS.label.value] = "label"
# every predicate the view reads: a whole-store export pulls only these (not vectors or hashes)
PREDICATES: tuple[NamedNode, ...] = tuple(NamedNode(p) for p in (RDF.type.value, UKO.hasFragment.value,
                                                                  *EDGE_PREDICATES, *_LITERALS))
_SKIP_KINDS = {"Fragment", "IndexRun", "EmbeddingModel"}
_PREVIEW_LINES, _PREVIEW_CHARS = 14, 900
_LOD_RANK = {"micro": 0, "atomic": 1, "macro": 2}


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
        self.fragments: dict[str, list[str]] = {}  # entity -> fragment ids
        self.edges: set[tuple[str, str, str]] = set()

    def add(self, q: Quad) -> None:
        p, s, o = q.predicate.value, q.subject.value, q.object
        if p == RDF.type.value:
            if isinstance(o, NamedNode):
                tier = q.graph_name.value.rsplit("/", 1)[-1] if isinstance(q.graph_name, NamedNode) else ""
                ext = _in(o.value, self.namespaces)
                if ext:
                    self.ext_kinds.setdefault(s, (ext, tier))
                elif o.value.startswith(UKO_NS) and o.value[len(UKO_NS):] not in _SKIP_KINDS:
                    self.kinds.setdefault(s, (o.value[len(UKO_NS):], tier))
        elif isinstance(o, Literal):
            key = _LITERALS.get(p)
            if key == "text":
                self.props.setdefault(s, {})["text"] = _preview(o.value)
            elif key:
                self.props.setdefault(s, {})[key] = o.value
        elif p == UKO.hasFragment.value:
            self.fragments.setdefault(s, []).append(o.value)
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
        node.doc = (p.get("docstring") or p.get("signature") or "").strip().split("\n", 1)[0]
        if "startLine" in p and "endLine" in p:
            node.size = int(p["endLine"]) - int(p["startLine"]) + 1
        elif "lineCount" in p:
            node.size = int(p["lineCount"])
        frags = sorted(self.fragments.get(iri, ()), key=lambda f: _LOD_RANK.get(self.props.get(f, {}).get("lod", ""), 3))
        node.preview = next((self.props[f]["text"] for f in frags if "text" in self.props.get(f, {})), "")
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
