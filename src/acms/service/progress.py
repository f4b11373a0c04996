"""What an index run tells a watcher: phases starting and ending, with counts where there are any.

The run calls ``start(phase, total)``, then ``update(done)`` as work is done, then ``finish(phase)``;
``total`` is None when the amount of work is not known in advance (listing files). The CLI draws this
with ``click.progressbar`` on a terminal and as periodic one-line reports elsewhere
(:mod:`acms.cli.progress`); a test injects faults at phase boundaries through the same hook.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["PHASES", "NullProgress", "Progress"]

# The phases of an index run, in order (a run that finds nothing to do skips the middle ones).
PHASES = ("listing", "indexing", "reading", "diff", "parsing", "relinking", "emitting", "linking", "rules", "versions", "validation",
          "store", "history", "copies", "tiers", "secrets", "caches", "fitting", "embeddings", "vectors")


class Progress(Protocol):
    def start(self, phase: str, total: int | None = None) -> None: ...

    def update(self, done: int, total: int | None = None) -> None: ...

    def finish(self, phase: str) -> None: ...


class NullProgress:
    """Reports nothing (the Python API's default)."""

    def start(self, phase: str, total: int | None = None) -> None:
        pass

    def update(self, done: int, total: int | None = None) -> None:
        pass

    def finish(self, phase: str) -> None:
        pass
