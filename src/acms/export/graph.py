"""The GraphML, DOT and Cytoscape.js writers of an export's node/edge view (:mod:`acms.export.view`).

Output is written as it is produced. Every format colours a kind alike (:mod:`acms.export.colours`),
marks edges as directed, and carries each node's containment parent (GraphML ``parent`` data, DOT
clusters are left to the reader, Cytoscape.js compound ``parent``), so a viewer can nest modules in
their packages.
"""

from __future__ import annotations

import json
from typing import TextIO
from xml.sax.saxutils import escape, quoteattr

from acms.export.colours import colours_for
from acms.export.view import GraphView, Node, build

__all__ = ["GraphView", "Node", "WRITERS", "build"]

_ATTRS = (("label", "string"), ("kind", "string"), ("where", "string"), ("doc", "string"), ("size", "int"),
          ("tier", "string"), ("parent", "string"), ("colour", "string"))


def _row(node: Node, colours: dict[str, str]) -> dict[str, object]:
    return {"label": node.label, "kind": node.kind, "where": node.where, "doc": node.doc, "size": node.size,
            "tier": node.tier, "parent": node.parent, "colour": colours.get(node.kind, "#cccccc")}


def write_graphml(view: GraphView, out: TextIO) -> None:
    colours = colours_for(n.kind for n in view.nodes.values())
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n')
    for name, typ in _ATTRS:
        out.write(f'  <key id="{name}" for="node" attr.name="{name}" attr.type="{typ}"/>\n')
    out.write('  <key id="relation" for="edge" attr.name="relation" attr.type="string"/>\n')
    out.write('  <graph id="acms" edgedefault="directed">\n')
    for n in view.nodes.values():
        out.write(f"    <node id={quoteattr(n.id)}>")
        for name, value in _row(n, colours).items():
            out.write(f'<data key="{name}">{escape(str(value))}</data>')
        out.write("</node>\n")
    for i, (s, kind, o) in enumerate(view.edges):
        out.write(f'    <edge id="e{i}" source={quoteattr(s)} target={quoteattr(o)}>'
                  f'<data key="relation">{escape(kind)}</data></edge>\n')
    out.write("  </graph>\n</graphml>\n")


def _dot_id(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def write_dot(view: GraphView, out: TextIO) -> None:
    colours = colours_for(n.kind for n in view.nodes.values())
    out.write("digraph acms {\n  rankdir=LR;\n  node [shape=box, style=filled, fontsize=10];\n")
    for n in view.nodes.values():
        out.write(f"  {_dot_id(n.id)} [label={_dot_id(n.label)}, fillcolor={_dot_id(colours.get(n.kind, '#cccccc'))}, "
                  f"tooltip={_dot_id(f'{n.kind} {n.where}')}];\n")
    for s, kind, o in view.edges:
        out.write(f"  {_dot_id(s)} -> {_dot_id(o)} [label={_dot_id(kind)}];\n")
    out.write("}\n")


def write_cytoscape(view: GraphView, out: TextIO) -> None:
    """Cytoscape.js elements (compound ``parent`` set) and a style that colours kinds and draws arrows."""
    colours = colours_for(n.kind for n in view.nodes.values())
    elements: list[dict[str, object]] = []
    for n in view.nodes.values():
        data = {"id": n.id, **_row(n, colours)}
        if not n.parent:
            del data["parent"]
        elements.append({"data": data})
    elements += [{"data": {"id": f"e{i}", "source": s, "target": o, "relation": kind}}
                 for i, (s, kind, o) in enumerate(view.edges)]
    style = [{"selector": "node", "style": {"background-color": "data(colour)", "label": "data(label)"}},
             {"selector": "edge", "style": {"curve-style": "bezier", "target-arrow-shape": "triangle"}}]
    json.dump({"elements": elements, "style": style}, out, indent=1)
    out.write("\n")


def _html(view: GraphView, out: TextIO) -> None:
    from acms.export.html import write_html

    write_html(view, out)


WRITERS = {"graphml": write_graphml, "dot": write_dot, "cytoscape": write_cytoscape, "html": _html}
