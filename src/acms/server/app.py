"""The ASGI application of ``acms serve`` (Starlette; ``acms serve`` runs it on uvicorn).

Routes:

==========================  =========================================================================
``GET/POST /sparql``        SPARQL 1.1 Protocol (:mod:`acms.server.sparql_protocol`); GET without a
                            query: the SPARQL 1.1 Service Description (:mod:`acms.server.service`)
``GET/HEAD/PUT/POST/DELETE  SPARQL 1.1 Graph Store Protocol (:mod:`acms.server.graph_store`); writes
/store``                    only with ``allow_update``
``POST /v0/render``         ``render_request.v0`` → ``render_context_reply.v0``, or the v0 error envelope
``GET /health``             ``{"status": "ok", "quads": N, "model": model id or null}``
``GET /v0/strategies``      the rows of ``acms strategies --json``
==========================  =========================================================================

Render errors keep the envelope of :mod:`acms.assembly.protocol` and get the HTTP status of their code
(``STATUS_BY_CODE``, from the code table in :mod:`acms.errors`). Blocking store work (assembly, health)
runs in Starlette's threadpool; SPARQL and Graph Store requests run in worker processes that are
terminated at their deadline (:mod:`acms.server.workers`), each one more reader (or the one writer)
under the index's lock, after which the next request reopens the store and rebuilds the Searcher.
Call ``app.state.sparql.close()`` when the server stops: it ends the worker processes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from acms.api import Index
from acms.service.assembly import AssemblyResult
from acms.assembly.protocol import (
    WIRE_MAX_BYTES,
    RenderRequest,
    envelope_for,
    error_envelope,
    parse_request,
    request_id_of,
)
from acms.errors import CODES, AcmsError, ErrorCode, environment_error
from acms.retrieval.embedding_store import active_model
from acms.server.endpoint import SparqlEndpoint
from acms.server.sparql_protocol import Limits, ProtocolError, read_body
from acms.server.workers import Workers
from acms.sparql.dataset import DefaultGraph

log = logging.getLogger("acms.server")

STATUS_BY_CODE: Mapping[ErrorCode, int] = {code: spec.http_status for code, spec in CODES.items()}


def create_app(
    index: Index,
    *,
    allow_update: bool = False,
    allow_service: bool = False,
    default_graph: DefaultGraph = DefaultGraph.CURRENT,
    query_timeout_s: float = 10.0,
    max_rows: int = 10_000,
    workers: int = 2,
) -> Starlette:
    """The application over an index opened in ``shared`` mode (see :mod:`acms.service.session`): every
    request reads under the index's shared lock (writes under its exclusive one), so `acms index` and
    other commands run beside the server; the Searcher (and its derived caches) is rebuilt after another
    process wrote the index."""
    limits = Limits(timeout_s=query_timeout_s, max_rows=max_rows, allow_update=allow_update,
                    allow_service=allow_service, default_graph=default_graph)
    sparql = SparqlEndpoint(Workers(index.session, workers, index.settings.query_memory_mb), limits,
                            freshen=index.freshen)
    registry = index.registry

    def run_render(parsed: RenderRequest) -> AssemblyResult:
        return index.render(parsed, "json")

    async def render(request: Request) -> Response:
        try:
            raw = await read_body(request, WIRE_MAX_BYTES)  # a task may be 1 MiB, in JSON escapes
        except ProtocolError as exc:
            envelope = error_envelope(ErrorCode.INVALID_REQUEST, exc.message, "unknown")
            return JSONResponse(envelope, status_code=exc.status)
        request_id = request_id_of(raw)
        try:
            parsed = parse_request(raw)
            result = await run_in_threadpool(run_render, parsed)
        except Exception as exc:  # noqa: BLE001 - every failure becomes the contract's envelope
            exc = environment_error(exc) or exc  # a full disk, a read-only index: said as such
            if not isinstance(exc, AcmsError):
                log.exception("render request %s failed", request_id)
            envelope = envelope_for(exc, request_id)
            status = STATUS_BY_CODE.get(ErrorCode(envelope["error"]["code"]), 500)
            return JSONResponse(envelope, status_code=status)
        return Response(result.assembled.rendered, media_type="application/json")

    counted: dict[str, object] = {}  # len() walks the store (~0.16 s per million quads): once per write

    def health_row() -> dict[str, object]:
        with index.reading() as store:
            if counted.get("generation") != index.session.generation():
                counted.update(generation=index.session.generation(), quads=store.count())
            model = active_model(store)
            return {"status": "ok", "quads": counted["quads"], "model": model.model_id if model else None}

    async def health(request: Request) -> Response:
        try:
            return JSONResponse(await run_in_threadpool(health_row))
        except AcmsError as exc:
            return JSONResponse({"status": "error", "message": exc.message}, status_code=503)

    async def strategies(request: Request) -> Response:
        return JSONResponse(registry.describe())

    # Browser clients such as YASGUI call the endpoint from another origin: let them read the answers.
    middleware = [Middleware(CORSMiddleware, allow_origins=["*"],
                             allow_methods=["GET", "HEAD", "POST", "PUT", "DELETE"],
                             allow_headers=["Content-Type", "Accept"])]
    app = Starlette(middleware=middleware, routes=[
        Route("/sparql", sparql.handle, methods=["GET", "POST"]),
        Route("/store", sparql.handle_store, methods=["GET", "HEAD", "PUT", "POST", "DELETE"]),
        Route("/v0/render", render, methods=["POST"]),
        Route("/health", health, methods=["GET"]),
        Route("/v0/strategies", strategies, methods=["GET"]),
    ])
    app.state.sparql = sparql
    return app


__all__ = ["STATUS_BY_CODE", "create_app"]
