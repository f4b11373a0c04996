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
from acms.vocab import XSD

_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_WHERE = re.compile(r"\bWHERE\s*\{", re.IGNORECASE)


def values_block(bindings: Mapping[str, Sequence[Term] | Sequence[tuple[Term, ...]] | Term]) -> str:
    """One VALUES block per parameter: a parameter with several values joins as their union, and
    several parameters combine as the cross product of their values.

    A key naming several variables (``"frag kw vec"``) binds rows: ``VALUES (?frag ?kw ?vec) { … }``
    with one tuple of terms per row, so per-row values (a candidate and its scores) travel together.
    """
    blocks = []
    for name, value in bindings.items():
        names = name.split()
        if not names or not all(_VAR.match(n) for n in names):
            raise UsageError(f"invalid parameter name {name!r}")
        if len(names) > 1:
            rows = list(value)  # type: ignore[arg-type]
            if any(not isinstance(r, tuple) or len(r) != len(names) for r in rows):
                raise UsageError(f"parameter {name!r} takes rows of {len(names)} terms")
            body = " ".join("(" + " ".join(_term(t) for t in r) + ")" for r in rows)  # type: ignore[union-attr]
            blocks.append(f"VALUES ({' '.join('?' + n for n in names)}) {{ {body} }}")
            continue
        terms = [value] if isinstance(value, (NamedNode, Literal, BlankNode)) else list(value)  # type: ignore[arg-type]
        blocks.append(f"VALUES ?{name} {{ {' '.join(_term(t) for t in terms)} }}")  # type: ignore[arg-type]
    return " ".join(blocks)


def _term(term: Term) -> str:
    if isinstance(term, BlankNode):
        raise UsageError("blank nodes cannot be bound as parameters")
    return str(term)


def bind(query: str, bindings: Mapping[str, Sequence[Term] | Sequence[tuple[Term, ...]] | Term] | None) -> str:
    """Insert the VALUES block just inside the first WHERE group (or the first group if no WHERE)."""
    if not bindings:
        return query
    code = scan(query).code
    m = _WHERE.search(code)
    pos = m.end() if m else code.find("{") + 1
    if pos <= 0:
        raise QuerySyntaxError("cannot bind parameters: the query has no WHERE group")
    return f"{query[:pos]} {values_block(bindings)} {query[pos:]}"


def term_from_text(name: str, value: str) -> Term:
    """A parameter value typed as text: ``<iri>`` is an IRI, an integer is xsd:integer, ``0.8`` xsd:decimal, anything else a
    string (``--bind name=value`` and the MCP ``explore`` tool)."""
    if value.startswith("<") and value.endswith(">"):
        try:
            return NamedNode(value[1:-1])
        except ValueError:
            raise UsageError(f"parameter {name}: invalid IRI {value}") from None
    if re.fullmatch(r"-?\d+", value):
        return Literal(value, datatype=XSD.integer)
    if re.fullmatch(r"-?\d+\.\d+", value):
        return Literal(value, datatype=XSD.decimal)
    return Literal(value)
