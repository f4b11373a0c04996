"""The SPARQL 1.1 Protocol endpoint (``/sparql``) over the index's pyoxigraph store.

Operations (https://www.w3.org/TR/sparql11-protocol/):

- query: ``GET ?query=``, ``POST`` form (``application/x-www-form-urlencoded``, ``query=``) or ``POST``
  ``application/sparql-query``; ``default-graph-uri`` / ``named-graph-uri`` set the dataset;
- update: ``POST`` form ``update=`` or ``application/sparql-update``; refused (403) unless the server
  was started with ``allow_update``. Updates are serialized by one lock; each is one pyoxigraph
  transaction, so concurrent reads see the store before or after it, never half of it. ``LOAD`` is
  refused as well: like ``SERVICE`` it makes pyoxigraph fetch a URL.

Results by ``Accept`` (q-values honoured, ``*/*`` gives the default, nothing acceptable gives 406):
SELECT and ASK as ``application/sparql-results+json`` (default), ``application/sparql-results+xml``,
``text/csv``, ``text/tab-separated-values``; CONSTRUCT and DESCRIBE as ``text/turtle`` (default),
``application/n-triples`` or ``application/rdf+xml`` (what rdflib's ``SPARQLStore`` asks for). Every
byte is written by pyoxigraph's own serializers.

Untrusted text: every query and update goes through :func:`acms.sparql.guard.check_query` before it
reaches the parser (SERVICE, over-long or over-nested text: 400, the parser never sees it), in the
worker thread (scanning 100,000 characters takes ~30 ms: not on the event loop); a syntax error is a
400 with the parser's message, its positions counted in the client's text. Request bodies are capped
at ``MAX_BODY_BYTES`` (413).

Timeouts and the row cap, honestly: pyoxigraph cannot interrupt a running query. What the server
does instead:

1. the query runs in a worker thread and the request stops waiting after ``query_timeout_s``: the
   client gets a 503 at once, whatever the worker is doing;
2. results are consumed lazily, one row (or triple) at a time, and the worker checks the deadline and
   the row count as each row arrives; past the deadline, or past ``max_rows`` (413), it stops pulling
   rows, so a query that streams rows stops costing anything at its first row after the deadline;
3. what cannot be cut is work pyoxigraph does before the next row exists: an aggregate, ORDER BY or
   a large join's build phase runs inside one native call until it finishes (the GIL is released, so
   the server keeps answering). At most ``MAX_RUNNING`` queries run at once, abandoned ones included;
   a query that finds no free slot before its own deadline gets a 503 "busy".

Because rows are consumed in Python, a SELECT result is handed back to pyoxigraph as TSV (each term in
pyoxigraph's own N-Triples form) and re-serialized by ``parse_query_results(...).serialize(format)``:
exact, and about 2.5x the cost of serializing directly on a 10k-row result (≈70 ms instead of ≈28 ms
for 10k rows x 4 variables); small results do not notice. CONSTRUCT triples stream straight from the
row-checking generator into ``pyoxigraph.serialize``.
"""

from __future__ import annotations

import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import anyio
import pyoxigraph as ox
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from acms.errors import AcmsError, QueryRejected, QuerySyntaxError, StoreError
from acms.sparql.guard import check_query, scan
from acms.service.session import Session
from acms.store.protocol import GraphStore
from acms.vocab import PREFIX_HEADER
from acms.vocab import PREFIXES

MAX_BODY_BYTES = 2 * 1024 * 1024  # a query is capped at 100,000 characters; form encoding can triple it
MAX_RUNNING = 8  # queries and updates executing in worker threads at once, abandoned ones included

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
}
# Answer with the canonical media type of the format chosen (an alias in Accept gets the real one).
CANONICAL: Mapping[str, str] = {"application/json": JSON_RESULTS, "application/xml": "application/sparql-results+xml"}

_WORD = re.compile(r"[A-Za-z_]+")
_CLI_HINT = " (pass --allow-service to permit it)"
_POSITION = re.compile(r"error at (\d+):")
_HEADER_LINES = PREFIX_HEADER.count("\n")

FORM = "application/x-www-form-urlencoded"
SPARQL_QUERY = "application/sparql-query"
SPARQL_UPDATE = "application/sparql-update"


