"""Progress of ``acms index`` on stderr: a bar with counts and ETA on a terminal
(``click.progressbar``), one line now and then elsewhere (a log, CI), nothing with ``--quiet``."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from acms.results import NullProgress, Progress

LINE_EVERY = 10.0  # seconds between two one-line reports off a terminal


class BarProgress:
    """One ``click.progressbar`` per phase, opened once the amount of work is known; until then (or for
    a phase whose total is never known, such as an export's stream) a running count on one line."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._phase, self._done, self._counting = "", 0, False

    def start(self, phase: str, total: int | None = None) -> None:
        self._close()
        self._phase = phase
        if total:
            self._open(total)

    def update(self, done: int, total: int | None = None) -> None:
        if self._bar is None and total:
            self._open(total)
        if self._bar is not None and done > self._done:
            self._bar.update(done - self._done)
            self._done = done
        elif self._bar is None and done:
            click.echo(f"\r{self._phase:<11} {done:,}", err=True, nl=False)
            self._counting = True

    def finish(self, phase: str) -> None:
        self._close()

    def _open(self, total: int) -> None:
        self._bar = click.progressbar(length=total, label=f"{self._phase:<11}", file=sys.stderr, show_eta=True,
                                      show_pos=True, width=30)
        self._bar.__enter__()
        self._done = 0

    def _close(self) -> None:
        if self._counting:
            click.echo("", err=True)
            self._counting = False
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


class LineProgress:
    """``acms: parsing 480/1200 (40%), eta 12s`` at most every ``every`` seconds, for logs; with
    ``per_phase`` (``--progress`` off a terminal) also one line as each phase ends."""

    def __init__(self, every: float = LINE_EVERY, per_phase: bool = False) -> None:
        self.every, self.per_phase = every, per_phase
        self._phase, self._total, self._done, self._started, self._last = "", None, 0, 0.0, time.monotonic()
        self._base: tuple[float, int] | None = None  # (time, done) of the phase's first report

    def start(self, phase: str, total: int | None = None) -> None:
        self._phase, self._total, self._done, self._started = phase, total, 0, time.monotonic()
        self._base = None

    def update(self, done: int, total: int | None = None) -> None:
        self._total, self._done = total or self._total, done
        now = time.monotonic()
        if self._base is None:
            # The rate is measured from the first report: work before it (the LSA fit before the first
            # batch of vectors) is no part of what is left, so it must not stretch the ETA.
            self._base = (now, done)
        if now - self._last < self.every:
            return
        self._last = now
        line = f"acms: {self._phase} {done}" + (f"/{self._total}" if self._total else "")
        if self._total and done:
            line += f" ({100 * done // self._total}%)"
            since, first = self._base
            if done > first and now > since:
                line += f", eta {(now - since) * (self._total - done) / (done - first):.0f}s"
        click.echo(line, err=True)

    def finish(self, phase: str) -> None:
        if self.per_phase:
            count = f" {self._done}" + (f"/{self._total}" if self._total else "") if self._done else ""
            click.echo(f"acms: {phase}{count} done ({time.monotonic() - self._started:.2f}s)", err=True)


def reporter(mode: bool | None, machine_output: bool) -> Progress:
    """``mode``: True (``--progress``), False (``--quiet``) or None (by default: a bar on a terminal,
    periodic lines elsewhere, nothing when the output is JSON for a program)."""
    if mode is False or (mode is None and machine_output):
        return NullProgress()
    if sys.stderr.isatty():
        return BarProgress()
    return LineProgress(every=1.0, per_phase=True) if mode else LineProgress()


class Phases:
    """A reporter driven by phases as context managers (how the embedding store reports a fit and
    the vectors of ``acms reindex --embeddings``)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    @contextmanager
    def phase(self, name: str, total: int | None = None) -> Iterator[None]:
        self.progress.start(name, total)
        yield
        self.progress.finish(name)

    def update(self, done: int, total: int | None = None) -> None:
        self.progress.update(done, total)
