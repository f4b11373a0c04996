"""The SPARQL 1.1 Protocol, as the endpoint reads requests and answers them (``/sparql``).

Operations (https://www.w3.org/TR/sparql11-protocol/):

- query: ``GET ?query=``, ``POST`` form (``application/x-www-form-urlencoded``, ``query=``) or ``POST``
  ``application/sparql-query``; ``default-graph-uri`` / ``named-graph-uri`` set the dataset, and
  ``union-default-graph`` makes the default graph the union of every graph. Without them (and without
  ``FROM`` in the query) the default graph is the server's ``--default-graph`` (:mod:`acms.sparql.dataset`):
  the current tiers unless configured otherwise;
- update: ``POST`` form ``update=`` or ``application/sparql-update``; refused (403) unless the server
  was started with ``allow_update``. Each update is one pyoxigraph transaction under the index's
  exclusive lock. ``LOAD`` is refused as well: like ``SERVICE`` it makes pyoxigraph fetch a URL.
- ``GET`` without ``query`` returns the SPARQL 1.1 Service Description (:mod:`acms.server.service`).

Results by ``Accept`` (q-values honoured, ``*/*`` gives the default, nothing acceptable gives 406):
SELECT and ASK as ``application/sparql-results+json`` (default), ``application/sparql-results+xml``,
``text/csv``, ``text/tab-separated-values``; CONSTRUCT and DESCRIBE as ``text/turtle`` (default),
``application/n-triples``, ``application/rdf+xml`` (what rdflib's ``SPARQLStore`` asks for) or
``application/ld+json``. Every byte is written by pyoxigraph's own serializers.

Untrusted text: every query and update goes through :func:`acms.sparql.guard.check_query` before it
reaches the parser (SERVICE unless ``--allow-service``, over-long or over-nested text: 400); a syntax
error is a 400 with the parser's message, its positions counted in the client's text (prefixes are
passed to pyoxigraph as ``prefixes=``, not pasted in front). Request bodies are capped at
``MAX_BODY_BYTES`` (413).

Evaluation runs in worker processes (:mod:`acms.server.workers`) that are terminated at the deadline,
so a query past ``--query-timeout`` stops using CPU at once. Inside the worker, results are consumed
one row at a time and cut at ``max_rows`` (413). A SELECT result is handed back to pyoxigraph as TSV
(each term in pyoxigraph's own N-Triples form) and re-serialized by
``parse_query_results(...).serialize(format)``: exact, ≈70 ms instead of ≈28 ms for 10k rows x 4
variables. CONSTRUCT triples stream from the row-checking generator into ``pyoxigraph.serialize``.
"""

from __future__ import annotations

import re
import time
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import pyoxigraph as ox
from starlette.requests import Request

from acms.errors import AcmsError, QueryRejected, query_failed
from acms.sparql.dataset import DefaultGraph, dataset_arguments
from acms.sparql.guard import check_query, refuse_update, scan
from acms.store.protocol import GraphStore

MAX_BODY_BYTES = 2 * 1024 * 1024  # a query is capped at 100,000 characters; form encoding can triple it

JSON_RESULTS = "application/sparql-results+json"
TURTLE = "text/turtle"
RESULT_FORMATS: Mapping[str, ox.QueryResultsFormat] = {
    JSON_RESULTS: ox.QueryResultsFormat.JSON,
    "application/json": ox.QueryResultsFormat.JSON,
    "application/sparql-results+xml": ox.QueryResultsFormat.XML,
    "application/xml": ox.QueryResultsFormat.XML,
    "text/csv": ox.QueryResultsFormat.CSV,
    "text/tab-separated-values": ox.QueryResultsFormat.TSV,
}
GRAPH_FORMATS: Mapping[str, ox.RdfFormat] = {
    TURTLE: ox.RdfFormat.TURTLE,
    "application/n-triples": ox.RdfFormat.N_TRIPLES,
    "application/rdf+xml": ox.RdfFormat.RDF_XML,
    "application/ld+json": ox.RdfFormat.JSON_LD,
}
# Answer with the canonical media type of the format chosen (an alias in Accept gets the real one).
CANONICAL: Mapping[str, str] = {"application/json": JSON_RESULTS, "application/xml": "application/sparql-results+xml"}

_WORD = re.compile(r"[A-Za-z_]+")
_CLI_HINT = "pass --allow-service to permit it"
UPDATE_HINT = " as a query; send it as the 'update' parameter or as application/sparql-update"

FORM = "application/x-www-form-urlencoded"
SPARQL_QUERY = "application/sparql-query"
SPARQL_UPDATE = "application/sparql-update"


