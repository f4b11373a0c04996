"""``acms serve``: the SPARQL endpoint and the render API on 127.0.0.1."""

from __future__ import annotations

import socket
from pathlib import Path

import click

from acms.cli.assemble_cmd import open_searcher, strategies_option
from acms.cli.common import boundary, project_options
from acms.errors import UsageError
from acms.strategies.registry import StrategyRegistry


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind (loopback by default).")
@click.option("--port", type=int, default=8077, show_default=True, help="TCP port.")
@click.option("--allow-update", is_flag=True, help="Accept SPARQL updates (refused with 403 otherwise).")
@click.option("--query-timeout", type=float, default=10.0, show_default=True, help="Seconds before a query gets 503.")
@strategies_option
@project_options
@boundary
def serve_cmd(host: str, port: int, allow_update: bool, query_timeout: float, strategies_dir: tuple[Path, ...],
              project: Path, store: Path | None) -> None:
    """Serve /sparql (SPARQL 1.1 Protocol), POST /v0/render, GET /health and GET /v0/strategies.

    The server holds the index open: stop it before running `acms index` on the same project.
    """
    import uvicorn

    from acms.server.app import ServerConfig, create_app

    with socket.socket() as probe:
        if probe.connect_ex((host, port)) == 0:
            raise UsageError(f"port {port} on {host} is already in use; pick another with --port")
    graph, searcher = open_searcher(project, store)
    try:
        app = create_app(searcher, StrategyRegistry.default(strategies_dir),
                         ServerConfig(allow_update=allow_update, query_timeout_s=query_timeout))
        click.echo(f"acms serving http://{host}:{port}/sparql and /v0/render (Ctrl-C to stop)", err=True)
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        graph.close()
