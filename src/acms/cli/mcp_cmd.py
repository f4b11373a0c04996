"""``acms mcp``: serve the index to coding agents over the Model Context Protocol."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from acms.cli.assemble_cmd import strategies_option
from acms.cli.common import boundary, open_index, project_options, start_following, watch_option
from acms.errors import AcmsError


@click.command("mcp")
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface for --http (loopback by default).")
@click.option("--port", type=click.IntRange(0, 65535), default=8078, show_default=True,
              help="TCP port for --http (0: any free port, printed at start).")
@click.option("--allow-index", is_flag=True, help="Offer the `index` tool, which lets the agent refresh the index.")
@watch_option
@strategies_option
@project_options
@boundary
def mcp_cmd(http: bool, host: str, port: int, allow_index: bool, watch: bool, strategies_dir: tuple[Path, ...],
            project: Path, store: Path | None) -> None:
    """Serve this project's index to a coding agent over MCP (stdio by default).

    Tools: assemble, search, sparql (read-only), describe, history, explore, and index with
    --allow-index. Resources: the UKO ontology and the saved queries. The server keeps the store and
    its caches warm between calls and takes the index's shared lock per call, so `acms index` runs
    beside it and the next call sees the new index. It follows the project (--no-watch: it does not):
    saved files are re-indexed shortly after, and every call first looks for files changed on disk
    (the `refresh` setting: auto, warn, off), so no answer points at lines that moved.

    \b
    Examples:
      acms mcp                                  (what an agent starts: stdio, this folder's index)
      claude mcp add --scope project acms -- acms mcp
      acms mcp --http --port 8078               (streamable HTTP at http://127.0.0.1:8078/mcp)
    """
    from acms.mcp_server.server import create_server  # the MCP stack is only imported by this command

    index = open_index(project, store, shared=True, strategies_dirs=strategies_dir)  # missing: exit 4
    server = create_server(index, allow_index=allow_index)
    try:
        index.warm()  # the store handle and the search caches, before the first call
    except AcmsError as exc:  # a writer holds the index: serve anyway, calls wait for it
        click.echo(f"acms mcp: note: {exc.message}", err=True)
    follower = start_following(index, "acms mcp") if watch else None
    try:
        if not http:
            server.run("stdio")
            return
        _serve_http(server, host, port)
    finally:
        if follower is not None:
            follower.stop()


def _serve_http(server: object, host: str, port: int) -> None:
    import uvicorn

    from acms.cli.serve_cmd import _run_until_stopped, _url, bind_socket

    sock = bind_socket(host, port)
    sock.listen(128)  # connections queue from now on, so a client may connect as soon as the URL is printed
    app = server.streamable_http_app(host=host)  # type: ignore[attr-defined]
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    click.echo(f"acms mcp: streamable HTTP at {_url(host, sock.getsockname()[1])}/mcp (Ctrl-C to stop)", err=True)
    sys.stderr.flush()
    _run_until_stopped(uv, sock)
