"""Index the running interpreter's standard library (Lib/) and print what it cost.

Prints one table: files/s, fragments/s, triples/s, peak RSS, the share of time per phase, and the
unchanged re-index time; next to a baseline measured in the same run (read every file and
``ast.parse`` the Python ones: the floor any indexer pays).

    python bench/ingest.py [--limit N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import ast
import resource
import shutil
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from acms.config import Settings
from acms.service.index_run import index_project
from acms.ingest.walker import WalkSettings, list_files
from acms.store.oxigraph import OxigraphStore


def baseline(root: Path) -> tuple[int, float]:
    start = time.perf_counter()
    listing = list_files(root, WalkSettings())
    for f in listing.files:
        try:
            text = f.abs_path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if f.path.endswith(".py"):
            try:
                ast.parse(text)
            except (SyntaxError, ValueError):
                pass
    return len(listing.files), time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("--keep", type=Path, help="keep the store here instead of a temp dir")
    args = parser.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="acms-bench-"))
    # Copy so that the walk (not git) lists it and the store does not land inside the interpreter.
    corpus = work / "Lib"
    if not corpus.exists():
        shutil.copytree(args.lib, corpus, ignore=shutil.ignore_patterns("site-packages", "__pycache__"),
                        symlinks=True)
    store_dir = work / "store"
    shutil.rmtree(store_dir, ignore_errors=True)

    n_base, t_base = baseline(corpus)
    store = OxigraphStore(store_dir)
    report = index_project(corpus, store, Settings())
    store.close()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    store = OxigraphStore(store_dir)
    again = index_project(corpus, store, Settings())
    store.close()

    total = report.seconds
    rows = [
        ("files indexed", f"{report.files_indexed:,}"),
        ("entities", f"{report.entities:,}"),
        ("fragments", f"{report.fragments:,}"),
        ("triples", f"{report.triples_written:,}"),
        ("first index (s)", f"{total:.1f}"),
        ("files/s", f"{report.files_indexed / total:,.0f}"),
        ("fragments/s", f"{report.fragments / total:,.0f}"),
        ("triples/s", f"{report.triples_written / total:,.0f}"),
        ("peak RSS (MB)", f"{rss_mb:,.0f}"),
        ("unchanged re-index (s)", f"{again.seconds:.2f}"),
        (f"baseline: read + ast.parse {n_base:,} files (s)", f"{t_base:.1f}"),
        ("first index / baseline", f"{total / t_base:.1f}x"),
    ]
    rows += [(f"phase {name} (share)", f"{secs:.1f}s ({100 * secs / total:.0f}%)")
             for name, secs in report.timings.items()]
    width = max(len(r[0]) for r in rows)
    print(f"acms ingest benchmark — {args.lib} — Python {sys.version.split()[0]}")
    print(f"{'metric'.ljust(width)} | value")
    print(f"{'-' * width}-|-{'-' * 16}")
    for name, value in rows:
        print(f"{name.ljust(width)} | {value}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
