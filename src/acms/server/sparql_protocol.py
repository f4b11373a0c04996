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
so a query past ``--query-timeout`` stops using CPU at once; the store side (evaluation, results cut at
``max_rows`` (413), negotiation, serialisation) is the façade's :mod:`acms.service.endpoint`, reached
through ``acms.api.endpoint``. This module reads the requests.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping, Sequence

import pyoxigraph as ox
from starlette.requests import Request

from acms.api import endpoint
from acms.errors import PayloadTooLarge, ProtocolError, UnsupportedMediaType
from acms.server.mapping import for_client

# The store side's names, read here by the server and its tests.
Answer, Kind, Limits, Operation = endpoint.Answer, endpoint.Kind, endpoint.Limits, endpoint.Operation
GRAPH_FORMATS, RESULT_FORMATS, TURTLE = endpoint.GRAPH_FORMATS, endpoint.RESULT_FORMATS, endpoint.TURTLE
negotiate, run_query, run_update = endpoint.negotiate, endpoint.run_query, endpoint.run_update

MAX_BODY_BYTES = 2 * 1024 * 1024  # a query is capped at 100,000 characters; form encoding can triple it

FORM = "application/x-www-form-urlencoded"
SPARQL_QUERY = "application/sparql-query"
SPARQL_UPDATE = "application/sparql-update"


# -- reading the request ----------------------------------------------------------------------------
async def read_body(request: Request, limit: int = MAX_BODY_BYTES) -> bytes:
    """The request body, refused with 413 past ``limit`` bytes (without reading all of it)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"request body of {int(declared):,} bytes is over the {limit:,}-byte limit")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"request body is over the {limit:,}-byte limit")
        chunks.append(chunk)
    return b"".join(chunks)


def _decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(f"{what} is not valid UTF-8") from None


def _one(params: Mapping[str, list[str]], name: str) -> str | None:
    values = params.get(name, [])
    if len(values) > 1:
        raise ProtocolError(f"give one '{name}' parameter, not {len(values)}")
    return values[0] if values else None


def _graphs(params: Mapping[str, list[str]], name: str) -> tuple[ox.NamedNode, ...]:
    out = []
    for iri in params.get(name, []):
        try:
            out.append(ox.NamedNode(iri))
        except ValueError:
            raise ProtocolError(f"{name}: not a valid IRI: {iri!r}") from None
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
            raise UnsupportedMediaType(f"unsupported content type {media or '(none)'!r}; send {FORM}, "
                                     f"{SPARQL_QUERY} or {SPARQL_UPDATE}")
    query, update = _one(params, "query"), _one(params, "update")
    if direct is not None:
        if query is not None or update is not None:
            raise ProtocolError(f"a {media} request carries its operation in the body, not in a parameter")
        kind, text = direct
    elif query is not None and update is not None:
        raise ProtocolError("give either 'query' or 'update', not both")
    elif update is not None:
        if method == "GET":
            raise ProtocolError("updates must be sent with POST")
        kind, text = Kind.UPDATE, update
    elif query is not None:
        kind, text = Kind.QUERY, query
    else:
        raise ProtocolError("missing 'query' (or, with POST, 'update') parameter; GET the endpoint "
                                 "without parameters for its service description")
    if not text.strip():
        raise ProtocolError(f"the {kind.value} is empty")
    if kind is Kind.UPDATE and (params.get("using-graph-uri") or params.get("using-named-graph-uri")):
        raise ProtocolError("using-graph-uri / using-named-graph-uri are not supported; use USING in the update")
    union = (_one(params, "union-default-graph") or "false").lower() not in ("false", "0", "no")
    if union and (params.get("default-graph-uri") or params.get("named-graph-uri")):
        raise ProtocolError("give union-default-graph or default-graph-uri/named-graph-uri, not both")
    return Operation(kind, text, _graphs(params, "default-graph-uri"), _graphs(params, "named-graph-uri"), union)


__all__: Sequence[str] = ["Answer", "Kind", "Limits", "Operation", "ProtocolError", "for_client", "negotiate",
                          "parse_operation", "read_body", "run_query", "run_update"]
