"""The ``/sparql`` and ``/store`` routes: protocol parsing on the event loop, store work in worker
processes (:mod:`acms.server.workers`) cut at the deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from acms.errors import AcmsError, Forbidden, Unavailable
from acms.server import workers
from acms.server.graph_store import Change, graph_request
from acms.server.mapping import plain_error
from acms.server.sparql_protocol import Answer, Kind, Limits, parse_operation, read_body
from acms.server.workers import Deadline, Workers

__all__ = ["STALE_HEADER", "SparqlEndpoint", "stale_header"]

STALE_HEADER = "Acms-Stale"  # files changed on disk the answer was made without (``refresh = warn``)


def stale_header(stale: Sequence[str], shown: int = 20) -> str:
    """The header's value: the count, then the paths (escaped as the graph holds them: ASCII-safe)."""
    names = ", ".join(p.encode("ascii", "backslashreplace").decode("ascii") for p in stale[:shown])
    return f"{len(stale)}; {names}" + (", ..." if len(stale) > shown else "")


def _params(request: Request) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key, value in request.query_params.multi_items():
        out.setdefault(key, []).append(value)
    return out


class SparqlEndpoint:
    """Both routes over one worker pool (writes bump the index's generation: ``/health`` re-counts)."""

    def __init__(self, workers_pool: Workers, limits: Limits,
                 freshen: Callable[[], Sequence[str]] = lambda: ()) -> None:
        """``freshen()``: before every request, the ``refresh`` setting applied (``Index.freshen``): the
        files changed on disk refreshed first, or the stale ones it answers without (a response header)."""
        self.workers = workers_pool
        self.limits = limits
        self.freshen = freshen

    def close(self) -> None:
        """End the worker processes (a running query is terminated)."""
        self.workers.close()

    @property
    def running(self) -> int:
        """Jobs in worker processes that are not finished or terminated yet."""
        return self.workers.running

    def _timeout(self, kind: Kind) -> Unavailable:
        t = self.limits.timeout_s
        if kind is Kind.UPDATE:
            return Unavailable(f"the update did not finish within the {t:g} s timeout (--query-timeout) "
                                      "and was stopped: it was applied whole or not at all")
        return Unavailable(f"query exceeded the {t:g} s timeout (--query-timeout) and was stopped; "
                                  "narrow it or add a LIMIT")

    async def _write(self, deadline: float, job: Any, *args: Any) -> Any:
        if not self.limits.allow_update:
            raise Forbidden("updates are refused: start the server with --allow-update")
        try:
            return await self.workers.run(deadline, job, *args, writes=True)
        except Deadline:
            raise self._timeout(Kind.UPDATE) from None

    async def _sparql(self, request: Request, deadline: float) -> Response:
        params = _params(request)
        if request.method == "GET" and not ({"query", "update"} & params.keys()):
            endpoint = str(request.url.replace(query="", fragment=""))
            answer: Answer = await self._read(deadline, workers.service_job, endpoint, self.limits,
                                              request.headers.get("accept", ""))
            return Response(answer.body, media_type=answer.media_type)
        body = await read_body(request) if request.method == "POST" else b""
        op = parse_operation(request.method, params, request.headers.get("content-type", ""), body)
        if op.kind is Kind.UPDATE:
            await self._write(deadline, workers.update_job, op, self.limits)
            return Response(status_code=204)
        answer = await self._read(deadline, workers.query_job, op, request.headers.get("accept", ""), self.limits)
        return Response(answer.body, media_type=answer.media_type)

    async def _read(self, deadline: float, job: Any, *args: Any) -> Any:
        try:
            return await self.workers.run(deadline, job, *args)
        except Deadline:
            raise self._timeout(Kind.QUERY) from None

    async def _store(self, request: Request, deadline: float) -> Response:
        target = graph_request(_params(request))
        if request.method in ("GET", "HEAD"):
            answer = await self._read(deadline, workers.read_graph_job, target, self.limits.default_graph,
                                      request.headers.get("accept", ""))
            headers = {"content-length": str(len(answer.body))}
            return Response(b"" if request.method == "HEAD" else answer.body, media_type=answer.media_type,
                            headers=headers)
        body = await read_body(request) if request.method in ("PUT", "POST") else b""
        status = await self._write(deadline, workers.write_graph_job, target, Change(request.method), body,
                                   request.headers.get("content-type", ""))
        return Response(status_code=status)

    async def _guarded(self, request: Request, route: Any) -> Response:
        try:
            deadline = time.monotonic() + self.limits.timeout_s
            stale = await run_in_threadpool(self.freshen)
            response: Response = await route(request, deadline)
            if stale:
                response.headers[STALE_HEADER] = stale_header(stale)
            return response
        except AcmsError as exc:  # a refused request, a query error 400, a locked index 503: its status
            return plain_error(exc)
        except asyncio.CancelledError:  # the server stops: uvicorn cancels what still runs after its grace
            return plain_error(Unavailable("the server is shutting down; the request was not answered"))

    async def handle(self, request: Request) -> Response:
        return await self._guarded(request, self._sparql)

    async def handle_store(self, request: Request) -> Response:
        return await self._guarded(request, self._store)