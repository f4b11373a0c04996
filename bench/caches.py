"""Rebuild the keyword and ranking caches of an existing index and print what each step cost; with
``--against DIR``, check that every file built is byte for byte the one in DIR (a copy of the same
index's ``.acms/cache`` made by another version of acms).

    python bench/caches.py PROJECT [--against DIR] [--repeat N]

Steps are ``DerivedCaches``' progress steps (``BUILD_STEPS``); RSS is this process's, sampled every
20 ms (the peak of each step, and the whole build's peak above the RSS before it). Run it on an index
``bench/ingest.py --keep DIR`` left (``DIR/x1``, ``DIR/x2``, ...) to see how the caches' build grows
with the project without indexing it again. The machine is shared: the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import threading
import time
from pathlib import Path

from acms.api import Index
from acms.retrieval.caches import DerivedCaches


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def differences(built: Path, reference: Path) -> list[str]:
    """Files whose bytes differ, or that only one side has (paths relative to the cache directories)."""
    def files(d: Path) -> dict[str, Path]:
        return {str(p.relative_to(d)): p for p in sorted(d.rglob("*")) if p.is_file()}

    a, b = files(built), files(reference)
    out = [f"only built: {k}" for k in sorted(a.keys() - b.keys())]
    out += [f"only in reference: {k}" for k in sorted(b.keys() - a.keys())]
    out += [f"differs: {k}" for k in sorted(a.keys() & b.keys()) if a[k].read_bytes() != b[k].read_bytes()]
    return out


def build(project: Path) -> tuple[list[tuple[int, float, float]], float, float, float]:
    """(step, seconds, peak MB) per step; the whole build's seconds, its peak MB, the RSS before it."""
    with Index.open(project, embed_on_index=False) as idx:
        for name in ("keyword", "ranking"):
            shutil.rmtree(idx.layout.cache_dir(name), ignore_errors=True)
        peak, stop = [0.0], threading.Event()

        def watch() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], rss_mb())
                time.sleep(0.02)

        before = rss_mb()
        steps: list[tuple[int, float, float]] = []
        whole_peak = [before]
        start = last = time.perf_counter()

        def step(n: int) -> None:
            nonlocal last
            now = time.perf_counter()
            top = max(peak[0], rss_mb())
            steps.append((n, now - last, top))
            whole_peak[0] = max(whole_peak[0], top)
            last, peak[0] = now, rss_mb()

        thread = threading.Thread(target=watch, daemon=True)
        thread.start()
        caches = DerivedCaches(idx.store, idx.layout, progress=step)
        caches.keyword()
        caches.ranking()
        stop.set()
        thread.join()
        return steps, time.perf_counter() - start, whole_peak[0], before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--against", type=Path, help="a cache directory to compare the built files with")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    steps, seconds, peak, before = build(args.project)
    print(f"caches of {args.project} (load {load:.2f} before, {os.getloadavg()[0]:.2f} after)")
    print()
    print("| step | s | peak RSS MB |")
    print("| --- | --- | --- |")
    for n, s, top in steps:
        print(f"| {n} | {s:.1f} | {top:,.0f} |")
    print(f"| **whole** | **{seconds:.1f}** | **{peak:,.0f}** (+{peak - before:,.0f} over {before:,.0f}) |")
    if args.against:
        cache = args.project / ".acms" / "cache"
        found = [d for name in ("keyword", "ranking") for d in differences(cache / name, args.against / name)]
        print()
        print("identical to the reference" if not found else "\n".join(found))
        if found:
            sys.exit(1)


if __name__ == "__main__":
    main()
