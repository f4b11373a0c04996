"""One colour per kind, the same in every viewer format (GraphML, DOT, Cytoscape JSON, the HTML view).

UKO kinds have fixed colours (a qualitative palette, no two alike); each extension class in a view
(``api:Endpoint``) gets one of the extension colours, in sorted order, so the same export gives the
same colours every time.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["EDGE_COLOURS", "KIND_COLOURS", "colours_for"]

KIND_COLOURS: dict[str, str] = {
    "Project": "#3b3b3b",
    "Directory": "#bab0ac",
    "File": "#9c755f",
    "Module": "#4e79a7",
    "Class": "#f28e2b",
    "Function": "#59a14f",
    "Method": "#76b7b2",
    "DocSection": "#ff9da7",
    "Change": "#e15759",
    "Version": "#b07aa1",
    "Decision": "#edc948",
    "Plan": "#d37295",
}
_EXTENSION_COLOURS = ("#17becf", "#bcbd22", "#8c564b", "#aec7e8", "#ffbb78", "#98df8a", "#c5b0d5", "#7f7f7f")
_UNKNOWN = "#cccccc"

EDGE_COLOURS: dict[str, str] = {
    "imports": "#4e79a7", "calls": "#59a14f", "inherits": "#f28e2b", "references": "#9c9c9c",
    "documents": "#ff9da7", "mentions": "#f4bfc7", "touches": "#e15759", "version of": "#b07aa1",
    "superseded by": "#b07aa1", "ended by": "#e15759", "revision of": "#b07aa1", "follows": "#e15759", "about": "#edc948", "plan": "#d37295",
    "contains": "#bab0ac", "defines": "#bab0ac",
}


def colours_for(kinds: Iterable[str]) -> dict[str, str]:
    """The colour of each kind given (UKO kinds by table, extension kinds by order)."""
    kinds = set(kinds)
    extension = sorted(k for k in kinds if k not in KIND_COLOURS)
    out = {k: KIND_COLOURS[k] for k in kinds if k in KIND_COLOURS}
    for i, kind in enumerate(extension):
        out[kind] = _EXTENSION_COLOURS[i] if i < len(_EXTENSION_COLOURS) else _UNKNOWN
    return out