class ProtocolError(Exception):
    """An HTTP-level refusal: the status and a one-line message sent as ``text/plain``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


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
        raise ProtocolError(400, "missing 'query' (or, with POST, 'update') parameter")
    if not text.strip():
        raise ProtocolError(400, f"the {kind.value} is empty")
    if kind is Kind.UPDATE and (params.get("using-graph-uri") or params.get("using-named-graph-uri")):
        raise ProtocolError(400, "using-graph-uri / using-named-graph-uri are not supported; use USING in the update")
    return Operation(kind, text, _graphs(params, "default-graph-uri"), _graphs(params, "named-graph-uri"))


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


# -- running (in a worker thread) -------------------------------------------------------------------
class _Cut(Exception):
    """Raised inside the row loop to stop consuming a result (deadline or row cap)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def _checked(items: Iterable[Any], deadline: float, max_rows: int, timeout_s: float, counter: list[int]) -> Iterator[Any]:
    """Yield items while the deadline holds and at most ``max_rows`` of them; ``counter[0]`` counts."""
    clock = time.monotonic
    for item in items:
        if clock() > deadline:
            raise _Cut(503, f"query exceeded the {timeout_s:g} s timeout (--query-timeout) after "
                            f"{counter[0]:,} rows; narrow it or add a LIMIT")
        if counter[0] >= max_rows:
            raise _Cut(413, f"the result has more than {max_rows:,} rows (--max-rows); add a LIMIT or narrow it")
        counter[0] += 1
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
    """Check, evaluate, consume within the limits, serialize. Runs in a worker thread (the check of a
    100,000-character text takes ~30 ms: not on the event loop)."""
    check_query(op.text)
    outcome = _evaluate(store, op, accept, limits, deadline)
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def _evaluate(store: GraphStore, op: Operation, accept: str, limits: Limits,
              deadline: float) -> Answer | ProtocolError | StoreError:
    """The answer, or the failure as a fresh exception.

    pyoxigraph's result iterators are "unsendable": only the thread that made them may drop them. An
    exception raised past this function would carry frames that still hold them to the event loop's
    thread, so failures are returned instead, built anew once every reference is gone.
    """
    kwargs: dict[str, Any] = {}
    if op.default_graphs:
        kwargs["default_graph"] = list(op.default_graphs)
    if op.named_graphs:
        kwargs["named_graphs"] = list(op.named_graphs)
    result = store.query_raw(op.text, **kwargs)  # parse errors raise here, before any iterator exists
    counter = [0]
    try:
        if isinstance(result, ox.QueryBoolean):
            media, fmt = negotiate(accept, RESULT_FORMATS, JSON_RESULTS)
            return Answer(result.serialize(format=fmt) or b"", media)
        rows = _checked(result, deadline, limits.max_rows, limits.timeout_s, counter)  # type: ignore[arg-type]
        if isinstance(result, ox.QueryTriples):
            media, rdf = negotiate(accept, GRAPH_FORMATS, TURTLE)
            body = ox.serialize(rows, format=rdf, prefixes=dict(PREFIXES))
        else:
            media, fmt = negotiate(accept, RESULT_FORMATS, JSON_RESULTS)
            body = _select(result, fmt, rows)  # type: ignore[arg-type]
        return Answer(body or b"", media)
    except _Cut as cut:
        return ProtocolError(cut.status, cut.message)
    except ProtocolError as exc:
        return ProtocolError(exc.status, exc.message)
    except Exception as exc:  # noqa: BLE001 - e.g. OSError while rows are pulled from the store
        return StoreError(f"query failed: {exc}")


def refuse_load(text: str) -> None:
    """``LOAD <url>`` makes pyoxigraph fetch the URL (like SERVICE): never from the endpoint."""
    if any(word.upper() == "LOAD" for word in _WORD.findall(scan(text).code)):
        raise QueryRejected("LOAD is refused: it would make the store fetch a URL")


def run_update(store: GraphStore, op: Operation, lock: threading.Lock) -> None:
    check_query(op.text)
    refuse_load(op.text)
    with lock:
        store.update(op.text)


