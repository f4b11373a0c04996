"""``GET /v0/...``: what a remote user or agent reads besides assembled context, each a call of the
façade answered as JSON (errors as the v0 error envelope, with the error's status).

==============================================  ===========================================================
``GET /v0/stats``                               ``acms stats --json``
``GET /v0/describe?entity=E``                   ``acms describe E --json``
``GET /v0/neighbourhood?entity=E&depth=1``      ``acms export --neighbourhood E``: ``{"format", "text"}``
``&format=turtle``                              (turtle, trig, nquads, jsonld, graphml, dot, cytoscape)
``GET /v0/tiers``                               ``acms tiers --json``
``GET /v0/decisions?about=E``                   ``acms decision list --json``
==============================================  ===========================================================
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from acms.api import Index
from acms.errors import UsageError
from acms.results import ExportScope
from acms.server.mapping import envelope_error

NEIGHBOURHOOD_FORMATS = ("turtle", "trig", "nquads", "jsonld", "graphml", "dot", "cytoscape")
MAX_DEPTH = 4


def _param(request: Request, name: str, *, required: bool = False) -> str | None:
    values = request.query_params.getlist(name)
    if len(values) > 1:
        raise UsageError(f"give one '{name}' parameter, not {len(values)}")
    if required and (not values or not values[0].strip()):
        raise UsageError(f"missing '{name}' parameter")
    return values[0] if values else None


def _depth(request: Request) -> int:
    text = _param(request, "depth") or "1"
    if not text.isdigit() or int(text) > MAX_DEPTH:
        raise UsageError(f"depth: an integer from 0 to {MAX_DEPTH}, not {text!r}")
    return int(text)


def routes(index: Index) -> list[Route]:
    """The read routes over ``index`` (a ``shared`` one: each call reads under the lock for its length)."""

    def answer(read: Callable[[Request], Callable[[], Any]]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                call = read(request)  # parameters checked on the event loop, the work in the threadpool
                return JSONResponse(await run_in_threadpool(call))
            except Exception as exc:  # noqa: BLE001 - every failure becomes the envelope
                return envelope_error(exc, "")
        return endpoint

    def stats(request: Request) -> Callable[[], Any]:
        return lambda: index.stats().as_dict()

    def describe(request: Request) -> Callable[[], Any]:
        entity = _param(request, "entity", required=True) or ""
        return lambda: index.describe(entity).as_dict()

    def neighbourhood(request: Request) -> Callable[[], Any]:
        entity = _param(request, "entity", required=True) or ""
        fmt = _param(request, "format") or "turtle"
        if fmt not in NEIGHBOURHOOD_FORMATS:
            raise UsageError(f"format: one of {', '.join(NEIGHBOURHOOD_FORMATS)}, not {fmt!r}")
        where = ExportScope(entity=entity, depth=_depth(request))
        return lambda: {"format": fmt, "text": index.export.text(fmt, where)}

    def tiers(request: Request) -> Callable[[], Any]:
        return lambda: index.tiers.counts().as_dict()

    def decisions(request: Request) -> Callable[[], Any]:
        about = _param(request, "about")
        return lambda: [d.as_dict() for d in index.plans.decisions(about)]

    return [Route(path, answer(read), methods=["GET"]) for path, read in (
        ("/v0/stats", stats), ("/v0/describe", describe), ("/v0/neighbourhood", neighbourhood),
        ("/v0/tiers", tiers), ("/v0/decisions", decisions))]
