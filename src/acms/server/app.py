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
``GET /v0/stats`` …         stats, describe, a neighbourhood, tiers, decisions (:mod:`acms.server.reads`)
``POST /v0/decisions``      record a decision, with ``allow_record`` (:mod:`acms.server.records`)
==========================  =========================================================================

Render errors keep the envelope of :mod:`acms.assembly.protocol` and get the HTTP status of the error
(:mod:`acms.server.mapping`, the one place: its code's in :mod:`acms.errors`, or a protocol error's own). Blocking store work (assembly, health)
runs in Starlette's threadpool; SPARQL and Graph Store requests run in worker processes that are
terminated at their deadline (:mod:`acms.server.workers`), each one more reader (or the one writer)
under the index's lock, after which the next request reopens the store and rebuilds the Searcher.
Call ``app.state.sparql.close()`` when the server stops: it ends the worker processes.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from acms.api import Index
from acms.assembly.protocol import RenderRequest, parse_request, request_id_of
from acms.errors import AcmsError
from acms.results import AssemblyResult, DefaultGraph
from acms.server.endpoint import SparqlEndpoint
from acms.server.mapping import STATUS_BY_CODE, envelope_error, health_error
from acms.server.reads import routes as read_routes
from acms.server.records import routes as record_routes
from acms.server.sparql_protocol import Limits, read_body
from acms.server.workers import Workers
from acms.text_checks import WIRE_MAX_BYTES


def create_app(
    index: Index,
    *,
    allow_update: bool = False,
    allow_service: bool = False,
    default_graph: DefaultGraph = DefaultGraph.CURRENT,
    query_timeout_s: float = 10.0,
    max_rows: int = 10_000,
    workers: int = 2,
    allow_record: bool = False,
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
        request_id = "unknown"
        try:
            raw = await read_body(request, WIRE_MAX_BYTES)  # a task may be 1 MiB, in JSON escapes
            request_id = request_id_of(raw)
            parsed = parse_request(raw)
            result = await run_in_threadpool(run_render, parsed)
        except Exception as exc:  # noqa: BLE001 - every failure becomes the contract's envelope
            return envelope_error(exc, request_id)
        return Response(result.assembled.rendered, media_type="application/json")

    async def health(request: Request) -> Response:
        try:
            return JSONResponse(await run_in_threadpool(index.health))
        except AcmsError as exc:
            return health_error(exc)

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
        *read_routes(index),
        *record_routes(index, allow_record=allow_record),
    ])
    app.state.sparql = sparql
    return app


__all__ = ["STATUS_BY_CODE", "create_app"]
