"""Give freed heap memory back to the operating system between the phases of a long run; collect
cycles rarely while it runs.

Why: CPython and numpy free their objects into the C allocator, which keeps the pages;
after a phase that built and dropped a few hundred MB (a group of files' triples, the LSA fit, the
caches' token arrays) the process's resident size stayed at its peak, and the next phase stacked its
own peak on top. glibc's ``malloc_trim(0)`` returns those free pages (measured on a standard library's
caches build: 603 → 396 MB resident after the build's objects were freed). Elsewhere (no glibc) this
does nothing.
"""

from __future__ import annotations

import ctypes
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

__all__ = ["available_bytes", "collect_if_busy", "collecting_rarely", "limit_arenas", "release_freed",
           "young_collections"]

RARE_THRESHOLDS = (50_000, 20, 20)


@cache
def _libc_function(name: str) -> object | None:
    """glibc's ``name``, or None elsewhere (no glibc, or no such function). Looked up among the symbols
    the process has loaded (``CDLL(None)``: the C library is one of them), not through
    ``ctypes.util.find_library``, which runs ``ldconfig -p`` (~8 ms and a process, on every command)."""
    try:
        return getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None


def release_freed() -> None:
    """Return the allocator's free pages to the OS (a few milliseconds); a no-op without glibc."""
    trim = _libc_function("malloc_trim")
    if trim is not None:
        trim(0)  # type: ignore[operator]


M_ARENA_MAX = -8  # glibc's mallopt parameter


def limit_arenas(n: int) -> None:
    """At most ``n`` glibc malloc arenas for this process's threads, before they start.

    Why: each thread that allocates (validation queries on a thread pool, Oxigraph's own threads)
    gets an arena of its own, up to eight per core, and each keeps its freed pages apart: with one
    arena the files' phase of a standard library peaked ~90 MB lower per group than with the default.
    A no-op without glibc."""
    mallopt = _libc_function("mallopt")
    if mallopt is not None:
        mallopt(M_ARENA_MAX, n)  # type: ignore[operator]


@contextmanager
def collecting_rarely() -> Iterator[None]:
    """The cyclic garbage collector at higher thresholds while a long batch run (an index) lasts.

    Why: a first index allocates millions of short-lived containers (a group's triples as
    text, the edges, the caches' rows), all freed by reference counting. At CPython's default
    thresholds (700, 10, 10) they set off 53 full collections in an index of the standard library,
    each walking the whole heap: 10.2 s of the run, finding next to nothing. At ``RARE_THRESHOLDS``
    the same run had none, and the collector's whole time fell from 12.0 to 2.2 s. ``bench/ingest.py``
    1x, two runs each: 107.5 / 105.1 s at the defaults, 99.2 / 96.2 s here, the fitting phase's
    peak 757 → 782 MB (cycles kept longer), back to 745 MB with a ``gc.collect()`` at each phase's
    end (94.7 s; now only after a phase that allocated much: ``collect_if_busy``). The previous
    thresholds come back afterwards (a server keeps its own)."""
    before = gc.get_threshold()
    gc.set_threshold(*RARE_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


BUSY = 4  # young collections (each after RARE_THRESHOLDS[0] new containers) that make a phase worth collecting


def young_collections() -> int:
    """How many young-generation collections this process has run: a measure of what it allocated."""
    return int(gc.get_stats()[0]["collections"])


def collect_if_busy(since: int) -> None:
    """A full collection if the work since ``since`` (``young_collections()`` then) allocated much.

    Why: with the collector running rarely, a phase's cycles that outlive its young collections would
    stay until the run ends (the fitting phase's peak 757 → 782 MB); a full collection at the end of a
    heavy phase frees them (745 MB). It walks the whole heap, though: after every phase of every small
    run it cost the test suite's process (a large heap, many small indexes) minutes, so a phase that
    allocated little is not collected."""
    if young_collections() - since >= BUSY:
        gc.collect()


def available_bytes() -> int | None:
    """Memory a new allocation can still get without swapping: the kernel's ``MemAvailable``, or less
    where this process's cgroup (a container's memory limit) leaves less; None where neither is known
    (not Linux)."""
    found: list[int] = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
                break
    except (OSError, ValueError, IndexError):
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            found.append(max(int(limit) - int(Path("/sys/fs/cgroup/memory.current").read_text()), 0))
    except (OSError, ValueError):
        pass
    return min(found) if found else None
