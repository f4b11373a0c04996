"""Why a context came back empty, in words the reader can act on.

An empty context with success and no word said looked like "nothing relevant exists" when the real
cause was a misspelt focus, a path filter that matches no file, or a task whose words the index does
not hold. :func:`why_empty` names the cause (with near matches for a focus), and assembly puts the
lines under the document's title and first in the reply's ``metrics.warnings``, so markdown, text,
JSON and the MCP tool all say it.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable, Sequence

from acms.assembly.protocol import RenderRequest
from acms.sparql import catalog
from acms.store.protocol import GraphStore
from acms.text_checks import clip

NEAR_MATCHES = 5
NEAR_CUTOFF = 0.6
SHOWN_CHARS = 80  # of a focus or glob, in a note
FOCUS_NOTES = 3  # focus names given a line (with near matches) each


def _labels(store: GraphStore) -> list[str]:
    return [r["label"].value for r in store.select(catalog.text("assembly/defined-names"))]


def near_matches(focus: str, labels: Sequence[str], n: int = NEAR_MATCHES) -> list[str]:
    """Defined names or paths close to ``focus``: whole labels first, then by their last part (a
    misspelt short name finds ``pkg.mod.Parser.parse_header`` from ``parse_headr``)."""
    key = focus.strip().strip("<>")
    found = []
    if any(sep in key for sep in "./:"):  # a qualified name or a path: compared whole
        found = difflib.get_close_matches(key, _comparable(key, labels), n=n, cutoff=NEAR_CUTOFF)
    if len(found) < n:
        tails: dict[str, list[str]] = {}
        for label in labels:
            tails.setdefault(label.replace("/", ".").rsplit(".", 1)[-1].lower(), []).append(label)
        short = key.replace("/", ".").replace("::", ".").rsplit(".", 1)[-1].lower()
        for tail in difflib.get_close_matches(short, _comparable(short, tails), n=n, cutoff=NEAR_CUTOFF):
            found += sorted(tails[tail], key=len)[: n - len(found)]
    return list(dict.fromkeys(found))[:n]


def _comparable(key: str, labels: Iterable[str]) -> list[str]:
    """The labels whose length allows a similarity of ``NEAR_CUTOFF`` with ``key`` (2·M/(a+b) with
    M <= the shorter length): the others cannot match, and a large project has 10^5 names."""
    ratio = NEAR_CUTOFF / (2 - NEAR_CUTOFF)
    low, high = len(key) * ratio, len(key) / ratio
    return [label for label in labels if low <= len(label) <= high]


def unmatched_focus(request: RenderRequest, warnings: Sequence[str]) -> bool:
    return bool(request.focus) and any(w.startswith("no entity matches focus") for w in warnings)


def focus_notes(request: RenderRequest, store: GraphStore, warnings: Sequence[str], empty: bool) -> list[str]:
    """A line per focus when none matched, with near matches, whether or not the task alone found
    something (a misspelt focus must not pass for a context about it)."""
    if not unmatched_focus(request, warnings):
        return []
    labels = _labels(store)
    notes = []
    for focus in request.focus[:FOCUS_NOTES]:
        near = near_matches(focus, labels)
        hint = f"; did you mean: {', '.join(near)}?" if near else "; no defined name is close to it"
        head = "No context" if empty else "Note"
        tail = "" if empty else " (what follows was found from the task alone)"
        notes.append(f"{head}: the focus {clip(focus, SHOWN_CHARS)!r} matches no entity in the index{hint}{tail}")
    if len(request.focus) > FOCUS_NOTES:
        notes.append(f"… and {len(request.focus) - FOCUS_NOTES} more focus names that match no entity either")
    return notes


def notes_for(request: RenderRequest, store: GraphStore, warnings: Sequence[str], found: int,
              empty: bool) -> list[str]:
    """What the reader is told above the context: an unmatched focus always, and for an empty context
    one line per cause. ``found``: candidates the strategy returned before the request's filters;
    ``warnings``: what the strategy said while running."""
    notes = focus_notes(request, store, warnings, empty)
    if not empty:
        return notes
    globs = request.filters.paths
    if globs:
        paths = [r["path"].value for r in store.select(catalog.text("search/file-paths"))]
        if not any(fnmatch.fnmatch(p, g) for p in paths for g in globs):
            shown = ", ".join(repr(clip(g, SHOWN_CHARS)) for g in globs[:5])
            notes.append(f"No context: the path filter {shown} matches none of the {len(paths):,} indexed files")
    if notes:
        return notes
    if found:
        notes.append(f"No context: the filters left none of the {found:,} candidates "
                     "(languages, classes, tiers, min_score or lod)")
    elif not request.focus:
        notes.append("No context: nothing in the index matches the task's words; name a symbol, a file "
                     "or a phrase from the code, or give a focus")
    else:
        notes.append("No context: the focus entities have no text to show within these settings")
    return notes


__all__ = ["focus_notes", "near_matches", "notes_for"]
