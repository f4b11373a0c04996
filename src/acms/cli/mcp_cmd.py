"""``acms mcp``: serve the index to coding agents over the Model Context Protocol."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from acms.cli.assemble_cmd import strategies_option
from acms.cli.common import boundary, index_opener, project_argument, project_options, start_following, watch_option
from acms.cli.relay import Answering
from acms.cli.watch_cmd import start_answering
from acms.errors import AcmsError, StoreMissing, environment_error
from acms.tokens import preload as preload_tokenizer

if TYPE_CHECKING:
    from acms.api import Index


@click.command("mcp")
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface for --http (loopback by default).")
@click.option("--port", type=click.IntRange(0, 65535), default=8078, show_default=True,
              help="TCP port for --http (0: any free port, printed at start).")
@click.option("--allow-index", is_flag=True, help="Offer the `index` tool, which lets the agent refresh the index (or make the first one).")
@click.option("--allow-record", is_flag=True,
              help="Offer the `record_decision` tool, which lets the agent record design decisions in the index.")
@watch_option
@strategies_option
@project_options
@project_argument
@boundary
def mcp_cmd(http: bool, host: str, port: int, allow_index: bool, allow_record: bool, watch: bool,
            strategies_dir: tuple[Path, ...], project: Path, store: Path | None) -> None:
    """Serve this project's index to a coding agent over MCP (stdio by default).

    Tools: assemble, search, sparql (read-only), describe, history, explore, neighbourhood, decisions,
    stats, tiers; index with --allow-index, record_decision with --allow-record. Resources: the UKO
    ontology and the saved queries. The server keeps the store and its caches warm between calls and
    takes the index's shared lock per call, so `acms index` runs beside it and the next call sees the
    new index. It follows the project (--no-watch: it does not): saved files are re-indexed shortly
    after, and every call first looks for files changed on disk (the `refresh` setting: auto, warn,
    off), so no answer points at lines that moved.

    \b
    Examples:
      acms mcp                                  (what an agent starts: stdio, this folder's index)
      claude mcp add --scope project acms -- acms mcp
      acms mcp --http --port 8078               (streamable HTTP at http://127.0.0.1:8078/mcp)
    """
    from acms.mcp_server.server import create_server  # the MCP stack is only imported by this command

    preload_tokenizer()  # an agent's first assemble does not wait for it: it loads while the server starts
    opener = index_opener(project, store, shared=True, strategies_dirs=strategies_dir)
    followers: list[Any] = []

    def open_and_follow() -> Index:
        index = opener()
        if watch:
            followers.append(start_following(index, "acms mcp"))
            # following the project, it answers the reading commands there as `acms watch` does (not with
            # strategies of its own: the command would choose among others)
            if not strategies_dir and (answers := start_answering(index, "acms mcp")) is not None:
                followers.append(answers)
        return index

    try:
        index: Index | None = open_and_follow()
    except StoreMissing as exc:  # serve anyway: the agent connects, and each call names `acms index`
        click.echo(f"acms mcp: note: {exc.message}; every tool answers STORE_MISSING until it has run", err=True)
        index = None
    creator = index_opener(project, store, create=True, strategies_dirs=strategies_dir) if allow_index else None
    server = create_server(index if index is not None else open_and_follow, allow_index=allow_index,
                           create=creator, allow_record=allow_record)
    if index is not None:
        try:
            try:
                index.warm()  # the store handle and the search caches, before the first call
            except OSError as exc:  # caches to build in a read-only index, a full disk
                raise environment_error(exc) or exc from None
        except AcmsError as exc:  # serve anyway: a writer holds the index (calls wait for it), or each call says why
            click.echo(f"acms mcp: note: {exc.message}", err=True)
    try:
        if not http:
            import anyio

            from acms.mcp_server.strict import serve_stdio

            _socket_gone_on_term(followers)
            anyio.run(serve_stdio, server)  # every line read strictly first (a key twice is refused)
            return
        _serve_http(server, host, port)
    finally:
        for follower in followers:
            follower.stop()


def _socket_gone_on_term(followers: list[Any]) -> None:
    """SIGTERM (a supervisor stopping the stdio server, rather than its client closing stdin) takes the
    socket that answers other commands away first, then ends the process as SIGTERM always did."""
    answering = [f for f in followers if isinstance(f, Answering)]
    if not answering:
        return

    def terminate(signum: int, _frame: object) -> None:
        for answers in answering:
            answers.stop()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    signal.signal(signal.SIGTERM, terminate)


def _serve_http(server: object, host: str, port: int) -> None:
    import uvicorn

    from acms.cli.serve_cmd import _run_until_stopped, _url, bind_socket

    sock = bind_socket(host, port)
    sock.listen(128)  # connections queue from now on, so a client may connect as soon as the URL is printed
    from acms.mcp_server.strict import StrictBodies

    app = StrictBodies(server.streamable_http_app(host=host))  # type: ignore[attr-defined]
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    click.echo(f"acms mcp: streamable HTTP at {_url(host, sock.getsockname()[1])}/mcp (Ctrl-C to stop)", err=True)
    sys.stderr.flush()
    _run_until_stopped(uv, sock)
