"""Any SPARQL result as plain data with a row cap: what ``Index.sparql`` and the MCP tools return.

pyoxigraph evaluates lazily, so cutting the iterator at ``max_rows`` (LIMIT cannot be bound) also
stops the work for streaming queries. Cells are the terms' lexical values (an IRI's text, a
literal's text), which is what a reader or a model wants; CONSTRUCT/DESCRIBE give N-Triples lines.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from itertools import islice
from typing import Any

import pyoxigraph as ox

from acms.errors import query_failed

DEFAULT_MAX_ROWS = 1000


@dataclass
class QueryResult:
    form: str  # "select" | "ask" | "graph" (CONSTRUCT / DESCRIBE)
    variables: list[str] = field(default_factory=list)
    rows: list[dict[str, str]] = field(default_factory=list)
    boolean: bool | None = None
    triples: list[str] = field(default_factory=list)
    truncated: bool = False  # more rows or triples than max_rows existed

    def as_dict(self) -> dict[str, Any]:
        """Only the fields of this form."""
        data = asdict(self)
        keep = {"select": ("variables", "rows"), "ask": ("boolean",), "graph": ("triples",)}[self.form]
        return {"form": self.form, **{k: data[k] for k in keep}, "truncated": self.truncated}


def _text(term: object) -> str:
    value = getattr(term, "value", None)
    return value if isinstance(value, str) else str(term)  # a quoted triple has no single value


def collect(result: object, max_rows: int = DEFAULT_MAX_ROWS) -> QueryResult:
    """At most ``max_rows`` rows or triples of a pyoxigraph result."""
    try:
        if isinstance(result, ox.QueryBoolean):
            return QueryResult("ask", boolean=bool(result))
        if isinstance(result, ox.QuerySolutions):
            names = [v.value for v in result.variables]
            taken = list(islice(result, max_rows + 1))
            rows = [{n: _text(s[n]) for n in names if s[n] is not None} for s in taken[:max_rows]]
            return QueryResult("select", variables=names, rows=rows, truncated=len(taken) > max_rows)
        taken_triples = list(islice(result, max_rows + 1))  # type: ignore[call-overload]
        lines = [f"{t.subject} {t.predicate} {t.object} ." for t in taken_triples[:max_rows]]
        return QueryResult("graph", triples=lines, truncated=len(taken_triples) > max_rows)
    except (OSError, RuntimeError) as exc:
        raise query_failed(exc) from None
