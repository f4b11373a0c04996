"""A large first index writes its files in a process of its own, so the phases after it start from a
clean heap.

Why: the files' phase builds and drops a few hundred MB of small Python objects group after group,
and the few that outlive it (the run's report, cached names and terms) pin the allocator's arenas:
before fitting, an index process of 4x the standard library held 248 MB of pymalloc arenas for
17 MB of live objects, and 456 MB resident in all, on top of which fitting and the caches built
their own peaks (1.05 and 1.2 GB). No trim gives those arenas back; a process that ends does. So
``acms index`` stays the coordinator: it holds the index lock and the run's ``atomic()`` bracket
(checkpoint and pending-run marker), lends its store's files to a child process that runs
:func:`acms.service.indexing.stream.stream_first_index` on them (the write mode :class:`ChildProcess`), takes the child's report back, and
runs the later phases (tiers, embeddings, caches) itself, from a heap that never held the files.

All or nothing as before: the child writes inside the parent's bracket; its error (sent back and
raised here) or its death (a signal, the OOM killer) rolls the run back, and a ``kill -9`` of the
parent takes the child with it (``PR_SET_PDEATHSIG``) and leaves the marker for the next writer.
Small projects (under ``SEPARATE_BYTES`` of listed files) stay in one process: a child's start-up
(~0.5 s) is not worth it where the files' phase holds little; so do migrations and remote stores.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
from dataclasses import dataclass
from datetime import datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from acms.config import Settings
from acms.errors import StoreError
from acms.ingest.walker import Listing
from acms.lifetime import die_with_parent
from acms.memory import collecting_rarely, limit_arenas
from acms.service.indexing.context import RunContext
from acms.service.indexing.report import IndexReport
from acms.service.indexing.stream import prepare_spill, stream_first_index
from acms.store.factory import open_lent
from acms.store.protocol import SupportsCheckpoint

__all__ = ["SEPARATE_BYTES", "ChildProcess", "separate", "stream_in_child"]

SEPARATE_BYTES = 24 << 20  # listed bytes from which a first index's files are written by a child process
ARENAS = 2  # glibc malloc arenas in the child (``acms.memory.limit_arenas``)


class ChildProcess:
    """The write mode of a large first index on a store that can lend its files: the streamed first
    index, in a child process."""

    def write(self, run: RunContext, listing: Listing) -> None:
        prepare_spill(run)
        stream_in_child(run, listing)  # the later phases then start from a heap that never held the files


def separate(run: RunContext, listing: Listing) -> bool:
    """Whether this streamed first index writes its files in a child process."""
    store = run.store
    return (isinstance(store, SupportsCheckpoint) and store.can_lend()
            and sum(f.size for f in listing.files) >= SEPARATE_BYTES)


@dataclass(frozen=True)
class _Job:
    root: Path
    store: Path
    settings: Settings
    listing: Listing
    report: IndexReport
    started: datetime
    head: str | None
    parent: int  # the coordinator's pid
    spill: Path | None  # where the files' corpus rows go (``RunContext.corpus_spill``)


class _PipeProgress:
    """The child's progress, forwarded to the parent's reporter."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def start(self, phase: str, total: int | None = None) -> None:
        self.conn.send(("progress", "start", (phase, total)))

    def update(self, done: int, total: int | None = None) -> None:
        self.conn.send(("progress", "update", (done, total)))

    def finish(self, phase: str) -> None:
        self.conn.send(("progress", "finish", (phase,)))


def stream_in_child(run: RunContext, listing: Listing) -> None:
    """``stream_first_index(run, listing)`` in a child process; the child's report becomes ``run.report``."""
    store = run.store
    assert isinstance(store, SupportsCheckpoint)
    ctx = multiprocessing.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    with store.lent() as path:
        job = _Job(run.root, path, run.settings, listing, run.report, run.started, run.head, os.getpid(),
                   run.corpus_spill)
        proc = ctx.Process(target=_child_main, args=(job, send), name="acms-index-files")
        proc.start()
        send.close()  # the child holds the only sending end: EOF here means it is gone
        outcome: tuple[Any, ...] | None = None
        try:
            while outcome is None:
                try:
                    message = receive.recv()
                except EOFError:
                    break
                if message[0] == "progress":
                    getattr(run.progress, message[1])(*message[2])
                else:
                    outcome = message
        except BaseException:
            proc.kill()  # an interrupted parent stops the child before the run rolls back
            raise
        finally:
            proc.join()
            receive.close()
    if outcome is None:
        code = proc.exitcode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        raise StoreError(f"the process writing the index's files ended without finishing ({how}); "
                         "the index is as it was before this run")
    if outcome[0] == "error":
        raise _rebuilt(*outcome[1:])
    run.report.__dict__.update(outcome[1].__dict__)
    run.symbols = outcome[2]  # the symbol table the files made, for the next run's linking
    run.outlines = outcome[3]  # and the modules' link outlines


def _child_main(job: _Job, conn: Connection) -> None:
    """The child: write the files into the lent store; send the report, or the error."""
    die_with_parent()
    if os.getppid() != job.parent:  # the parent died before the kernel was told
        os._exit(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent, which stops this process
    limit_arenas(ARENAS)
    try:
        store = open_lent(job.store)
        try:
            run = RunContext(job.root, store, job.settings, progress=_PipeProgress(conn))
            run.adopt(job.started, job.report, job.head)
            run.corpus_spill = job.spill
            with collecting_rarely():
                stream_first_index(run, job.listing)
        finally:
            store.close()  # flushed and closed here, before the parent opens the files again
        conn.send(("done", run.report, run.symbols, run.outlines))
    except BaseException as exc:  # noqa: BLE001  (every failure goes back to the parent, which rolls back)
        _send_error(conn, exc)
    finally:
        conn.close()


def _send_error(conn: Connection, exc: BaseException) -> None:
    """The exception's class, arguments and picklable attributes; its text alone if even that fails."""
    attrs = {}
    for key, value in exc.__dict__.items():
        try:
            pickle.dumps(value)
        except Exception:  # noqa: BLE001
            continue
        attrs[key] = value
    try:
        conn.send(("error", type(exc), exc.args, attrs, str(exc)))
    except Exception:  # noqa: BLE001  (a class or argument that does not pickle)
        conn.send(("error", StoreError, (str(exc),), {}, str(exc)))


def _rebuilt(cls: type[BaseException], args: tuple[Any, ...], attrs: dict[str, Any], text: str) -> BaseException:
    """The child's exception as the parent raises it: same class and attributes (an ``AcmsError``
    keeps its exit code and message); anything that cannot be rebuilt becomes a ``StoreError``."""
    try:
        exc = cls.__new__(cls, *args)
        exc.args = args
        exc.__dict__.update(attrs)
        return exc
    except Exception:  # noqa: BLE001
        return StoreError(f"the process writing the index's files failed: {text}")
