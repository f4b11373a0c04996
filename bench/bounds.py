"""What the bounds on user queries and on ingest cost, and whether they hold: whole processes, peak
memory (PSS summed over every process of the command, sampled every 20 ms).

Queries (a small indexed project: acms's own test fixture, or ``--project``):

- start-up: ``acms sparql`` of a small query, its query run in a child process (the default) beside the
  same command with the query run in process (the baseline, measured in the same run: the command with
  ``Index.query_limits`` patched to None), interleaved, median and best of ``--runs``; and the child
  alone, ``run_bounded`` beside ``query_raw`` in one process;
- the runaway: the cartesian ``ORDER BY`` of the report at the default bounds, and with a 2 s limit:
  how it ended, after how long, the peak of all processes.

Ingest: ``acms index`` of a corpus holding one large text file (``--big-mb``, default 64) at a raised
``--max-file-bytes``, beside the same corpus without it: wall time, peak of all processes, and what the
report says of the file.

    python bench/bounds.py [--runs 7] [--big-mb 64] [--skip-ingest] [--write-docs]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.refresh import Sampler
from installed import as_installed

ACMS = [sys.executable, "-m", "acms"]
IN_PROCESS = [sys.executable, "-c", "import acms.api as a; a.Index.query_limits = property(lambda self: None); "
              "from acms.cli.main import main; main()"]
SMALL = "SELECT (COUNT(*) AS ?n) WHERE { ?s a uko:Function }"
CARTESIAN = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l } ORDER BY ?a"
COUNTING = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"  # slow, flat memory
FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "sample_project"


def measure(argv: list[str], cwd: Path, timeout: float = 600) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """The finished command, its wall time and the peak (MB) of its process tree."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with Sampler(proc.pid, period=0.02) as sampler:
        out, err = proc.communicate(timeout=timeout)
    took = time.perf_counter() - start
    return subprocess.CompletedProcess(argv, proc.returncode, out, err), took, sampler.peak_mb


def startup(project: Path, runs: int) -> None:
    bounded: list[float] = []
    direct: list[float] = []
    for _ in range(runs):  # interleaved: a busy machine slows both alike
        for argv, into in ((ACMS, bounded), (IN_PROCESS, direct)):
            done, took, _ = measure([*argv, "sparql", SMALL], project)
            if done.returncode != 0:
                raise SystemExit(f"acms sparql failed: {done.stderr[-500:]}")
            into.append(took)
    print("| `acms sparql` of a small query | median s | best s |")
    print("| --- | ---: | ---: |")
    print(f"| query in process (baseline) | {statistics.median(direct):.3f} | {min(direct):.3f} |")
    print(f"| query in a bounded child process | {statistics.median(bounded):.3f} | {min(bounded):.3f} |")
    print(f"| difference | {statistics.median(bounded) - statistics.median(direct):+.3f} | "
          f"{min(bounded) - min(direct):+.3f} |")
    print()
    from acms.sparql.runner import QueryLimits
    from acms.store.oxigraph import OxigraphStore

    store = OxigraphStore.open_existing(project / ".acms" / "graph", read_only=True)
    try:
        inside, child = [], []
        for _ in range(runs):
            start = time.perf_counter()
            list(store.query_raw(SMALL, use_default_graph_as_union=True))  # type: ignore[call-overload]
            inside.append(time.perf_counter() - start)
            start = time.perf_counter()
            list(store.query_raw(SMALL, limits=QueryLimits(), use_default_graph_as_union=True))  # type: ignore[call-overload]
            child.append(time.perf_counter() - start)
    finally:
        store.close()
    print("| the query alone, in one process | median ms | best ms |")
    print("| --- | ---: | ---: |")
    print(f"| `query_raw` in process | {statistics.median(inside) * 1000:.1f} | {min(inside) * 1000:.1f} |")
    print(f"| `query_raw(limits=...)`: child start, store open, query, answer read back | "
          f"{statistics.median(child) * 1000:.1f} | {min(child) * 1000:.1f} |")
    print()


def runaway(project: Path) -> None:
    print("| a runaway query | bounds | ended by | exit | wall s | peak MB, all processes |")
    print("| --- | --- | --- | ---: | ---: | ---: |")
    for query, label, extra in (
            (CARTESIAN, "default (30 s, 768 MB)", []),
            (CARTESIAN, "query_memory_mb=400", ["--set", "query_memory_mb=400"]),
            (COUNTING, "query_timeout=2", ["--set", "query_timeout=2"])):
        done, took, peak = measure([*ACMS, *extra, "sparql", query], project)
        said = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
        ended = "time limit" if "time limit" in said else "memory bound" if "memory bound" in said else said[:60]
        name = "the cartesian ORDER BY of the report" if query == CARTESIAN else "COUNT(*) over the same product"
        print(f"| {name} | {label} | {ended} | {done.returncode} | {took:.1f} | {peak:.0f} |")
    print()


def ingest(root: Path, big_mb: int) -> None:
    print("| `acms index` (sample project) | max_file_bytes | wall s | peak MB, all processes | the large file |")
    print("| --- | ---: | ---: | ---: | --- |")
    for label, big in (("without the large file (baseline)", False), (f"with a {big_mb} MB text file", True)):
        project = root / ("big" if big else "plain")
        shutil.copytree(FIXTURE, project)
        if big:
            line = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor\n"
            with (project / "big.txt").open("w") as f:
                f.write(line * (big_mb * 2**20 // len(line)))
        cap = str((big_mb + 1) * 2**20)
        done, took, peak = measure([*ACMS, "index", ".", "--max-file-bytes", cap, "--json"], project, timeout=3600)
        if done.returncode != 0:
            raise SystemExit(f"acms index failed: {done.stderr[-800:]}")
        note = _big_note(done.stdout) if big else ""
        print(f"| {label} | {cap} | {took:.1f} | {peak:.0f} | {note} |")
    print()


def _big_note(report: str) -> str:
    import json

    data = json.loads(report)
    for reason, paths in data.get("skipped", {}).items():
        if "big.txt" in paths:
            return f"skipped: {reason}"
    return data.get("parse_errors", {}).get("big.txt", "indexed in text windows (no parser for .txt)")


def main() -> None:
    as_installed()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--big-mb", type=int, default=64)
    parser.add_argument("--project", type=Path, help="An indexed project to query (default: a copy of the fixture).")
    parser.add_argument("--skip-ingest", action="store_true")
    parser.add_argument("--skip-queries", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="acms-bounds-") as tmp:
        project = args.project
        if project is None and not args.skip_queries:
            project = Path(tmp) / "sample"
            shutil.copytree(FIXTURE, project)
            subprocess.run([*ACMS, "index", "."], cwd=project, check=True, capture_output=True)
        if not args.skip_queries:
            startup(project, args.runs)
            runaway(project)
        if not args.skip_ingest:
            ingest(Path(tmp), args.big_mb)


if __name__ == "__main__":
    from bench.docs_page import run

    os.environ.setdefault("ACMS_REFRESH", "off")  # the commands measured, not the look for changed files
    run(main, "bounds")
