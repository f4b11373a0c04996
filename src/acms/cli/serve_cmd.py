"""``acms serve``: the SPARQL endpoint and the render API on uvicorn, 127.0.0.1 by default."""

from __future__ import annotations

import errno
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from acms.cli.assemble_cmd import strategies_option
from acms.cli.common import boundary, open_index, project_options
from acms.errors import UsageError

if TYPE_CHECKING:
    import uvicorn

    from acms.server.sparql_protocol import SparqlEndpoint


def bind_socket(host: str, port: int) -> socket.socket:
    """A socket bound to host:port for uvicorn to listen on, or a one-line UsageError saying why not."""
    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror:
        raise UsageError(f"cannot resolve --host {host!r}") from None
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: TIME_WAIT is no conflict
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise UsageError(f"port {port} on {host} is already in use; pick another with --port") from None
        if exc.errno == errno.EACCES:
            raise UsageError(f"no permission to bind port {port} on {host} (ports below 1024 need privileges)") from None
        if exc.errno == errno.EADDRNOTAVAIL:
            raise UsageError(f"{host} is not an address of this machine") from None
        raise UsageError(f"cannot bind {host}:{port}: {exc.strerror or exc}") from None
    return sock


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind (loopback by default).")
@click.option("--port", type=click.IntRange(0, 65535), default=8077, show_default=True,
              help="TCP port (0: any free port, printed at start).")
@click.option("--allow-update", is_flag=True, help="Accept SPARQL updates (refused with 403 otherwise).")
@click.option("--query-timeout", type=click.FloatRange(min=0.001), default=10.0, show_default=True,
              help="Seconds after which a SPARQL request is answered 503.")
@click.option("--max-rows", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Most rows (or triples) a query may return; more is answered 413.")
@strategies_option
@project_options
@boundary
def serve_cmd(host: str, port: int, allow_update: bool, query_timeout: float, max_rows: int,
              strategies_dir: tuple[Path, ...], project: Path, store: Path | None) -> None:
    """Serve /sparql (SPARQL 1.1 Protocol), POST /v0/render, GET /health and GET /v0/strategies.

    The server shares the index: other acms commands (an `acms index` too) run beside it. Each request
    reads under the index's shared lock; after another process wrote the index, the next request sees
    the new state.

    \b
    Examples:
      acms serve
      acms serve --port 9000 --query-timeout 30 --max-rows 50000
      curl -H 'Accept: text/csv' --data-urlencode 'query=SELECT * WHERE { GRAPH ?g { ?s a uko:Class } }' \\
           http://127.0.0.1:8077/sparql
    """
    import uvicorn  # the server stack is only imported by this command

    from acms.server.app import create_app

    index = open_index(project, store, shared=True, strategies_dirs=strategies_dir)  # StoreMissing: exit 4
    with index.reading():  # the index is readable now (StoreLocked after --wait: one line, exit 4)
        pass
    sock = bind_socket(host, port)
    app = create_app(index, allow_update=allow_update, query_timeout_s=query_timeout, max_rows=max_rows)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    url = _url(host, sock.getsockname()[1])
    mode = "read-write" if allow_update else "read-only"
    click.echo(f"acms: serving {url}  (SPARQL {url}/sparql, {mode}; render {url}/v0/render; Ctrl-C to stop)",
               err=True)
    _run_until_stopped(server, sock)
    _wait_for_running(app.state.sparql)
    click.echo("acms: stopped", err=True)


class _Terminated(Exception):
    pass


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


def _run_until_stopped(server: uvicorn.Server, sock: socket.socket) -> None:
    """Serve until Ctrl-C or SIGTERM. uvicorn shuts down gracefully, then re-raises the signal it
    caught: with these handlers that ends here, so the store is closed and the exit code is 0."""
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        server.run(sockets=[sock])
    except (KeyboardInterrupt, _Terminated):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)


def _wait_for_running(sparql: SparqlEndpoint) -> None:
    """Queries abandoned at their timeout may still run inside pyoxigraph: wait, or leave on Ctrl-C."""
    if not sparql.running:
        return
    click.echo(f"acms: waiting for {sparql.running} query(ies) still running inside pyoxigraph, which cannot "
               "interrupt them; Ctrl-C again to quit now", err=True)
    try:
        while sparql.running:
            time.sleep(0.1)
    except KeyboardInterrupt:
        sys.stderr.flush()
        os._exit(130)  # every store write is one atomic call (kill -9 safe, see DESIGN): no close needed
