"""A read query's whole answer in a standard serialisation (SPARQL results JSON/CSV/TSV/XML, Turtle,
N-Triples, JSON-LD) or as a table's cells: what ``acms sparql`` prints. (``Index.sparql`` gives a capped
answer as plain data instead.)"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyoxigraph as ox
from pyoxigraph import Literal, NamedNode

from acms.errors import UsageError
from acms.sparql.results import AskResult, GraphResult, RawResult

RESULT_FORMATS = {"json": ox.QueryResultsFormat.JSON, "csv": ox.QueryResultsFormat.CSV,
                  "tsv": ox.QueryResultsFormat.TSV, "xml": ox.QueryResultsFormat.XML}
RDF_FORMATS = {"turtle": ox.RdfFormat.TURTLE, "ntriples": ox.RdfFormat.N_TRIPLES, "jsonld": ox.RdfFormat.JSON_LD}
FORMATS = ["table", *RESULT_FORMATS, *RDF_FORMATS]


@dataclass
class Answer:
    """``form``: select, ask or graph. ``text``: the serialised answer (every format but ``table``);
    ``variables`` and ``rows``: a SELECT's cells for ``table``; ``boolean``: an ASK's answer."""

    form: str
    text: str = ""
    variables: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    boolean: bool | None = None


def _cell(term: Any) -> str:
    if term is None:
        return ""
    return term.value if isinstance(term, (NamedNode, Literal)) else str(term)


def render(result: RawResult, fmt: str, prefixes: dict[str, str]) -> Answer:
    """The answer of one query in ``fmt``; a format of the wrong form is a UsageError."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")
    if isinstance(result, AskResult):
        if fmt in RDF_FORMATS:
            raise UsageError(f"--format {fmt} is for CONSTRUCT/DESCRIBE; use table, json, csv, tsv or xml")
        if fmt in RESULT_FORMATS:
            return Answer("ask", text=result.serialize(RESULT_FORMATS[fmt]).decode("utf-8"), boolean=bool(result))
        return Answer("ask", text="true" if bool(result) else "false", boolean=bool(result))
    if isinstance(result, GraphResult):
        if fmt in RESULT_FORMATS:
            raise UsageError(f"--format {fmt} is for SELECT/ASK; use turtle, ntriples or jsonld")
        rdf_format = RDF_FORMATS.get(fmt, ox.RdfFormat.TURTLE)
        return Answer("graph", text=result.serialize(rdf_format, prefixes).decode("utf-8"))
    if fmt == "table":
        names = list(result.variables)
        return Answer("select", variables=names, rows=[[_cell(r.get(n)) for n in names] for r in result])
    if fmt in RESULT_FORMATS:
        return Answer("select", text=result.serialize(RESULT_FORMATS[fmt]).decode("utf-8"))
    raise UsageError(f"--format {fmt} is for CONSTRUCT/DESCRIBE; use table, json, csv, tsv or xml")
