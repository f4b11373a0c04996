"""``acms serve``: a SPARQL 1.1 Protocol endpoint and the render_request.v0 API (Starlette on uvicorn).

Query text is checked before it reaches the parser (SERVICE refused, size and nesting capped), so a
hostile query costs one 400 reply, never the process. Queries run in a worker thread with a timeout:
pyoxigraph cannot be interrupted, so on timeout the client gets a 503 at once while the worker
finishes in the background; the serialized result is capped in size (413 beyond). Updates are refused
(403) unless the server was started with ``--allow-update``; they are serialized by a lock.
"""

from __future__ import annotations

import asyncio
import threading
import urllib.parse
from dataclasses import dataclass
from typing import Any

import pyoxigraph as ox
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from acms.assembly.assemble import assemble
from acms.assembly.protocol import envelope_for, parse_request, request_id_of
from acms.errors import AcmsError, QueryError, QueryRejected
from acms.retrieval.embedding_store import active_model
from acms.retrieval.search import Searcher
from acms.sparql.guard import check_query
from acms.store.oxigraph import PREFIX_HEADER
from acms.strategies.registry import StrategyRegistry

RESULT_TYPES = {
    "application/sparql-results+json": ox.QueryResultsFormat.JSON,
    "application/sparql-results+xml": ox.QueryResultsFormat.XML,
    "text/csv": ox.QueryResultsFormat.CSV,
    "text/tab-separated-values": ox.QueryResultsFormat.TSV,
}
GRAPH_TYPES = {"text/turtle": ox.RdfFormat.TURTLE, "application/n-triples": ox.RdfFormat.N_TRIPLES}
STATUS = {"INVALID_REQUEST": 400, "BUDGET_TOO_SMALL": 422, "STORE_MISSING": 503, "STORE_LOCKED": 503,
          "DEADLINE_EXCEEDED": 504, "PROVIDER_TIMEOUT": 504, "PROVIDER_ERROR": 502, "MODEL_MISMATCH": 409,
          "INTERNAL": 500}


@dataclass
class ServerConfig:
    allow_update: bool = False
    query_timeout_s: float = 10.0
    max_result_bytes: int = 50_000_000


def _negotiate(accept: str, options: dict[str, Any], default: str) -> tuple[str, Any]:
    for part in accept.split(","):
        media = part.split(";")[0].strip().lower()
        if media in options:
            return media, options[media]
    return default, options[default]


def _error(status: int, message: str) -> Response:
    return Response(message + "\n", status_code=status, media_type="text/plain")


def create_app(searcher: Searcher, registry: StrategyRegistry, config: ServerConfig | None = None) -> Starlette:
    cfg = config or ServerConfig()
    store = searcher.store
    update_lock = threading.Lock()

    def run_query(text: str, accept: str) -> tuple[bytes, str]:
        result = store.raw.query(PREFIX_HEADER + text)
        if isinstance(result, ox.QueryTriples):
            media, fmt = _negotiate(accept, GRAPH_TYPES, "text/turtle")
        else:
            media, fmt = _negotiate(accept, RESULT_TYPES, "application/sparql-results+json")
        return result.serialize(format=fmt), media

    def run_update(text: str) -> None:
        with update_lock:
            store.raw.update(PREFIX_HEADER + text)

    async def sparql(request: Request) -> Response:
        query = update = None
        if request.method == "GET":
            query = request.query_params.get("query")
        else:
            ctype = request.headers.get("content-type", "").split(";")[0].strip()
            if ctype == "application/x-www-form-urlencoded":
                form = urllib.parse.parse_qs((await request.body()).decode("utf-8"))
                query = form.get("query", [None])[0]
                update = form.get("update", [None])[0]
            elif ctype == "application/sparql-query":
                query = (await request.body()).decode("utf-8")
            elif ctype == "application/sparql-update":
                update = (await request.body()).decode("utf-8")
            else:
                return _error(415, f"unsupported content type {ctype!r}")
        text = query if query is not None else update
        if not text:
            return _error(400, "missing 'query' (or 'update') parameter")
        try:
            check_query(str(text))
        except QueryRejected as exc:
            return _error(400, exc.message)
        if update is not None:
            if not cfg.allow_update:
                return _error(403, "updates are refused: start the server with --allow-update")
            try:
                await asyncio.wait_for(run_in_threadpool(run_update, str(update)), cfg.query_timeout_s)
            except SyntaxError as exc:
                return _error(400, f"SPARQL update syntax error: {exc}")
            except asyncio.TimeoutError:
                return _error(503, f"update exceeded the {cfg.query_timeout_s:g} s timeout")
            return Response(status_code=204)
        try:
            body, media = await asyncio.wait_for(
                run_in_threadpool(run_query, str(query), request.headers.get("accept", "")), cfg.query_timeout_s)
        except SyntaxError as exc:
            return _error(400, f"SPARQL syntax error: {exc}")
        except asyncio.TimeoutError:
            return _error(503, f"query exceeded the {cfg.query_timeout_s:g} s timeout; narrow it or add a LIMIT")
        except (OSError, RuntimeError) as exc:
            return _error(500, f"query failed: {exc}")
        if len(body) > cfg.max_result_bytes:
            return _error(413, f"result is larger than {cfg.max_result_bytes:,} bytes; add a LIMIT")
        return Response(body, media_type=media)

    async def render(request: Request) -> Response:
        raw = await request.body()
        request_id = request_id_of(raw)
        try:
            req = parse_request(raw)
            result = await run_in_threadpool(assemble, req, searcher, registry, "json")
        except AcmsError as exc:
            envelope = envelope_for(exc, request_id)
            return JSONResponse(envelope, status_code=STATUS.get(envelope["error"]["code"], 500))
        except Exception as exc:  # noqa: BLE001 - the envelope says INTERNAL without details
            envelope = envelope_for(exc, request_id)
            return JSONResponse(envelope, status_code=500)
        return Response(result.assembled.rendered, media_type="application/json")

    async def health(request: Request) -> Response:
        model = await run_in_threadpool(active_model, store)
        return JSONResponse({"status": "ok", "quads": len(store.raw), "model": model.model_id if model else None})

    async def strategies(request: Request) -> Response:
        return JSONResponse(registry.describe())

    # Browser clients such as YASGUI call the endpoint from another origin: allow it to read answers.
    middleware = [Middleware(CORSMiddleware, allow_origins=["*"], allow_methods=["GET", "POST"],
                             allow_headers=["Content-Type", "Accept"])]
    return Starlette(middleware=middleware, routes=[
        Route("/sparql", sparql, methods=["GET", "POST"]),
        Route("/v0/render", render, methods=["POST"]),
        Route("/health", health, methods=["GET"]),
        Route("/v0/strategies", strategies, methods=["GET"]),
    ])


__all__ = ["QueryError", "ServerConfig", "create_app"]
