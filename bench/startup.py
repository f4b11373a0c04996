"""Start-up cost of the commands users run most: whole processes, median of several runs.

Indexes a small project (click's source, copied from the installed ``click`` package, which acms
depends on) once, then runs ``acms --help``, ``acms search`` and ``acms assemble`` on it as separate
processes, ``--runs`` times each, and prints the median and best wall time next to the target of
issue 14 and to the floor measured in the same run: ``python -c "import click"`` (an interpreter
start plus the CLI library, which no command can avoid), and ``acms render`` (assemble's task as a
render_request.v0), ``acms sparql`` (a saved query) and ``acms history``. Then the same reads while ``acms watch`` runs on the project, which answers them
(``acms.cli.relay``): each must print what it printed alone.

    python bench/startup.py [--runs 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click
from installed import as_installed
from watching import watching

ACMS = [sys.executable, "-m", "acms"]
TARGETS = {"--help": 0.3, "search": 0.8, "assemble": 0.8}


def timed(argv: list[str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        out.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-500:]}")
    return out


def output(argv: list[str]) -> str:
    """What a command prints, less what differs run to run: a render reply's timings."""
    text = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    if argv[len(ACMS)] != "render":
        return text
    reply = json.loads(text)
    for key in ("planner_ms", "timings_ms"):
        reply["metrics"].pop(key, None)
    return json.dumps(reply, sort_keys=True)


def main() -> None:
    as_installed()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="keep the project and its index here")
    args = parser.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="acms-startup-"))
    project = work / "click"
    if not (project / ".acms").is_dir():
        shutil.rmtree(project, ignore_errors=True)
        shutil.copytree(Path(click.__file__).parent, project, ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run([*ACMS, "index", str(project), "--quiet"], check=True, stdout=subprocess.DEVNULL)
    files = sum(1 for p in project.rglob("*.py"))
    request = work / "request.json"  # what acms render answers: assemble's task as a render_request.v0
    request.write_text(json.dumps({"version": "v0", "id": "00000000-0000-4000-8000-000000000001", "request_id": "bench",
                                   "intent": "how are command line options parsed",
                                   "budgets": {"tokens_max": 2000, "time_ms": 5000}}), encoding="utf-8")

    rows = [
        ("python -c 'import click' (floor)", [sys.executable, "-c", "import click"], None),
        ("acms --help", [*ACMS, "--help"], TARGETS["--help"]),
        ("acms search", [*ACMS, "search", "-C", str(project), "parse command line options", "-k", "5"],
         TARGETS["search"]),
        ("acms assemble", [*ACMS, "assemble", "-C", str(project), "how are command line options parsed",
                           "--budget", "2000"], TARGETS["assemble"]),
        ("acms render", [*ACMS, "render", "-C", str(project), str(request)], None),
        ("acms sparql", [*ACMS, "sparql", "-C", str(project), "--saved", "callers", "--bind", "name=echo"], None),
        ("acms history", [*ACMS, "history", "-C", str(project), "core.py::Command.invoke"], None),
    ]
    print(f"start-up: click's source ({files} .py files), {args.runs} runs each, "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print()
    print("| command | median s | best s | target s | median / floor |")
    print("| --- | --- | --- | --- | --- |")
    floor = 0.0
    for name, argv, target in rows:
        times = timed(argv, args.runs)
        median = statistics.median(times)
        floor = floor or median
        mark = "" if target is None else f"{target:.1f} {'met' if median < target else 'MISSED'}"
        print(f"| {name} | {median:.3f} | {min(times):.3f} | {mark} | {median / floor:.1f}x |")
    reads = rows[2:]
    alone = {name: output(argv) for name, argv, _ in reads}
    with watching(ACMS, project):
        for name, argv, target in reads:
            output(argv)  # the watcher's first answer loads what it did not warm
            if output(argv) != alone[name]:
                raise SystemExit(f"{name} printed otherwise through acms watch than on its own")
            times = timed(argv, args.runs)
            median = statistics.median(times)
            mark = "" if target is None else f"{target:.1f} {'met' if median < target else 'MISSED'}"
            print(f"| {name}, acms watch running | {median:.3f} | {min(times):.3f} | {mark} | {median / floor:.1f}x |")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "startup")  # --write-docs: this run's tables onto docs/benchmarks.md
