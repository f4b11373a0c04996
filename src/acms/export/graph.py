"""A node/edge view of exported quads, and its GraphML, DOT and Cytoscape.js writers.

Nodes are the typed entities (fragments left out: they are text, not structure); edges are the
structural relations between them. Output is written as it is produced; a node cap keeps huge graphs
openable (the dropped count is reported).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TextIO
from xml.sax.saxutils import escape, quoteattr

from pyoxigraph import Literal, NamedNode, Quad

from acms.vocab import RDF, RDFS, UKO, UKO_NS

EDGES = ("contains", "defines", "imports", "calls", "inherits", "references", "documents", "mentions")
_EDGE_IRIS = {UKO[e].value: e for e in EDGES}
_SKIP_KINDS = {"Fragment", "IndexRun", "EmbeddingModel"}


@dataclass
class Node:
    id: str
    kind: str = ""
    label: str = ""
    where: str = ""
    doc: str = ""
    size: int = 1
    tier: str = ""


@dataclass
class GraphView:
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    dropped: int = 0


def _in(iri: str, namespaces: Mapping[str, str]) -> str | None:
    """``prefix:local`` when ``iri`` is in one of the extension namespaces (prefix -> namespace)."""
    for prefix, ns in namespaces.items():
        if iri.startswith(ns) and len(iri) > len(ns):
            return f"{prefix}:{iri[len(ns):]}"
    return None


def build(quads: Sequence[Quad], max_nodes: int, namespaces: Mapping[str, str] | None = None) -> GraphView:
    """``namespaces``: the loaded extensions' (prefix -> namespace); a node typed by an extension class
    takes that class as its kind (``api:Endpoint``, so viewers colour it apart), and the extensions'
    object properties between nodes become edges."""
    view = GraphView()
    props: dict[str, dict[str, str]] = {}
    ext_kinds: dict[str, tuple[str, str]] = {}
    namespaces = namespaces or {}
    for q in quads:
        s = q.subject.value
        ext_kind = _in(q.object.value, namespaces) if q.predicate == RDF.type and isinstance(q.object, NamedNode) else None
        if ext_kind:
            graph = q.graph_name.value if isinstance(q.graph_name, NamedNode) else ""
            ext_kinds.setdefault(s, (ext_kind, graph.rsplit("/", 1)[-1]))
        elif q.predicate == RDF.type and isinstance(q.object, NamedNode) and q.object.value.startswith(UKO_NS):
            kind = q.object.value[len(UKO_NS):]
            if kind not in _SKIP_KINDS:
                graph = q.graph_name.value if isinstance(q.graph_name, NamedNode) else ""
                view.nodes.setdefault(s, Node(s, kind, tier=graph.rsplit("/", 1)[-1]))
        elif isinstance(q.object, Literal):
            key = q.predicate.value[len(UKO_NS):] if q.predicate.value.startswith(UKO_NS) else ""
            props.setdefault(s, {})["rdfs:label" if q.predicate == RDFS.label else key] = q.object.value
    for s, (kind, tier) in ext_kinds.items():
        if s in view.nodes:
            view.nodes[s].kind = kind
        else:
            view.nodes[s] = Node(s, kind, tier=tier)
    for node in view.nodes.values():
        p = props.get(node.id, {})
        node.label = (p.get("qualifiedName") or p.get("name") or p.get("path") or p.get("rdfs:label")
                      or node.id.rsplit("/", 1)[-1])
        node.where = p.get("sourceRef") or p.get("path", "")
        node.doc = (p.get("docstring") or "").strip().split("\n", 1)[0]
        if "startLine" in p and "endLine" in p:
            node.size = int(p["endLine"]) - int(p["startLine"]) + 1
        elif "lineCount" in p:
            node.size = int(p["lineCount"])
    if len(view.nodes) > max_nodes:
        keep = sorted(view.nodes.values(), key=lambda n: (-n.size, n.id))[:max_nodes]
        view.dropped = len(view.nodes) - max_nodes
        view.nodes = {n.id: n for n in keep}
    for q in quads:
        kind = _EDGE_IRIS.get(q.predicate.value) or _in(q.predicate.value, namespaces)
        if kind and q.subject.value in view.nodes and q.object.value in view.nodes:
            view.edges.append((q.subject.value, kind, q.object.value))
    view.edges = sorted(set(view.edges))
    return view


_ATTRS = (("label", "string"), ("kind", "string"), ("where", "string"), ("doc", "string"), ("size", "int"),
          ("tier", "string"))


def write_graphml(view: GraphView, out: TextIO) -> None:
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n')
    for name, typ in _ATTRS:
        out.write(f'  <key id="{name}" for="node" attr.name="{name}" attr.type="{typ}"/>\n')
    out.write('  <key id="relation" for="edge" attr.name="relation" attr.type="string"/>\n')
    out.write('  <graph id="acms" edgedefault="directed">\n')
    for n in sorted(view.nodes.values(), key=lambda n: n.id):
        out.write(f"    <node id={quoteattr(n.id)}>")
        for name, _ in _ATTRS:
            out.write(f'<data key="{name}">{escape(str(getattr(n, name)))}</data>')
        out.write("</node>\n")
    for i, (s, kind, o) in enumerate(view.edges):
        out.write(f'    <edge id="e{i}" source={quoteattr(s)} target={quoteattr(o)}>'
                  f'<data key="relation">{kind}</data></edge>\n')
    out.write("  </graph>\n</graphml>\n")


def _dot_id(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


_COLORS = {"Module": "lightblue", "Class": "gold", "Function": "palegreen", "Method": "lightgreen",
           "File": "lightgrey", "Directory": "white", "DocSection": "pink", "Project": "orange"}


_EXTENSION_COLORS = ("tomato", "orchid", "turquoise", "khaki", "salmon", "plum", "skyblue", "yellowgreen")


def _colours(view: GraphView) -> dict[str, str]:
    """UKO kinds by table; each extension class in the view (``api:Endpoint``) a colour of its own."""
    ext = sorted({n.kind for n in view.nodes.values() if ":" in n.kind})
    return {**_COLORS, **{k: _EXTENSION_COLORS[i % len(_EXTENSION_COLORS)] for i, k in enumerate(ext)}}


def write_dot(view: GraphView, out: TextIO) -> None:
    out.write("digraph acms {\n  rankdir=LR;\n  node [shape=box, style=filled, fontsize=10];\n")
    colours = _colours(view)
    for n in sorted(view.nodes.values(), key=lambda n: n.id):
        out.write(f"  {_dot_id(n.id)} [label={_dot_id(n.label)}, fillcolor={_dot_id(colours.get(n.kind, 'white'))}, "
                  f"tooltip={_dot_id(f'{n.kind} {n.where}')}];\n")
    for s, kind, o in view.edges:
        out.write(f"  {_dot_id(s)} -> {_dot_id(o)} [label={_dot_id(kind)}];\n")
    out.write("}\n")


def write_cytoscape(view: GraphView, out: TextIO) -> None:
    elements = [{"data": {"id": n.id, **{name: getattr(n, name) for name, _ in _ATTRS}}}
                for n in sorted(view.nodes.values(), key=lambda n: n.id)]
    elements += [{"data": {"id": f"e{i}", "source": s, "target": o, "relation": kind}}
                 for i, (s, kind, o) in enumerate(view.edges)]
    json.dump({"elements": elements}, out, indent=1)
    out.write("\n")


def _html(view: GraphView, out: TextIO) -> None:
    from acms.export.html import write_html

    write_html(view, out)


WRITERS = {"graphml": write_graphml, "dot": write_dot, "cytoscape": write_cytoscape, "html": _html}
