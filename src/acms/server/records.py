"""``POST /v0/decisions``: record a design decision over HTTP, as the MCP ``record_decision`` tool does;
only when the server was started with ``--allow-record`` (403 otherwise).

The body is a JSON object: ``text`` and ``plan`` (created when none has that name) are required;
``about`` (a list of entities), ``title``, ``supersedes`` (``D-3``) and ``status`` are optional. The
answer is 201 with the decision as ``GET /v0/decisions`` lists it, and ``secrets_replaced`` when its
text lost any; a refusal is the v0 error envelope with the error's status.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from acms.api import Index
from acms.errors import Forbidden, UsageError
from acms.server.mapping import envelope_error
from acms.server.sparql_protocol import read_body

MAX_BODY_BYTES = 256 * 1024  # a decision's text is at most 20,000 characters, in JSON escapes
FIELDS = {"text": str, "plan": str, "title": str, "supersedes": str, "status": str, "about": list}


def _fields(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"the body is not JSON ({exc})") from None
    if not isinstance(body, dict):
        raise UsageError("the body is a JSON object: {\"text\": ..., \"plan\": ...}")
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise UsageError(f"unknown field(s): {', '.join(unknown)}; known: {', '.join(FIELDS)}")
    for name in ("text", "plan"):
        if not isinstance(body.get(name), str) or not body[name].strip():
            raise UsageError(f"missing '{name}': a non-empty string")
    for name, kind in FIELDS.items():
        if body.get(name) is not None and not isinstance(body[name], kind):
            raise UsageError(f"'{name}' is a {'list of strings' if kind is list else 'string'}")
    about = body.get("about") or []
    if not all(isinstance(a, str) for a in about):
        raise UsageError("'about' is a list of strings")
    status = body.get("status") or "accepted"  # an unknown one is refused by the record, naming those it takes
    return {"text": body["text"], "plan": body["plan"], "title": body.get("title"), "about": about,
            "supersedes": body.get("supersedes"), "status": status}


def routes(index: Index, *, allow_record: bool) -> list[Route]:
    async def record(request: Request) -> Response:
        try:
            if not allow_record:
                raise Forbidden("recording decisions is off: start the server with --allow-record")
            fields = _fields(await read_body(request, MAX_BODY_BYTES))
            text = fields.pop("text")
            reply = await run_in_threadpool(lambda: index.plans.record_reply(text, **fields))
        except Exception as exc:  # noqa: BLE001 - every failure becomes the envelope
            return envelope_error(exc, "")
        return JSONResponse(reply, status_code=201)

    return [Route("/v0/decisions", record, methods=["POST"])]
