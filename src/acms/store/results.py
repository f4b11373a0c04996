"""The store protocol's query results made from pyoxigraph's objects: ``query_raw`` answers in
:mod:`acms.sparql.results`' containers, so no caller depends on the engine's result classes.

Used by both stores: the embedded one wraps what ``Store.query`` (or a bounded query's child process,
:mod:`acms.sparql.runner`) gives, and the remote one what pyoxigraph's parsers read from the engine's
SPARQL JSON and N-Triples. Rows and triples are made one by one as they are read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

import pyoxigraph as ox

from acms.errors import StoreError
from acms.sparql.results import AskResult, GraphResult, RawResult, SelectResult
from acms.terms import Term

__all__ = ["answer", "graph_result", "parsed_results", "parsed_triples", "select_result"]

TermMap = Callable[[Term], Term]
T = TypeVar("T")


def answer(native: object, term: TermMap | None = None) -> RawResult:
    """A pyoxigraph answer in the protocol's types: solutions, a boolean, or triples (from a query) or
    quads in the default graph (a bounded query's triples read back from N-Triples)."""
    if isinstance(native, ox.QueryBoolean):
        return AskResult(bool(native))
    if isinstance(native, ox.QuerySolutions):
        return select_result(native, term)
    if isinstance(native, ox.QueryTriples):
        return graph_result(native, term)
    if isinstance(native, ox.QuadParser):
        return graph_result((q.triple for q in native), term)
    raise TypeError(f"not a pyoxigraph query answer: {type(native).__name__}")


def select_result(solutions: ox.QuerySolutions, term: TermMap | None = None) -> SelectResult:
    """``term``: a shared store's graph names brought back; without it the untouched answer keeps
    pyoxigraph's native serializer."""
    names = [v.value for v in solutions.variables]
    native = None if term is not None else (lambda fmt: solutions.serialize(format=fmt) or b"")
    return SelectResult.of_solutions(names, solutions, term=term, serialize=native)


def graph_result(triples: Iterable[ox.Triple], term: TermMap | None = None) -> GraphResult:
    if term is None:
        return GraphResult(triples)
    return GraphResult(ox.Triple(term(t.subject), t.predicate, term(t.object))  # type: ignore[arg-type]
                       for t in triples)


def parsed_results(body: bytes, term: TermMap | None = None) -> RawResult:
    """SPARQL JSON results from an engine (SELECT or ASK), parsed by pyoxigraph as they are read; a
    body acms cannot read is a ``StoreError``, when parsing starts or at the row where it fails."""
    try:
        native = ox.parse_query_results(body, format=ox.QueryResultsFormat.JSON)
    except (SyntaxError, ValueError) as exc:
        raise _unreadable(exc) from None
    if isinstance(native, ox.QueryBoolean):
        return AskResult(bool(native))
    names = [v.value for v in native.variables]
    return SelectResult.of_solutions(names, _readable(native), term=term)


def parsed_triples(body: bytes, term: TermMap | None = None) -> GraphResult:
    """An engine's N-Triples answer (CONSTRUCT, DESCRIBE), parsed as it is read."""
    return graph_result(_readable(q.triple for q in ox.parse(body, format=ox.RdfFormat.N_TRIPLES)), term)


def _readable(items: Iterable[T]) -> Iterator[T]:
    try:
        yield from items
    except (SyntaxError, ValueError) as exc:
        raise _unreadable(exc) from None


def _unreadable(exc: Exception) -> StoreError:
    return StoreError(f"the SPARQL store sent results acms cannot read: {exc}")
