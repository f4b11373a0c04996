"""Which unchanged files must be linked again because the names around them changed.

A file's edges depend on its own text and on which qualified names exist elsewhere: when a run adds,
removes or renames a symbol (or a file: its module), an unchanged file that calls, imports or
inherits it may now resolve to another target, or to one it could not reach before. A first index
would link it anew, so an incremental run must too. Which files could be affected is told by their
text: a reference to a symbol names it, so every file that mentions a moved name as a whole word is
extracted and linked again (more than needed at worst, never fewer; a body edit moves no name and
costs nothing here). Only files a resolver links by name are looked at
(:func:`acms.ingest.resolve.links_by_name`): a document or a configuration file that mentions the name
has no link that could change.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from acms.ingest.walker import ListedFile, SkipReason, read_source

__all__ = ["mentioning", "moved_names"]

_SEPARATORS = re.compile(r"[./:\\#]+")
_WORDS_AT_ONCE = 512  # names per alternation: one regex over thousands of names compiles slowly


def short_name(qualname: str) -> str:
    """The last segment of a qualified name (``pkg.mod.Class.method`` -> ``method``, ``src/utils`` -> ``utils``)."""
    parts = [p for p in _SEPARATORS.split(qualname) if p]
    return parts[-1] if parts else ""


def moved_names(before: Collection[str], after: Collection[str]) -> set[str]:
    """Short names of the qualified names only one side has (added, removed, renamed, moved)."""
    return {name for qn in set(before) ^ set(after) if (name := short_name(qn))}


def mentioning(files: Iterable[ListedFile], names: Collection[str], max_bytes: int | None = None) -> list[str]:
    """Paths of the files whose text mentions one of ``names`` as a whole word, and of those that cannot
    be read as text any more (the caller's read skips them with their reason)."""
    if not names:
        return []
    ordered = sorted(names)
    patterns = [re.compile(r"(?<![\w$])(?:" + "|".join(map(re.escape, ordered[i : i + _WORDS_AT_ONCE])) + r")(?![\w$])")
                for i in range(0, len(ordered), _WORDS_AT_ONCE)]
    found = []
    for f in files:
        got = read_source(f, max_bytes)
        if isinstance(got, SkipReason) or any(p.search(got.text) for p in patterns):
            found.append(f.path)
    return found
