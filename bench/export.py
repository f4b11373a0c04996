"""Export the standard library's index and compare with a plain pyoxigraph dump of the same graphs.

Each export runs as its own ``acms export`` process (wall time and that process's peak RSS); the
baseline, measured in the same run, is ``Store.dump`` of the same named graphs (tiers and meta) to
N-Quads: the floor any export pays to read them.

    python bench/export.py [--work DIR]       # the index is built once by bench/stdlib_index.py
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyoxigraph as ox

from acms.vocab import GRAPH_META, TIERS

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stdlib_index import DEFAULT_WORK, build  # noqa: E402
from installed import as_installed

FORMATS = ("nquads", "turtle", "graphml", "html")


def dump_baseline(graph_dir: Path, out: Path) -> float:
    store = ox.Store.read_only(str(graph_dir))
    start = time.perf_counter()
    with out.open("wb") as fh:
        for graph in (*TIERS.values(), GRAPH_META):
            store.dump(fh, ox.RdfFormat.N_QUADS, from_graph=graph)
    return time.perf_counter() - start


def export(corpus: Path, store: Path, fmt: str, out: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one ``acms export`` process."""
    code = ("import resource, sys, time; from acms.cli.main import main; t = time.perf_counter(); "
            "sys.argv = ['acms'] + sys.argv[1:]\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    done = subprocess.run([sys.executable, "-c", code, "export", "-C", str(corpus), "--store", str(store), "--format",
                           fmt, "-o", str(out), "--max-nodes", "1000000000", "--quiet"], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"acms export --format {fmt} failed: {done.stderr.strip()}")
    seconds, rss = done.stdout.split()[-2:]
    return float(seconds), float(rss)


def main() -> None:
    as_installed()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    args = parser.parse_args()
    corpus, layout = build(args.work)
    quads = len(ox.Store.read_only(str(layout.graph)))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        base = dump_baseline(layout.graph, out / "dump.nq")
        print(f"acms export benchmark: the standard library ({quads:,} quads in the store), "
              f"{os.cpu_count()} cores")
        print(f"{'export':<32} | {'seconds':>8} | {'peak MB':>8} | {'output MB':>9} | vs dump")
        print("-" * 33 + "|" + "-" * 10 + "|" + "-" * 10 + "|" + "-" * 11 + "|" + "-" * 9)
        size = (out / "dump.nq").stat().st_size / 1e6
        print(f"{'pyoxigraph Store.dump (N-Quads)':<32} | {base:8.1f} | {'':>8} | {size:9.1f} | baseline")
        for fmt in FORMATS:
            target = out / f"export.{fmt}"
            seconds, rss = export(corpus, layout.root, fmt, target)
            print(f"{'acms export --format ' + fmt:<32} | {seconds:8.1f} | {rss:8.0f} | "
                  f"{target.stat().st_size / 1e6:9.1f} | {seconds / base:.2f}x")


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "export")  # --write-docs: this run's tables onto docs/benchmarks.md
