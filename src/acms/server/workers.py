"""Store work of the endpoint in worker processes that are terminated at the deadline.

A running pyoxigraph query cannot be interrupted from another thread (it is one native call), so a
query abandoned in a thread would go on burning CPU, and block shutdown, until it ends by itself.
Queries, updates and Graph Store requests therefore run in a small pool of worker processes (pebble's
``ProcessPool``: per-task cancel that terminates the worker, a replacement started at once, a worker
that crashes, e.g. on a parser segfault, reported as an error instead of taking the server down).
At the deadline the request is answered 503 and its worker is killed: SIGTERM with the default
action, so the process dies inside the native call; the pool starts a fresh worker. Each worker's
address space is bounded (``RLIMIT_AS``, the ``query_memory_mb`` setting): a query past it fails to
allocate and its worker aborts, which is answered as the bound it passed (``QueryLimitExceeded``).

The readers/writer rules of :mod:`acms.store.lock` hold in each worker: a worker is one more acms
process with its own ``shared`` session (:mod:`acms.service.session`), reading under the shared lock (the
read-only handle is only ever used with the lock held) and writing under the exclusive one. flock
locks die with their process, so a killed worker never leaves the index locked. A write killed at the
deadline is all-or-nothing (measured, DESIGN); the parent then takes the exclusive lock once so that
the generation moves and every reader reopens its handle.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from pebble import ProcessExpired, ProcessPool

from acms.errors import AcmsError, StoreError
from acms.memory import limit_arenas
from acms.server.graph_store import Change, GraphRequest, read_graph, write_graph
from acms.server.service import describe_service
from acms.server.sparql_protocol import Answer, Limits, Operation, run_query, run_update
from acms.sparql.dataset import DefaultGraph
from acms.sparql.runner import memory_limit_error
from acms.service.session import Mode, RemoteTarget, Session, open_session
from acms.store.layout import IndexLayout

__all__ = ["Deadline", "Workers"]

T = TypeVar("T")

_session: Session | None = None  # the worker process's session on the index (set once, at its start)


class Deadline(Exception):
    """The job did not finish in time; its worker was terminated."""


# -- in the worker process --------------------------------------------------------------------------
def _start(index_dir: str, wait: float, remote: RemoteTarget | None = None, memory_mb: int | None = None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # pebble's handler would wait for the native call to end
    if memory_mb and sys.platform != "win32":
        import resource

        limit_arenas(2)  # each thread's arena reserves address space the bound would count
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    global _session
    _session = open_session(IndexLayout(Path(index_dir)), Mode.SHARED, wait=wait, command="acms serve (worker)",
                            remote=remote)


def _index() -> Session:
    assert _session is not None, "worker started without its initializer"
    return _session


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


def _ready() -> None:
    """Nothing: scheduling it starts the pool's processes."""


def query_job(op: Operation, accept: str, limits: Limits, deadline: float) -> Answer:
    with _index().reading(wait=_left(deadline)) as store:
        return run_query(store, op, accept, limits, deadline)


def update_job(op: Operation, limits: Limits, deadline: float) -> None:
    with _index().writing(wait=_left(deadline)) as store:
        run_update(store, op, limits)


def read_graph_job(request: GraphRequest, mode: DefaultGraph, accept: str, deadline: float) -> Answer:
    with _index().reading(wait=_left(deadline)) as store:
        return read_graph(store, request, mode, accept)


def write_graph_job(request: GraphRequest, change: Change, body: bytes, content_type: str, deadline: float) -> int:
    with _index().writing(wait=_left(deadline)) as store:
        return write_graph(store, request, change, body, content_type)


def service_job(endpoint: str, limits: Limits, accept: str, deadline: float) -> Answer:
    with _index().reading(wait=_left(deadline)) as store:
        return describe_service(store, endpoint, limits, accept)


# -- in the server ----------------------------------------------------------------------------------
class Workers:
    """The pool: ``run`` a job with a deadline from the event loop; ``close`` ends every worker now."""

    def __init__(self, session: Session, count: int, memory_mb: int | None = None) -> None:
        self.session = session
        self.memory_mb = memory_mb
        self._pool = ProcessPool(max_workers=count, initializer=_start,
                                 initargs=(str(session.layout.root), session.wait, session.remote, memory_mb),
                                 context=multiprocessing.get_context("spawn"))  # fork is unsafe in a threaded server
        self.running = 0  # jobs submitted and not yet finished or terminated
        self._pool.schedule(_ready)  # start the workers now, not at the first request


    async def run(self, deadline: float, job: Callable[..., T], *args: Any, writes: bool = False) -> T:
        """The job's result, or ``Deadline`` once ``deadline`` passed (the worker is terminated then)."""
        future = self._pool.schedule(job, args=(*args, deadline))
        self.running += 1
        try:
            with anyio.move_on_after(_left(deadline)):
                return await asyncio.wrap_future(future)  # cancelling the wait cancels the job
        except ProcessExpired as exc:
            if self.memory_mb and exc.exitcode == -signal.SIGABRT:  # an allocation past RLIMIT_AS aborts
                raise memory_limit_error(self.memory_mb) from None
            raise StoreError(f"the worker process ended abnormally (exit code {exc.exitcode}); the request "
                             "was not answered") from None
        except MemoryError:
            raise memory_limit_error(self.memory_mb or 0) from None
        finally:
            self.running -= 1
        future.cancel()  # pebble terminates the worker of a started job
        if writes:
            await anyio.to_thread.run_sync(self._settle_write)
        raise Deadline()

    def _settle_write(self) -> None:
        """A write killed at its deadline applied all of it or none; move the generation either way."""
        try:
            self.session.settle()
        except AcmsError:
            pass  # another writer holds it: its release moves the generation too

    def close(self) -> None:
        self._pool.stop()
        self._pool.join(timeout=5)
