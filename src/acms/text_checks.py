"""Text that may not cross an edge: control characters, NUL bytes, lone surrogates, broken IRIs.

Every edge (CLI arguments, ``render_request.v0`` bodies, endpoint parameters) checks its strings
here and answers with one line naming the field, instead of letting a NUL byte reach the store or a
lone surrogate (an undecodable command-line byte) crash an encoder deep inside.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

__all__ = ["bad_iri", "text_problem", "walk_strings"]

# C0 controls other than tab, newline and carriage return; DEL; C1 controls; lone surrogates.
_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f\ud800-\udfff]")


def text_problem(value: str) -> str | None:
    """Why ``value`` may not be used, or None."""
    m = _BAD.search(value)
    if m is None:
        return None
    ch = m.group()
    what = "a lone surrogate (text that is not valid Unicode)" if "\ud800" <= ch <= "\udfff" else "a control character"
    return f"contains {what} U+{ord(ch):04X} at position {m.start() + 1}"


def bad_iri(value: str) -> str | None:
    """Why ``value`` is not an IRI pyoxigraph accepts, or None."""
    from pyoxigraph import NamedNode

    try:
        NamedNode(value)
    except ValueError as exc:
        return f"is not a valid IRI ({exc})"
    return None


def walk_strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string inside nested dicts, lists and tuples, with its field path (``focus[0]``)."""
    if isinstance(value, str):
        yield path or "(value)", value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from walk_strings(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from walk_strings(v, f"{path}[{i}]")