class ProtocolError(Exception):
    """An HTTP-level refusal: the status and a one-line message sent as ``text/plain``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:  # crosses from a worker process
        return (type(self), (self.status, self.message))


class Kind(str, Enum):
    QUERY = "query"
    UPDATE = "update"


@dataclass(frozen=True)
class Operation:
    """A query or an update as the protocol delivered it."""

    kind: Kind
    text: str
    default_graphs: tuple[ox.NamedNode, ...] = ()
    named_graphs: tuple[ox.NamedNode, ...] = ()
    union_default_graph: bool = False  # the request's ``union-default-graph`` parameter


@dataclass(frozen=True)
class Answer:
    body: bytes
    media_type: str


@dataclass(frozen=True)
class Limits:
    """What the server allows: set once, from ``acms serve``'s options."""

    timeout_s: float = 10.0
    max_rows: int = 10_000
    allow_update: bool = False
    allow_service: bool = False
    default_graph: DefaultGraph = DefaultGraph.CURRENT


# -- reading the request ----------------------------------------------------------------------------
async def read_body(request: Request, limit: int = MAX_BODY_BYTES) -> bytes:
    """The request body, refused with 413 past ``limit`` bytes (without reading all of it)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ProtocolError(413, f"request body of {int(declared):,} bytes is over the {limit:,}-byte limit")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ProtocolError(413, f"request body is over the {limit:,}-byte limit")
        chunks.append(chunk)
    return b"".join(chunks)


def _decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(400, f"{what} is not valid UTF-8") from None


def _one(params: Mapping[str, list[str]], name: str) -> str | None:
    values = params.get(name, [])
    if len(values) > 1:
        raise ProtocolError(400, f"give one '{name}' parameter, not {len(values)}")
    return values[0] if values else None


def _graphs(params: Mapping[str, list[str]], name: str) -> tuple[ox.NamedNode, ...]:
    out = []
    for iri in params.get(name, []):
        try:
            out.append(ox.NamedNode(iri))
        except ValueError:
            raise ProtocolError(400, f"{name}: not a valid IRI: {iri!r}") from None
    return tuple(out)


def parse_operation(method: str, url_params: Mapping[str, list[str]], content_type: str, body: bytes) -> Operation:
    """The operation of a protocol request (GET query string, form body, or a direct POST body)."""
    params: dict[str, list[str]] = {k: list(v) for k, v in url_params.items()}
    media = content_type.split(";")[0].strip().lower()
    direct: tuple[Kind, str] | None = None
    if method == "POST":
        if media == FORM:
            form = urllib.parse.parse_qs(_decode(body, "the form body"), keep_blank_values=True)
            for key, values in form.items():
                params.setdefault(key, []).extend(values)
        elif media == SPARQL_QUERY:
            direct = (Kind.QUERY, _decode(body, "the query"))
        elif media == SPARQL_UPDATE:
            direct = (Kind.UPDATE, _decode(body, "the update"))
        else:
            raise ProtocolError(415, f"unsupported content type {media or '(none)'!r}; send {FORM}, "
                                     f"{SPARQL_QUERY} or {SPARQL_UPDATE}")
    query, update = _one(params, "query"), _one(params, "update")
    if direct is not None:
        if query is not None or update is not None:
            raise ProtocolError(400, f"a {media} request carries its operation in the body, not in a parameter")
        kind, text = direct
    elif query is not None and update is not None:
        raise ProtocolError(400, "give either 'query' or 'update', not both")
    elif update is not None:
        if method == "GET":
            raise ProtocolError(400, "updates must be sent with POST")
        kind, text = Kind.UPDATE, update
    elif query is not None:
        kind, text = Kind.QUERY, query
    else:
        raise ProtocolError(400, "missing 'query' (or, with POST, 'update') parameter; GET the endpoint "
                                 "without parameters for its service description")
    if not text.strip():
        raise ProtocolError(400, f"the {kind.value} is empty")
    if kind is Kind.UPDATE and (params.get("using-graph-uri") or params.get("using-named-graph-uri")):
        raise ProtocolError(400, "using-graph-uri / using-named-graph-uri are not supported; use USING in the update")
    union = (_one(params, "union-default-graph") or "false").lower() not in ("false", "0", "no")
    if union and (params.get("default-graph-uri") or params.get("named-graph-uri")):
        raise ProtocolError(400, "give union-default-graph or default-graph-uri/named-graph-uri, not both")
    return Operation(kind, text, _graphs(params, "default-graph-uri"), _graphs(params, "named-graph-uri"), union)


# -- content negotiation ----------------------------------------------------------------------------
def _accepted(accept: str) -> list[str]:
    """Media ranges of an Accept header, best first (q-value, then order); q=0 dropped."""
    ranked = []
    for index, part in enumerate(accept.split(",")):
        media, *params = (p.strip() for p in part.split(";"))
        q = 1.0
        for p in params:
            key, _, value = p.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if media and q > 0:
            ranked.append((-q, index, media.lower()))
    return [m for _, _, m in sorted(ranked)]


def negotiate(accept: str, options: Mapping[str, Any], default: str) -> tuple[str, Any]:
    """The media type to answer with: the best acceptable option, the default for ``*/*`` or no header."""
    if not accept.strip():
        return default, options[default]
    for media in _accepted(accept):
        if media in options:
            return CANONICAL.get(media, media), options[media]
        if media == "*/*" or media == f"{default.split('/')[0]}/*":
            return default, options[default]
        if media.endswith("/*"):
            major = media[:-1]
            for name in options:
                if name.startswith(major):
                    return CANONICAL.get(name, name), options[name]
    offered = ", ".join(n for n in options if n not in CANONICAL)
    raise ProtocolError(406, f"cannot answer with {accept!r}; this result is available as {offered}")


# -- running (in a worker process) ------------------------------------------------------------------
def _checked(items: Iterable[Any], deadline: float, max_rows: int, timeout_s: float) -> Iterator[Any]:
    """Yield items while the deadline holds and at most ``max_rows`` of them."""
    clock = time.monotonic
    for count, item in enumerate(items):
        if clock() > deadline:
            raise ProtocolError(503, f"query exceeded the {timeout_s:g} s timeout (--query-timeout) after "
                            f"{count:,} rows and was stopped; narrow it or add a LIMIT")
        if count >= max_rows:
            raise ProtocolError(413, f"the result has more than {max_rows:,} rows (--max-rows); add a LIMIT or narrow it")
        yield item


def _tsv_term(term: Any) -> str:
    if term is None:
        return ""
    if isinstance(term, ox.Triple):
        return f"<<( {_tsv_term(term.subject)} {_tsv_term(term.predicate)} {_tsv_term(term.object)} )>>"
    return str(term)


def _select(result: ox.QuerySolutions, fmt: ox.QueryResultsFormat, rows: Iterator[Any]) -> bytes:
    """Re-serialize consumed solutions with pyoxigraph: TSV of its own term syntax, parsed back."""
    lines = ["\t".join(f"?{v.value}" for v in result.variables)]
    lines.extend("\t".join([_tsv_term(t) for t in solution]) for solution in rows)
    tsv = ("\n".join(lines) + "\n").encode("utf-8")
    parsed = ox.parse_query_results(tsv, ox.QueryResultsFormat.TSV)
    return parsed.serialize(format=fmt)  # type: ignore[return-value]


def run_query(store: GraphStore, op: Operation, accept: str, limits: Limits, deadline: float) -> Answer:
    """Check, evaluate, consume within the limits, serialize (in a worker process, see ``workers``)."""
    check_query(op.text, allow_service=limits.allow_service)
    refuse_update(op.text, UPDATE_HINT if limits.allow_update else "")
    outcome = _evaluate(store, op, accept, limits, deadline)
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def _evaluate(store: GraphStore, op: Operation, accept: str, limits: Limits,
              deadline: float) -> Answer | ProtocolError | AcmsError:
    """The answer, or the failure as a fresh exception.

    pyoxigraph's result iterators are "unsendable": only the thread that made them may drop them. An
    exception raised past this function would carry frames that still hold them to whichever thread
    drops it, so failures are returned instead, built anew once every reference is gone.
    """
    mode = DefaultGraph.ALL if op.union_default_graph else limits.default_graph
    result = store.query_raw(op.text, **dataset_arguments(op.text, mode, op.default_graphs, op.named_graphs))
    try:
        if isinstance(result, ox.QueryBoolean):
            media, fmt = negotiate(accept, RESULT_FORMATS, JSON_RESULTS)
            return Answer(result.serialize(format=fmt) or b"", media)
        rows = _checked(result, deadline, limits.max_rows, limits.timeout_s)  # type: ignore[arg-type]
        if isinstance(result, ox.QueryTriples):
            media, rdf = negotiate(accept, GRAPH_FORMATS, TURTLE)
            body = ox.serialize(rows, format=rdf, prefixes=store.prefixes())
        else:
            media, fmt = negotiate(accept, RESULT_FORMATS, JSON_RESULTS)
            body = _select(result, fmt, rows)  # type: ignore[arg-type]
        return Answer(body or b"", media)
    except ProtocolError as exc:
        return ProtocolError(exc.status, exc.message)
    except (OSError, RuntimeError) as exc:  # e.g. while rows are pulled from the store
        return query_failed(exc)


def refuse_load(text: str) -> None:
    """``LOAD <url>`` makes pyoxigraph fetch the URL (like SERVICE): never from the endpoint."""
    if any(word.upper() == "LOAD" for word in _WORD.findall(scan(text).code)):
        raise QueryRejected("LOAD is refused: it would make the store fetch a URL")


def run_update(store: GraphStore, op: Operation, limits: Limits) -> None:
    """Check and apply an update (one transaction); the caller holds the index's exclusive lock."""
    check_query(op.text, allow_service=limits.allow_service)
    refuse_load(op.text)
    store.update(op.text)


def for_client(message: str) -> str:
    """A refusal as an HTTP client should read it: the guard's hint names the CLI flag; the server's
    flag of the same name is ``acms serve --allow-service``."""
    return message.replace(_CLI_HINT, "start the server with --allow-service to permit it")


__all__: Sequence[str] = ["Answer", "Kind", "Limits", "Operation", "ProtocolError", "for_client", "negotiate",
                          "parse_operation", "read_body", "run_query", "run_update"]
