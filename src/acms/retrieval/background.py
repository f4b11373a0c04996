"""A call run in a thread of its own, for work that waits on the disk or the store without the GIL."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Background"]


class Background:
    """A call run in a thread, its result (or its error) taken by ``result``: work that waits on the store or
    the disk without the GIL, beside work here that holds it."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self._result: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(call,), name="acms-background", daemon=True)
        self._thread.start()

    def _run(self, call: Callable[[], Any]) -> None:
        try:
            self._result = call()
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread, by result()
            self._error = exc

    def wait(self) -> None:
        self._thread.join()

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result
