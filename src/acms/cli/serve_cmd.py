"""``acms serve``: the SPARQL endpoint and the render API on uvicorn, 127.0.0.1 by default."""

from __future__ import annotations

import errno
import signal
import socket
from pathlib import Path
from typing import TYPE_CHECKING

import click

from acms.cli.assemble_cmd import strategies_option
from acms.cli.common import boundary, open_index, project_argument, project_options, start_following, watch_option
from acms.cli.watch_cmd import start_answering
from acms.errors import UsageError
from acms.results import DefaultGraph
from acms.tokens import preload as preload_tokenizer

if TYPE_CHECKING:
    import uvicorn


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
@click.option("--allow-update", is_flag=True,
              help="Accept SPARQL updates and Graph Store writes (PUT/POST/DELETE /store); 403 otherwise.")
@click.option("--allow-record", is_flag=True,
              help="Accept POST /v0/decisions, which records a design decision in the index; 403 otherwise.")
@click.option("--allow-service", is_flag=True, help="Permit SERVICE in queries (the store would call the remote "
                                                    "endpoint); refused with 400 otherwise.")
@click.option("--default-graph", "default_graph", type=click.Choice([m.value for m in DefaultGraph]),
              default=DefaultGraph.CURRENT.value, show_default=True,
              help="The default graph when a request names none: " + "; ".join(f"{m.value}: {m.help}"
                                                                                for m in DefaultGraph) + ".")
@click.option("--query-timeout", type=click.FloatRange(min=0.001), default=10.0, show_default=True,
              help="Seconds after which a SPARQL request is answered 503 and its evaluation is stopped.")
@click.option("--max-rows", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Most rows (or triples) a query may return; more is answered 413.")
@click.option("--workers", type=click.IntRange(min=1, max=32), default=2, show_default=True,
              help="Worker processes that evaluate SPARQL requests (requests beyond them wait, up to the timeout).")
@watch_option
@strategies_option
@project_options
@project_argument
@boundary
def serve_cmd(host: str, port: int, allow_update: bool, allow_record: bool, allow_service: bool, default_graph: str,
              query_timeout: float, max_rows: int, workers: int, watch: bool, strategies_dir: tuple[Path, ...],
              project: Path, store: Path | None) -> None:
    """Serve the index over HTTP: /sparql, /store, the render API and the /v0 reads.

    /sparql is the SPARQL 1.1 Protocol, /store the Graph Store Protocol; POST /v0/render answers a
    render_request.v0; GET /health, /v0/strategies and the /v0 reads (stats, describe, neighbourhood,
    tiers, decisions); with --allow-record, POST /v0/decisions records a decision.

    The server shares the index: other acms commands (an `acms index` too) run beside it. Each request
    reads under the index's shared lock; after another process wrote the index, the next request sees
    the new state. It follows the project (--no-watch: it does not): saved files are re-indexed shortly
    after, and every request first looks for files changed on disk (the `refresh` setting: auto, warn,
    off). SPARQL runs in worker processes that are stopped at the timeout. GET /sparql
    without a query returns the service description; GET /store?graph=IRI (or ?default) a graph.

    \b
    Examples:
      acms serve
      acms serve --port 9000 --query-timeout 30 --max-rows 50000
      curl -H 'Accept: text/csv' --data-urlencode 'query=SELECT * WHERE { GRAPH ?g { ?s a uko:Class } }' \\
           http://127.0.0.1:8077/sparql
    """
    import uvicorn  # the server stack is only imported by this command

    from acms.server.app import create_app

    preload_tokenizer()  # the first /v0/render does not wait for it: it loads while the server starts
    index = open_index(project, store, shared=True, strategies_dirs=strategies_dir)  # StoreMissing: exit 4
    with index.reading():  # the index is readable now (StoreLocked after --wait: one line, exit 4)
        pass
    sock = bind_socket(host, port)
    app = create_app(index, allow_update=allow_update, allow_service=allow_service,
                     default_graph=DefaultGraph(default_graph), query_timeout_s=query_timeout, max_rows=max_rows,
                     workers=workers, allow_record=allow_record)
    # Requests still waiting at shutdown are cancelled after a second: their worker processes are terminated.
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1))
    url = _url(host, sock.getsockname()[1])
    mode = "read-write" if allow_update else "read-only"
    click.echo(f"acms: serving {url}  (SPARQL {url}/sparql, {mode}; render {url}/v0/render; Ctrl-C to stop)",
               err=True)
    follower = start_following(index, "acms serve") if watch else None
    # following the project, it answers the reading commands there as `acms watch` does (not with
    # strategies of its own: the command would choose among others)
    answers = start_answering(index, "acms serve") if watch and not strategies_dir else None
    try:
        _run_until_stopped(server, sock)
    finally:
        if answers is not None:
            answers.stop()
        app.state.sparql.close()  # first: a query still running in a worker holds the lock a refresh may wait for
        if follower is not None:
            follower.stop()
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
