"""Shared by the benchmarks: an index of the standard library (Lib/), built once and reused.

    python bench/stdlib_index.py [--work DIR]     # builds DIR/Lib and DIR/.acms (default $TMPDIR/acms-bench/stdlib)
"""

from __future__ import annotations

import argparse
import shutil
import sysconfig
import tempfile
import time
from pathlib import Path

from acms.config import Settings
from acms.service.indexing import index_project
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore

# Outside any git checkout: inside one, git ls-files would hide an ignored copy.
DEFAULT_WORK = Path(tempfile.gettempdir()) / "acms-bench" / "stdlib"
QUERIES = [
    "parse http header", "json decoder error", "thread pool executor shutdown", "socket timeout connect",
    "read zip file entries", "compile regular expression pattern", "temporary directory cleanup",
    "format date time string", "base64 encode bytes", "subprocess pipe communicate", "sqlite cursor execute",
    "email message attachment", "url quote unquote", "hash sha256 digest", "logging handler rotate file",
    "argparse add argument", "csv dict reader", "decimal rounding context", "asyncio event loop run",
    "pickle protocol load", "tarfile extract members", "unittest assert raises", "shutil copy tree",
    "random choice weighted", "heap push pop", "lru cache decorator", "path glob pattern", "xml element tree parse",
    "gzip compress stream", "signal handler alarm",
]


def pct(xs: list[float], p: float) -> float:
    """Nearest-rank percentile, for the latency tables."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def build(work: Path = DEFAULT_WORK, *, quiet: bool = False) -> tuple[Path, IndexLayout]:
    corpus = work / "Lib"
    if not corpus.exists():
        shutil.copytree(sysconfig.get_paths()["stdlib"], corpus, symlinks=True,
                        ignore=shutil.ignore_patterns("site-packages", "__pycache__"))
    layout = IndexLayout(work / ".acms")
    store = OxigraphStore(layout.graph)
    try:
        t = time.perf_counter()
        report = index_project(corpus, store, Settings(), layout=layout)
        if not quiet:
            print(f"index: {report.files_indexed} files indexed, {report.files_unchanged} unchanged, "
                  f"{report.embedded} embedded in {time.perf_counter() - t:.1f}s")
    finally:
        store.close()
    return corpus, layout


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    build(parser.parse_args().work)
