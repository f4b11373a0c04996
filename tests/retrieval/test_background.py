"""A call run in a thread (``acms.retrieval.background``): its result, or its error raised again in the
caller's thread, never lost; ``wait`` joins without raising (a caller leaving on its own error)."""

from __future__ import annotations

import threading

import pytest

from acms.retrieval.background import Background


def test_the_result_comes_from_another_thread() -> None:
    ran_in: list[str] = []
    call = Background(lambda: ran_in.append(threading.current_thread().name) or 42)
    assert call.result() == 42
    assert ran_in and ran_in[0] != threading.current_thread().name


def test_an_error_in_the_thread_is_raised_by_result_and_not_by_wait() -> None:
    def fails() -> None:
        raise OSError(28, "No space left on device")

    call = Background(fails)
    call.wait()  # joined, nothing raised: a caller already leaving on an error of its own
    with pytest.raises(OSError, match="No space left"):
        call.result()
