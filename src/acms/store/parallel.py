"""Reads of one request that need not wait for each other, run on two threads where the store allows it.

pyoxigraph releases the GIL while it evaluates a query: four of an assembly's queries took 209-234 ms
one after another and 115-120 ms on two threads (standard library, two cores). A store says it reads
in parallel with a true ``parallel_reads`` attribute (the embedded Oxigraph store); a remote store's
client is one ``requests`` session, not documented as safe across threads, so its reads stay one after
another. A call made from one of the pool's own threads runs its calls in that thread: two busy workers
would otherwise wait for each other's queued calls.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["WORKERS", "run_all"]

T = TypeVar("T")
WORKERS = 2  # the cores the machines acms is measured on have; a third thread only waits for the GIL

_pool: ThreadPoolExecutor | None = None
_made = threading.Lock()
_inside = threading.local()


def run_all(store: object, calls: Sequence[Callable[[], T]]) -> list[T]:
    """The calls' results, in their order. When ``store`` reads in parallel, this thread and one of the
    pool take the calls in their order, each the next one left as it finishes the last; else one after
    another. Every call started has finished when this returns or raises; what the first failing call
    (in their order) raised is raised again."""
    if len(calls) < 2 or not getattr(store, "parallel_reads", False) or getattr(_inside, "worker", False):
        return [call() for call in calls]
    results: list[T | None] = [None] * len(calls)
    failed: list[BaseException | None] = [None] * len(calls)
    left = list(range(len(calls)))
    taking = threading.Lock()

    def drain() -> None:
        while True:
            with taking:
                if not left:
                    return
                i = left.pop(0)
            try:
                results[i] = calls[i]()
            except BaseException as exc:  # noqa: BLE001 -- raised again below, in the calls' order
                failed[i] = exc

    helper = _executor().submit(_as_worker, drain)
    drain()
    if not helper.cancel():  # started: it may be inside a call
        helper.result()
    for exc in failed:
        if exc is not None:
            raise exc
    return results  # type: ignore[return-value]


def _as_worker(call: Callable[[], None]) -> None:
    _inside.worker = True
    call()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _made:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=WORKERS - 1, thread_name_prefix="acms-read")
        return _pool
