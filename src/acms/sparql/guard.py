"""Checks on untrusted query text, before it reaches pyoxigraph's parser.

Measured here (pyoxigraph 0.5.13): ``SERVICE <http://…>`` makes a real outbound request, and about
2,150 nested ``{`` crash the whole process while parsing. So query text from a user is scanned first:
SERVICE is refused unless allowed, and length and nesting depth are capped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from acms.errors import QueryRejected

MAX_QUERY_CHARS = 100_000
MAX_NESTING = 64

_WORD = re.compile(r"[A-Za-z_]+")


@dataclass(frozen=True)
class ScannedQuery:
    """Query text with strings, IRIs and comments blanked out, so keywords can be found safely."""

    code: str
    max_depth: int


def scan(text: str) -> ScannedQuery:
    out: list[str] = []
    depth = max_depth = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
            continue
        if c in "\"'":
            quote = c * 3 if text.startswith(c * 3, i) else c
            j = i + len(quote)
            while j < n and not text.startswith(quote, j):
                j += 2 if text[j] == "\\" else 1
            j = min(n, j + len(quote))
            out.append(" " * (j - i))
            i = j
            continue
        if c == "<":
            m = re.match(r"<[^<>\"{}|^`\\\s]*>", text[i:])
            if m:
                out.append(" " * m.end())
                i += m.end()
                continue
        if c in "{(":
            depth += 1
            max_depth = max(max_depth, depth)
        elif c in "})":
            depth -= 1
        out.append(c)
        i += 1
    return ScannedQuery("".join(out), max_depth)


def check_query(text: str, *, allow_service: bool = False) -> ScannedQuery:
    """Refuse what would hurt: SERVICE (unless allowed), over-long and over-nested text."""
    if len(text) > MAX_QUERY_CHARS:
        raise QueryRejected(f"query is {len(text):,} characters; the limit is {MAX_QUERY_CHARS:,}")
    scanned = scan(text)
    if scanned.max_depth > MAX_NESTING:
        raise QueryRejected(
            f"query nests {scanned.max_depth} levels of braces/parentheses; the limit is {MAX_NESTING}"
        )
    if not allow_service and any(w.upper() == "SERVICE" for w in _WORD.findall(scanned.code)):
        raise QueryRejected(
            "SERVICE is refused: it would make the store call a remote endpoint "
            "(pass --allow-service to permit it)"
        )
    return scanned


UPDATE_WORDS = frozenset({"INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "WITH"})
READ_ONLY = "read-only: updates are not allowed here"


def is_update(text: str) -> bool:
    """Whether ``text`` is a SPARQL update: its first keyword after the prologue (BASE, PREFIX) is an
    update's. The parser of queries would only say "expected CONSTRUCT" about it."""
    words = scan(text).code.split()
    i = 0
    while i < len(words) and words[i].upper() in ("PREFIX", "BASE"):
        i += 2 if words[i].upper() == "PREFIX" else 1
    first = _WORD.match(words[i]) if i < len(words) else None
    return first is not None and first.group().upper() in UPDATE_WORDS


def refuse_update(text: str, where: str = "") -> None:
    """Refuse an update where only queries run (``acms sparql``, the MCP tool, ``query=`` on /sparql)."""
    if is_update(text):
        raise QueryRejected(f"{READ_ONLY}{where}")
