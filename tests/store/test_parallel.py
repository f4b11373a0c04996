"""Reads of one request run at once (``acms.store.parallel``): the same answers as one after another, in
the calls' order, every call finished before a failure is raised, and no wait on a busy pool."""

from __future__ import annotations

import threading
import time

import pytest

from acms.service.assembly import assemble
from acms.store import parallel
from acms.store.oxigraph import OxigraphStore
from acms.store.parallel import run_all

from ..strategies.test_assembly import project, request, session  # noqa: F401  (module fixtures: one index)


class _Parallel:
    parallel_reads = True


class _OneAtATime:
    parallel_reads = False


def test_results_come_in_the_calls_order_and_two_threads_share_them() -> None:
    seen: set[str] = set()

    def call(i: int) -> int:
        seen.add(threading.current_thread().name)
        time.sleep(0.02)
        return i * i

    assert run_all(_Parallel(), [lambda i=i: call(i) for i in range(6)]) == [0, 1, 4, 9, 16, 25]
    assert len(seen) == 2 and threading.current_thread().name in seen
    seen.clear()
    assert run_all(_OneAtATime(), [lambda i=i: call(i) for i in range(3)]) == [0, 1, 4]
    assert seen == {threading.current_thread().name}


def test_the_first_failure_in_order_is_raised_after_every_call_finished() -> None:
    done: list[int] = []

    def slow_ok() -> int:
        time.sleep(0.05)
        done.append(1)
        return 1

    def fails(message: str) -> int:
        raise ValueError(message)

    with pytest.raises(ValueError, match="first"):
        run_all(_Parallel(), [slow_ok, lambda: fails("first"), slow_ok, lambda: fails("second")])
    assert done == [1, 1]  # neither slow call was left running


def test_a_call_on_the_pool_runs_its_own_calls_in_its_thread() -> None:
    """Two workers waiting for each other's queued calls would never finish: inside a worker, the calls
    of a nested run_all run in that worker."""
    def nested() -> list[int]:
        return run_all(_Parallel(), [lambda: 1, lambda: 2])

    started = time.perf_counter()
    assert run_all(_Parallel(), [nested, nested, nested]) == [[1, 2]] * 3
    assert time.perf_counter() - started < 5


def test_a_busy_pool_does_not_hold_a_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another request's call holds the one pool thread: this request's calls all run in its own thread
    and it returns without waiting for the pool."""
    release = threading.Event()
    blocker = parallel._executor().submit(release.wait, 10)
    try:
        started = time.perf_counter()
        assert run_all(_Parallel(), [lambda: 1, lambda: 2, lambda: 3]) == [1, 2, 3]
        assert time.perf_counter() - started < 1
    finally:
        release.set()
        blocker.result()


def test_the_walk_at_once_assembles_what_it_assembles_one_read_after_another(
        session, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The walk's first steps, both ways of a hop and the two halves of the heads' read run at once on
    the embedded store; the context is the same, text for text, as with every read one after another."""
    searcher, reg = session
    tasks = [("parse header lines", {}), ("what uses normalize", {"focus": ["pkg.util.normalize"]}),
             ("how are settings loaded and validated", {})]
    at_once = [assemble(request(t, 3000, **extra), searcher, reg).assembled.rendered for t, extra in tasks]
    monkeypatch.setattr(OxigraphStore, "parallel_reads", False)
    one_by_one = [assemble(request(t, 3000, **extra), searcher, reg).assembled.rendered for t, extra in tasks]
    assert at_once == one_by_one
    assert all("###" in text for text in at_once)
