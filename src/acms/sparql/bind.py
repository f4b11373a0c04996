"""Bind parameters into a query as an inline ``VALUES`` block built from typed RDF terms.

pyoxigraph's ``substitutions`` only binds variables that appear in the SELECT projection (measured,
0.5.13), so parameters travel as ``VALUES`` at the head of the WHERE group, where they seed the join.
Terms are written with pyoxigraph's own N-Triples serialisation; user text is never pasted as syntax.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pyoxigraph import BlankNode, Literal, NamedNode

from acms.terms import Term

from acms.errors import QuerySyntaxError, UsageError
from acms.sparql.guard import scan

_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_WHERE = re.compile(r"\bWHERE\s*\{", re.IGNORECASE)


def values_block(bindings: Mapping[str, Sequence[Term] | Term]) -> str:
    """One VALUES row per value; several parameters must have the same number of values."""
    names = list(bindings)
    columns: list[list[Term]] = []
    for name in names:
        if not _VAR.match(name):
            raise UsageError(f"invalid parameter name {name!r}")
        value = bindings[name]
        columns.append([value] if isinstance(value, (NamedNode, Literal, BlankNode)) else list(value))
    lengths = {len(c) for c in columns}
    if len(lengths) > 1:
        raise UsageError("bound parameters must have the same number of values")
    rows = zip(*columns) if columns else []
    head = " ".join(f"?{n}" for n in names)
    body = " ".join("(" + " ".join(_term(t) for t in row) + ")" for row in rows)
    return f"VALUES ({head}) {{ {body} }}"


def _term(term: Term) -> str:
    if isinstance(term, BlankNode):
        raise UsageError("blank nodes cannot be bound as parameters")
    return str(term)


def bind(query: str, bindings: Mapping[str, Sequence[Term] | Term] | None) -> str:
    """Insert the VALUES block just inside the first WHERE group (or the first group if no WHERE)."""
    if not bindings:
        return query
    code = scan(query).code
    m = _WHERE.search(code)
    pos = m.end() if m else code.find("{") + 1
    if pos <= 0:
        raise QuerySyntaxError("cannot bind parameters: the query has no WHERE group")
    return f"{query[:pos]} {values_block(bindings)} {query[pos:]}"
