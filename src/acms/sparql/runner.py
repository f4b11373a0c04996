"""A user's query in a child process, under a time limit and a memory bound, killed when it passes either.

pyoxigraph cannot stop a running query: ``Store.query`` takes no timeout or cancellation token, and its
evaluation (an ``ORDER BY`` over a cartesian product grew past 2 GB in 5 s and 17 GB in 86 s) runs in
native code that a thread can neither interrupt nor bound. Abandoning it in a thread would leave it
burning memory until the OOM killer came. So a query a user wrote runs in a child process
(``python -m acms.sparql.child``) that opens the index read-only (``Store.read_only``) under
``RLIMIT_AS``, evaluates the query and writes the answer to a file. The parent waits for it until the
deadline and kills it (SIGKILL) there: the work stops, it is not abandoned. A query that passes its
memory bound fails to allocate and the child aborts (Rust's allocation failure, or Python's
``MemoryError``), which the parent reports as the bound it passed.

The answer is read back by pyoxigraph's own parsers as the objects an in-process query gives
(``QuerySolutions`` from SPARQL TSV, ``QueryBoolean`` from SPARQL JSON, triples from N-Triples), which
the store turns into the protocol's result types as it does an in-process answer
(:mod:`acms.store.results`). ``max_rows`` cuts solutions and triples in the child
(one more than asked, so that ``collect`` still sees a truncated answer): a streamed query that would
write rows for its whole time limit stops as soon as enough are written.

Start-up costs a fresh interpreter, pyoxigraph and the store's open (measured in ``bench/bounds.py``);
only queries from users take this path, never acms's own. A command that knows it will run one
(``acms sparql``) calls ``prestart`` first, so that the child's interpreter and pyoxigraph load while the
command imports the engine and opens the index; the child waits for its job on stdin.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import marshal
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pyoxigraph as ox

from acms.errors import (
    QueryError,
    QueryLimitExceeded,
    QuerySyntaxError,
    StoreError,
    query_failed,
)
from acms.vocab import FN_NS

__all__ = ["QueryLimits", "memory_limit_error", "prestart", "run_bounded", "time_limit_error"]

_STDERR_CHARS = 400  # of a crashed child's last words, in a message


@dataclass(frozen=True)
class QueryLimits:
    """How far one user query may go: seconds, megabytes of address space, and rows (None: all)."""

    timeout_s: float = 30.0
    memory_mb: int = 768
    max_rows: int | None = None


def time_limit_error(seconds: float) -> QueryLimitExceeded:
    return QueryLimitExceeded(
        f"the query ran past its {seconds:g} s time limit and was stopped (raise it with "
        "acms --set query_timeout=SECONDS, ACMS_QUERY_TIMEOUT or query_timeout in acms.toml)", "time")


def memory_limit_error(megabytes: int) -> QueryLimitExceeded:
    return QueryLimitExceeded(
        f"the query passed its {megabytes} MB memory bound and was stopped (raise it with "
        "acms --set query_memory_mb=MB, ACMS_QUERY_MEMORY_MB or query_memory_mb in acms.toml)", "memory")


def run_bounded(path: Path, text: str, *, prefixes: Mapping[str, str], dataset: Mapping[str, Any],
                limits: QueryLimits) -> object:
    """``text`` (parameters already bound) over the on-disk index at ``path``, evaluated in a child
    process within ``limits``: ``QuerySolutions``, ``QueryBoolean`` or an iterator of triples."""
    fd, out_name = tempfile.mkstemp(prefix="acms-query-")
    os.close(fd)
    out = Path(out_name)
    try:
        form = _evaluate(path, text, prefixes, dataset, limits, out)
        answer = _Answer(os.open(out, os.O_RDONLY))
    finally:
        out.unlink(missing_ok=True)  # an open descriptor keeps the file's data until it is closed
    return _read_back(form, answer)  # type: ignore[arg-type]


def _evaluate(path: Path, text: str, prefixes: Mapping[str, str], dataset: Mapping[str, Any],
              limits: QueryLimits, out: Path) -> str:
    job = marshal.dumps({"path": str(path), "text": text, "prefixes": dict(prefixes), "dataset": _marshalled(dataset),
                        "memory_mb": limits.memory_mb, "max_rows": limits.max_rows, "out": str(out),
                        "functions": FN_NS in text or "fn:" in text})
    deadline = time.monotonic() + limits.timeout_s
    proc = _take()
    try:
        try:
            stdout, stderr = proc.communicate(job, timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise time_limit_error(limits.timeout_s) from None
    finally:
        if proc.poll() is None:  # an interrupt (Ctrl-C) or an error here: the child goes too
            proc.kill()
            proc.wait()
    return _outcome(proc.returncode, stdout, stderr, limits)


def _marshalled(dataset: Mapping[str, Any]) -> dict[str, Any]:
    """The dataset arguments as IRIs (None: the store's default graph), for the child's ``marshal``."""
    out: dict[str, Any] = {}
    for key, value in dataset.items():
        if key == "use_default_graph_as_union":
            out[key] = bool(value)
        elif key in ("default_graph", "named_graphs"):
            graphs = value if isinstance(value, (list, tuple)) else [value]
            if any(isinstance(g, ox.BlankNode) for g in graphs):
                raise QueryError("a query's dataset cannot name a blank node graph here")
            out[key] = [None if isinstance(g, ox.DefaultGraph) else g.value for g in graphs]
        else:
            raise QueryError(f"unknown dataset argument {key!r}")
    return out


_SPARES: list[subprocess.Popen[bytes]] = []  # children started ahead (``prestart``), each awaiting one job


def prestart() -> None:
    """Start the next bounded query's child now (it waits for its job), unless one is waiting already."""
    if not any(p.poll() is None for p in _SPARES):
        _discard_at_exit()
        _SPARES.append(_spawn())


def _take() -> subprocess.Popen[bytes]:
    """A child started ahead and still waiting, else a new one (threads may race for the spare)."""
    while True:
        try:
            proc = _SPARES.pop()
        except IndexError:
            return _spawn()
        if proc.poll() is None:
            return proc
        proc.wait()


def _spawn() -> subprocess.Popen[bytes]:
    env = {**os.environ, "MALLOC_ARENA_MAX": "2", "RUST_BACKTRACE": "0",  # arenas reserve address space
           "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # the child starts without site (-S)
    return subprocess.Popen([sys.executable, "-S", _child_script()], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


@functools.cache
def _discard_at_exit() -> None:
    atexit.register(_discard_spares)


def _discard_spares() -> None:
    """At exit: a child started ahead and never given a job ends now (it would end on its closed stdin)."""
    while _SPARES:
        proc = _SPARES.pop()
        proc.kill()
        proc.communicate()


@functools.cache
def _child_script() -> str:
    """The child's module file, run as a script: no ``acms`` package import on its way up."""
    spec = importlib.util.find_spec("acms.sparql.child")
    assert spec is not None and spec.origin is not None
    return spec.origin


def _outcome(code: int, stdout: bytes, stderr: bytes, limits: QueryLimits) -> str:
    """The answer's form, or the error the child's exit means."""
    said = stderr.decode("utf-8", "replace")
    if code == 0:
        try:
            status = marshal.loads(stdout)
        except (EOFError, ValueError, TypeError):
            raise StoreError(f"the query's process gave no answer: {said[-_STDERR_CHARS:]}") from None
        error = status.get("error")
        if error is None:
            return str(status["form"])
        if error == "memory":
            raise memory_limit_error(limits.memory_mb)
        if error == "syntax":
            raise QuerySyntaxError(f"SPARQL syntax error: {status['message']}")
        raise query_failed(RuntimeError(status["message"]))
    if code == -signal.SIGABRT and ("memory allocation" in said or "Cannot allocate memory" in said):
        raise memory_limit_error(limits.memory_mb)
    how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
    raise StoreError(f"the query's process ended abnormally ({how}): {' '.join(said.split())[-_STDERR_CHARS:]}")


class _Answer:
    """The answer file, read by pyoxigraph's parsers as they go and closed at its end, or when the
    caller lets go of the result before it (``max_rows`` reached)."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    def read(self, size: int = -1) -> bytes:
        if self._fd is None:
            return b""
        if size is None or size < 0:
            chunks = []
            while chunk := os.read(self._fd, 1 << 20):
                chunks.append(chunk)
            self.close()
            return b"".join(chunks)
        data = os.read(self._fd, size)
        if not data:
            self.close()
        return data

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        self.close()


def _read_back(form: str, handle: IO[bytes]) -> object:
    if form == "select":
        return ox.parse_query_results(handle, format=ox.QueryResultsFormat.TSV)
    if form == "ask":
        return ox.parse_query_results(handle, format=ox.QueryResultsFormat.JSON)
    return ox.parse(handle, format=ox.RdfFormat.N_TRIPLES)
