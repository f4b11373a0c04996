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
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
from pebble import ProcessExpired, ProcessPool

from acms.api import endpoint
from acms.errors import AcmsError, StoreError
from acms.results import Session

__all__ = ["Deadline", "Workers"]

T = TypeVar("T")

# The jobs, run in a worker process (each with its own ``shared`` session, see ``endpoint.start_worker``).
query_job, update_job, service_job = endpoint.query_job, endpoint.update_job, endpoint.service_job
read_graph_job, write_graph_job = endpoint.read_graph_job, endpoint.write_graph_job


class Deadline(Exception):  # noqa: N818 - a signal between the pool and the endpoint, never shown to a client
    """The job did not finish in time; its worker was terminated (the endpoint answers ``Unavailable``)."""


def _left(deadline: float) -> float:
    return endpoint.left(deadline)


# -- in the server ----------------------------------------------------------------------------------
class Workers:
    """The pool: ``run`` a job with a deadline from the event loop; ``close`` ends every worker now."""

    def __init__(self, session: Session, count: int, memory_mb: int | None = None) -> None:
        self.session = session
        self.memory_mb = memory_mb
        self._pool = ProcessPool(max_workers=count, initializer=endpoint.start_worker,
                                 initargs=(str(session.layout.root), session.wait, session.remote, memory_mb),
                                 context=multiprocessing.get_context("spawn"))  # fork is unsafe in a threaded server
        self.running = 0  # jobs submitted and not yet finished or terminated
        self._pool.schedule(endpoint.ready)  # start the workers now, not at the first request


    async def run(self, deadline: float, job: Callable[..., T], *args: Any, writes: bool = False) -> T:
        """The job's result, or ``Deadline`` once ``deadline`` passed (the worker is terminated then)."""
        future = self._pool.schedule(job, args=(*args, deadline))
        self.running += 1
        waiting = asyncio.wrap_future(future)
        try:
            with anyio.move_on_after(_left(deadline)):
                return await asyncio.shield(waiting)
        except asyncio.CancelledError:
            # Cancelled from outside: the server is stopping (uvicorn cancels what outlives its grace).
            # Terminating the worker now would make the pool start a replacement while ``close`` tears the
            # pool down, and that replacement dies on the closed channels with a traceback. ``close``
            # ends the worker; should the server go on, the job still ends at its deadline.
            asyncio.get_running_loop().call_later(_left(deadline), future.cancel)
            raise
        except ProcessExpired as exc:
            if self.memory_mb and exc.exitcode == endpoint.ABORTED:  # an allocation past RLIMIT_AS aborts
                raise endpoint.memory_error(self.memory_mb) from None
            raise StoreError(f"the worker process ended abnormally (exit code {exc.exitcode}); the request "
                             "was not answered") from None
        except MemoryError:
            raise endpoint.memory_error(self.memory_mb or 0) from None
        finally:
            self.running -= 1
        future.cancel()  # the deadline passed: pebble terminates the worker of a started job
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
