"""JSON-RPC read strictly on both transports of ``acms mcp``.

The SDK parses each message with pydantic, where a key given twice silently takes its last value
(``"privacy": "block", "privacy": "allow"`` would turn a protection off) and where a message that
does not parse gets no answer at all (the client waits until it times out). Here every message is
first read by :func:`acms.text_checks.strict_json`; one it refuses (a key twice, nesting past 64
levels, not JSON) is answered with a JSON-RPC error naming the problem (``-32600`` / ``-32700``,
the request's id when it can be read) and never reaches the server.

stdio: the lines are filtered on their way into the SDK's own stdio transport, and the refusals are
sent through its writer, so frames never interleave. Streamable HTTP: an ASGI wrapper answers a
refused body with HTTP 400 and the JSON-RPC error.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import ErrorData, JSONRPCError
from mcp_types.jsonrpc import INVALID_REQUEST, PARSE_ERROR

from acms.text_checks import InputProblem, strict_json

MAX_BODY_BYTES = 8 * 1024 * 1024  # an assemble call may carry a 1 MiB task in JSON escapes
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def _request_id(raw: bytes) -> int | str | None:
    """The id of a message that could not be read strictly: its first ``"id"`` member, read as text
    (a message nested too deep cannot be parsed at all)."""
    found = _ID.search(raw[:65536])
    if found is None:
        return None
    try:
        value = strict_json(found.group(1))
    except InputProblem:
        return None
    return value if isinstance(value, (int, str)) else None


def refusal(raw: str | bytes) -> JSONRPCError | None:
    """The JSON-RPC error for a message the strict reader refuses, or None when it reads."""
    data = raw.encode("utf-8", "replace") if isinstance(raw, str) else raw
    try:
        strict_json(data)
        return None
    except InputProblem as exc:
        code = PARSE_ERROR if "is not valid JSON" in str(exc) else INVALID_REQUEST
        return JSONRPCError(jsonrpc="2.0", id=_request_id(data),
                            error=ErrorData(code=code, message=f"acms: the message {exc}"))


async def strict_lines(source: AsyncIterable[str], refused: MemoryObjectSendStream[JSONRPCError]) -> AsyncIterator[str]:
    """The lines of ``source`` the strict reader accepts; each refused one goes to ``refused``."""
    async for line in source:
        if not line.strip():
            continue
        error = refusal(line)
        if error is None:
            yield line
        else:
            await refused.send(error)


async def _answer(refused: MemoryObjectReceiveStream[JSONRPCError],
                  write: MemoryObjectSendStream[SessionMessage]) -> None:
    async for error in refused:
        await write.send(SessionMessage(error))


@contextlib.contextmanager
def _claimed_stdin() -> Iterator[io.TextIOWrapper]:
    """The wire's stdin, read from a private descriptor while fd 0 points at the null device (as the
    SDK's transport does when it claims stdin itself: a child process reads EOF, not the wire)."""
    private = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    wire = io.TextIOWrapper(os.fdopen(private, "rb", closefd=False), encoding="utf-8", errors="replace")
    try:
        yield wire
    finally:
        with contextlib.suppress(OSError):
            os.dup2(private, 0)


async def serve_stdio(server: MCPServer) -> None:
    """``server`` over stdio, every line read strictly first (``MCPServer.run_stdio_async`` otherwise)."""
    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs, here with our stdin
    send_refused, receive_refused = anyio.create_memory_object_stream[JSONRPCError](16)
    with _claimed_stdin() as wire:
        lines = strict_lines(anyio.wrap_file(wire), send_refused)
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            async with anyio.create_task_group() as group:
                group.start_soon(_answer, receive_refused, write_stream)
                await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
                group.cancel_scope.cancel()


class StrictBodies:
    """ASGI: a POST body is read strictly before the streamable HTTP app sees it."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                await _respond(send, 413, JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
                    code=INVALID_REQUEST, message=f"acms: the message is over {MAX_BODY_BYTES:,} bytes")))
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        error = refusal(body) if body.strip() else None
        if error is not None:
            await _respond(send, 400, error)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _respond(send: Send, status: int, error: JSONRPCError) -> None:
    payload = error.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})


__all__ = ["StrictBodies", "refusal", "serve_stdio", "strict_lines"]
