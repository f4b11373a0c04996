"""What a due LSA refit costs the reads beside it, on the standard-library index.

A refit (the corpus drifted past ``REFIT_SHARE`` from the model's fit) is as long as a first embedding.
This measures whole ``acms search`` processes run back to back, as an agent's reads come, while a
process that holds the index as ``acms mcp`` and ``acms watch`` do (shared) refits:

- the baseline: the same reads with nothing else running;
- in the writer's run (``Index.index()``, what ``acms index`` does when a refit is due);
- the watcher's way (``Index.refresh(refit=True)``): the texts read under a reader's share, a worker
  fitting and folding them with no lock held, only the landing a write.

The drift is set due by hand before each refit (the count beside the caches), so both refit the same
index. Printed as a table: the refit's seconds, the reads made during it, their p50 and the longest
wait, against the baseline's p50.

    python bench/refit.py [--work DIR] [--baseline-reads N] [--write-docs]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from stdlib_index import DEFAULT_WORK, build

from acms.api import Index
from acms.retrieval.drift import FILE, REFIT_SHARE

ACMS = str(Path(sys.executable).parent / "acms")
QUERY = "parse http header"


def read_once(corpus: Path, store: Path) -> float:
    """One whole ``acms search`` process: its wall seconds (it waits for a writer up to the default)."""
    t = time.perf_counter()
    subprocess.run([ACMS, "search", "-C", str(corpus), "--store", str(store), QUERY, "--json"],
                   capture_output=True, check=True)
    return time.perf_counter() - t


def set_due(cache: Path) -> None:
    """The count beside the caches past the refit share, as live refreshes would leave it."""
    path = cache / FILE
    data = json.loads(path.read_text())
    data["folded"] = int(data["fitted_on"] * REFIT_SHARE * 1.2)
    path.write_text(json.dumps(data))


def reads_during(refit: Callable[[], object], corpus: Path, store: Path) -> tuple[float, list[float]]:
    """``refit()`` in a thread; reads back to back until it returns: (its seconds, each read's)."""
    done = threading.Event()
    took: list[float] = []

    def run() -> None:
        t = time.perf_counter()
        try:
            refit()
        finally:
            took.append(time.perf_counter() - t)
            done.set()

    thread = threading.Thread(target=run)
    thread.start()
    reads = []
    while not done.is_set():
        reads.append(read_once(corpus, store))
    thread.join()
    return took[0], reads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument("--baseline-reads", type=int, default=10)
    args = parser.parse_args()
    corpus, layout = build(args.work, quiet=True)
    store = layout.root
    baseline = [read_once(corpus, store) for _ in range(args.baseline_reads)]
    base = statistics.median(baseline)
    rows = []
    for label, how in (("in the writer's run (`acms index`)", "index"),
                       ("the watcher's way (`refresh(refit=True)`)", "ahead")):
        set_due(layout.cache)
        with Index.open(corpus, store=store, mode="shared", record_use=False) as idx:
            refit = idx.index if how == "index" else (lambda idx=idx: idx.refresh(refit=True))
            seconds, reads = reads_during(refit, corpus, store)
        rows.append((label, seconds, reads))
    print(f"standard library; reads: whole `acms search` processes back to back; baseline: {len(baseline)} "
          f"reads with nothing else running, p50 {base:.2f} s\n")
    print("| refit | seconds | reads during it | read p50 s | longest read s | longest / baseline p50 |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label, seconds, reads in rows:
        print(f"| {label} | {seconds:.1f} | {len(reads)} | {statistics.median(reads):.2f} | {max(reads):.2f} | "
              f"{max(reads) / base:.1f}x |")


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "refit")  # --write-docs: this run's table onto docs/benchmarks.md