def _for_client(message: str, header_lines: int = _HEADER_LINES) -> str:
    """A refusal or syntax error as the client should read it: the guard's hint names a CLI flag the
    server does not have, and parser positions count the PREFIX lines the store adds (UKO's and those
    of the loaded extensions)."""
    message = message.replace(_CLI_HINT, "")
    return _POSITION.sub(lambda m: f"error at {max(1, int(m[1]) - header_lines)}:", message)


# -- the endpoint -----------------------------------------------------------------------------------
class SparqlEndpoint:
    """The ``/sparql`` route: protocol parsing on the event loop, store work in worker threads."""

    def __init__(self, session: Session, limits: Limits) -> None:
        self.session = session
        self.limits = limits
        self.update_lock = threading.Lock()  # one update at a time
        self._slots = threading.BoundedSemaphore(MAX_RUNNING)
        self._count_lock = threading.Lock()
        self._running = 0

    @property
    def running(self) -> int:
        """Worker threads still executing a query or update (abandoned ones included)."""
        return self._running

    def _in_slot(self, deadline: float, work: Callable[..., Any], *args: Any) -> Any:
        if not self._slots.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise ProtocolError(503, f"server busy: {MAX_RUNNING} queries are still running; retry later")
        with self._count_lock:
            self._running += 1
        try:
            return work(*args)
        finally:
            with self._count_lock:
                self._running -= 1
            self._slots.release()

    def _query(self, op: Operation, accept: str, deadline: float) -> Answer:
        with self.session.reading(wait=max(0.0, deadline - time.monotonic())) as store:
            return run_query(store, op, accept, self.limits, deadline)

    def _update(self, op: Operation) -> None:
        with self.session.writing(wait=self.limits.timeout_s) as store:
            run_update(store, op, self.update_lock)

    async def _in_thread(self, deadline: float, kind: Kind, work: Callable[..., Any], *args: Any) -> Any:
        """Run ``work`` in a worker thread; stop waiting at the deadline (the thread may go on)."""
        with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
            return await anyio.to_thread.run_sync(self._in_slot, deadline, work, *args, abandon_on_cancel=True)
        t = self.limits.timeout_s
        if kind is Kind.UPDATE:
            raise ProtocolError(503, f"the update did not finish within the {t:g} s timeout (--query-timeout); "
                                     "it keeps running and is applied whole or not at all when it ends")
        raise ProtocolError(503, f"query exceeded the {t:g} s timeout (--query-timeout); narrow it or add a "
                                 "LIMIT (pyoxigraph cannot interrupt it: it finishes in the background)")

    async def _answer(self, request: Request, deadline: float) -> Response:
        body = await read_body(request) if request.method == "POST" else b""
        url_params: dict[str, list[str]] = {}
        for key, value in request.query_params.multi_items():
            url_params.setdefault(key, []).append(value)
        op = parse_operation(request.method, url_params, request.headers.get("content-type", ""), body)
        if op.kind is Kind.UPDATE:
            if not self.limits.allow_update:
                raise ProtocolError(403, "updates are refused: start the server with --allow-update")
            await self._in_thread(deadline, Kind.UPDATE, self._update, op)
            return Response(status_code=204)
        accept = request.headers.get("accept", "")
        answer: Answer = await self._in_thread(deadline, Kind.QUERY, self._query, op, accept, deadline)
        return Response(answer.body, media_type=answer.media_type)

    async def handle(self, request: Request) -> Response:
        try:
            return await self._answer(request, time.monotonic() + self.limits.timeout_s)
        except ProtocolError as exc:
            return PlainTextResponse(exc.message + "\n", status_code=exc.status)
        except (QueryRejected, QuerySyntaxError) as exc:
            with self.session.reading() as store:
                lines = store.prefix_header().count("\n")
            return PlainTextResponse(_for_client(exc.message, lines) + "\n", status_code=400)
        except AcmsError as exc:
            return PlainTextResponse(exc.message + "\n", status_code=500)


__all__: Sequence[str] = ["Answer", "Kind", "Limits", "Operation", "ProtocolError", "SparqlEndpoint", "negotiate",
                          "parse_operation", "read_body", "run_query", "run_update"]
