"""A self-contained HTML view of the graph that opens offline: Cytoscape.js with the fCoSE compound
layout (vendored in ``vendor/`` with their licences, inlined into the page), and the view's own
page, style and script in ``page/``.

The data is embedded as compact JSON (nodes as arrays, edges as a flat list of indices, nodes in
parents-first order) in a ``<script type="application/json">`` tag with ``</`` escaped, so no text from
the code can end the tag. The page opens on the summary level (top-level packages and modules) and
expands on click; every node of the export is in the data, so nothing is lost by summarising.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TextIO

from acms.export.colours import EDGE_COLOURS, colours_for
from acms.export.view import DIRECTED, GraphView

__all__ = ["VENDOR", "write_html"]

VENDOR = ("cytoscape.min.js", "layout-base.js", "cose-base.js", "cytoscape-fcose.js")  # load order


def _read(folder: str, name: str) -> str:
    return resources.files("acms.export").joinpath(folder, name).read_text(encoding="utf-8")


@cache
def _page() -> str:
    vendor = "\n".join(_read("vendor", name) for name in VENDOR)
    page = _read("page", "view.html").replace("__CSS__", _read("page", "view.css"))
    return page.replace("__VENDOR__", vendor.replace("</script", "<\\/script")).replace("__VIEW__", _read("page", "view.js"))


def data(view: GraphView) -> dict[str, object]:
    """The page's data: kinds, tiers and relations by index, nodes as arrays, edges as index triples."""
    colours = colours_for(n.kind for n in view.nodes.values())
    kinds = sorted(colours)
    tiers = sorted({n.tier for n in view.nodes.values() if n.tier})
    rels = sorted({r for _, r, _ in view.edges})
    kind_at, tier_at, rel_at = ({k: i for i, k in enumerate(xs)} for xs in (kinds, tiers, rels))
    index = {iri: i for i, iri in enumerate(view.nodes)}
    nodes = [[n.id, n.label, kind_at[n.kind], index.get(n.parent, -1), n.where, tier_at.get(n.tier, -1), n.size,
              n.doc, n.preview] for n in view.nodes.values()]
    edges = [x for s, r, o in view.edges for x in (index[s], rel_at[r], index[o])]
    return {"kinds": kinds, "colours": [colours[k] for k in kinds], "tiers": tiers, "rels": rels,
            "relColours": [EDGE_COLOURS.get(r, "#9c9c9c") for r in rels],
            "directed": [r in DIRECTED or ":" in r for r in rels], "nodes": nodes, "edges": edges}


def write_html(view: GraphView, out: TextIO, title: str = "project") -> None:
    head, _, tail = _page().replace("__TITLE__", title).partition("__DATA__")
    out.write(head)
    out.write(json.dumps(data(view), ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/"))
    out.write(tail)
