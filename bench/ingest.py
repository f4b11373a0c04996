"""Index the interpreter's standard library with the CLI, as a user would, and print what it cost.

Runs ``acms index`` (every phase: embeddings and caches included) as its own process on copies of the
standard library (``Lib/``, without site-packages), and prints, next to floors measured in the same
run on the same files:

- per size (``--scale 1,2,4``: the library copied 1, 2, 4 times under different roots): wall seconds,
  the ratio to the 1x time, peak RSS of the indexing process, and the floor (read every file and
  ``ast.parse`` the Python ones, the least any indexer pays) with the wall / floor ratio, and the CPU
  seconds of all acms processes together with their ratio to the same floor (the floor is one core's
  work; on a shared machine the CPU sum moves less than the wall between runs of the same code, so it
  is the figure to compare two versions by);
- per phase, for every size: seconds (phases of a streamed run add up the groups') and each size's
  ratio to the first, with the floors that bound them: read, ``ast.parse``, and tiktoken over every file's text once;
- the unchanged re-index of the 1x copy;
- with ``--migration``: a migration of the 1x copy's index (marked as built by an older UKO, as an
  index an older acms left; every file is redone), next to the first index of the same run.

    python bench/ingest.py [--scale 1,2,4] [--migration] [--keep DIR] [--lib PATH]

Memory, two ways: the peak RSS of the largest acms process (``getrusage`` of a wrapper's children:
the index process, or the child that writes a large first index's files), and the peak of all acms
processes together (the index process, that child and the extraction workers: PSS summed, shared
pages counted once, sampled every 0.1 s), which is what the machine must have; per phase, the
highest such sum between the end of the previous phase and the end of this one (``--progress``
lines). The machine is shared: the load
average is printed before and after, and ratios within one run are what to compare.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from acms.ingest.walker import WalkSettings, list_files
from installed import as_installed

WRAPPER = """
import json, os, resource, subprocess, sys, threading, time
start = time.perf_counter()
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
phases, state = {}, {"peak": 0, "tree_peak": 0, "tree": 0}
cpu = {}  # (pid, start time) -> the most user + system ticks seen: every acms process's CPU, whoever reaps it
def field(pid, name, where="status"):
    try:
        with open(f"/proc/{pid}/{where}") as f:
            return next(int(l.split()[1]) for l in f if l.startswith(name))
    except (OSError, StopIteration, ValueError):
        return 0
def descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out
def ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            st = f.read().rsplit(")", 1)[1].split()
        key = (pid, st[19])
        cpu[key] = max(cpu.get(key, 0), int(st[11]) + int(st[12]))
    except (OSError, IndexError, ValueError):
        pass
def tree():  # every acms process (the index process, its files' child, the extraction workers): PSS, shared pages once
    pids = descendants(proc.pid)
    for p in pids:
        ticks(p)
    return sum(field(p, "Pss:", "smaps_rollup") for p in pids)
def watch():  # a phase's peak: the highest sample since the previous phase ended
    err = []
    for line in proc.stderr:
        err.append(line)
        if line.startswith("acms: ") and " done (" in line:
            phases[line.split()[1]] = max(state["tree"], tree())
            state["tree"] = 0
    state["err"] = "".join(err)[-3000:]
t = threading.Thread(target=watch); t.start()
while proc.poll() is None:
    now = tree()
    state["tree"] = max(state["tree"], now)
    state["tree_peak"] = max(state["tree_peak"], now)
    time.sleep(0.1)
out = proc.stdout.read(); t.join()
wall = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"code": proc.returncode, "wall": wall, "cpu": sum(cpu.values()) / os.sysconf("SC_CLK_TCK"),
                  "peak_kb": peak, "tree_kb": state["tree_peak"],
                  "phase_kb": phases, "out": out, "err": state.get("err", "")}))
"""


def floors(root: Path) -> dict[str, float]:
    """Seconds to read every listed file, to ``ast.parse`` the Python ones, and to count tokens once."""
    from acms.tokens import count_many

    listing = list_files(root, WalkSettings())
    texts: list[tuple[str, str]] = []
    start = time.perf_counter()
    for f in listing.files:
        try:
            texts.append((f.path, Path(f.abs_path).read_text(encoding="utf-8")))
        except (UnicodeDecodeError, OSError):
            continue
    read = time.perf_counter() - start
    start = time.perf_counter()
    for path, text in texts:
        if path.endswith(".py"):
            try:
                ast.parse(text)
            except (SyntaxError, ValueError):
                pass
    parse = time.perf_counter() - start
    start = time.perf_counter()
    for i in range(0, len(texts), 256):
        count_many([t for _, t in texts[i : i + 256]])
    tokens = time.perf_counter() - start
    return {"files": len(listing.files), "read": read, "parse": parse, "tokenize": tokens}


def index(root: Path) -> dict:
    """``acms index root --json`` in a fresh process: wall seconds, peak RSS, the report."""
    out = subprocess.run([sys.executable, "-c", WRAPPER, sys.executable, "-m", "acms", "index", str(root), "--json",
                          "--progress"],
                         capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    if got["code"] != 0:
        raise SystemExit(f"acms index {root} failed ({got['code']}): {got['err']}")
    got["report"] = json.loads(got.pop("out"))
    return got


def mark_old(root: Path, version: str = "0.0.0") -> None:
    """Make ``root``'s index look built by UKO ``version``: its next ``acms index`` migrates."""
    from pyoxigraph import Literal

    from acms.sparql import catalog
    from acms.store.oxigraph import OxigraphStore

    store = OxigraphStore(root / ".acms" / "graph")
    try:
        store.update(catalog.text("ontology/mark-built-with.ru"), {"version": Literal(version)})
    finally:
        store.close()


def migration_table(first: dict, migrated: dict) -> None:
    """The migration of the 1x index beside its first index (same run), and per phase."""
    report = migrated["report"]
    print()
    print(f"migration of the {first['report']['files_indexed']:,}-file index ({'; '.join(report['ontology'])}), "
          "beside the first index of the same run:")
    print()
    print("| run | files | triples | wall s | vs first index | peak RSS MB | vs first index |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, got in (("first index", first), ("migration", migrated)):
        print(f"| {name} | {got['report']['files_indexed']:,} | {got['report']['triples_written']:,} | {got['wall']:.1f} "
              f"| {got['wall'] / first['wall']:.2f}x | {got['peak_kb'] / 1024:,.0f} | "
              f"{got['peak_kb'] / first['peak_kb']:.2f}x |")
    print()
    print("| phase | first index s | migration s |")
    print("| --- | --- | --- |")
    a, b = first["report"]["timings"], migrated["report"]["timings"]
    for phase in sorted(set(a) | set(b), key=lambda p: -max(a.get(p, 0.0), b.get(p, 0.0))):
        print(f"| {phase} | {a.get(phase, 0.0):.1f} | {b.get(phase, 0.0):.1f} |")
    print()
    print("peak MB of all acms processes (PSS) while each reported phase ran:")
    print()
    names = list(dict.fromkeys([*first["phase_kb"], *migrated["phase_kb"]]))
    print("| run | " + " | ".join(names) + " |")
    print("| --- | " + " | ".join("---" for _ in names) + " |")
    for name, got in (("first index", first), ("migration", migrated)):
        print(f"| {name} | " + " | ".join(f"{got['phase_kb'].get(p, 0) / 1024:,.0f}" for p in names) + " |")


def copies(lib: Path, work: Path, n: int) -> Path:
    """``n`` copies of the library under ``work/x<n>/copy<i>/Lib`` (different roots, so different paths)."""
    root = work / f"x{n}"
    for i in range(n):
        dest = root / f"copy{i}" / "Lib"
        if not dest.exists():
            shutil.copytree(lib, dest, ignore=shutil.ignore_patterns("site-packages", "__pycache__"), symlinks=True)
    shutil.rmtree(root / ".acms", ignore_errors=True)
    return root


def main() -> None:
    as_installed()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("--scale", default="1", help="comma-separated copies of the library, e.g. 1,2,4")
    parser.add_argument("--keep", type=Path, help="keep the copies and indexes here instead of a temp dir")
    parser.add_argument("--migration", action="store_true",
                        help="also migrate the smallest copy's index (marked as built by an older UKO)")
    args = parser.parse_args()
    sizes = sorted({int(s) for s in args.scale.split(",")})

    work = args.keep or Path(tempfile.mkdtemp(prefix="acms-bench-"))
    load_before = os.getloadavg()[0]
    rows = []
    first: dict | None = None
    for n in sizes:
        root = copies(args.lib, work, n)
        floor = floors(root)
        got = index(root)
        rows.append((n, floor, got))
        if first is None:
            first = got
            again = index(root)
            first["again"] = again
            if args.migration:
                mark_old(root)
                first["migration"] = index(root)
    print(f"acms index of the standard library ({args.lib}), {os.cpu_count()} cores, "
          f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    print()
    print("| size | files | triples | wall s | vs 1x | peak RSS MB, largest process | peak MB, all processes "
          "| floor s (read + ast.parse) | wall / floor | CPU s, all processes | CPU / floor |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    base = rows[0][2]["wall"]
    for n, floor, got in rows:
        f = floor["read"] + floor["parse"]
        print(f"| {n}x | {got['report']['files_indexed']:,} | {got['report']['triples_written']:,} | {got['wall']:.1f} "
              f"| {got['wall'] / base:.2f}x | {got['peak_kb'] / 1024:,.0f} | {got['tree_kb'] / 1024:,.0f} | {f:.1f} "
              f"| {got['wall'] / f:.1f}x | {got['cpu']:.1f} | {got['cpu'] / f:.1f}x |")
    assert first is not None
    n, floor, got = rows[0]
    print()
    print(f"phases (seconds; the share is of the {n}x run's wall; floors measured on the same files in this run; "
          "a phase that grows faster than the project shows in the last columns):")
    print()
    others = rows[1:]
    print("| phase | " + " | ".join(f"{size}x s" for size, _, _ in rows) + f" | share of {n}x |"
          + "".join(f" {size}x / {n}x |" for size, _, _ in others))
    print("| --- | " + " | ".join("---" for _ in rows) + " | --- |" + "".join(" --- |" for _ in others))
    timings = got["report"]["timings"]
    for phase, seconds in sorted(timings.items(), key=lambda kv: -kv[1]):
        at = [g["report"]["timings"].get(phase, 0.0) for _, _, g in rows]
        ratios = [f"{t / seconds:.2f}x" if seconds >= 0.05 else "" for t in at[1:]]
        print(f"| {phase} | " + " | ".join(f"{t:.1f}" for t in at) + f" | {seconds / got['wall']:.0%} |"
              + "".join(f" {r} |" for r in ratios))
    for label, key in (("read", "read"), ("ast.parse", "parse"), ("tiktoken, each file once", "tokenize")):
        print(f"| *floor: {label}* | " + " | ".join(f"{fl[key]:.1f}" for _, fl, _ in rows) + " | |"
              + "".join(" |" for _ in others))
    print()
    print("peak MB of all acms processes (PSS) while each reported phase ran, per size (a streamed run reports "
          "'indexing' for its files):")
    print()
    names = list(dict.fromkeys(p for _, _, g in rows for p in g["phase_kb"]))
    print("| size | " + " | ".join(names) + " |")
    print("| --- | " + " | ".join("---" for _ in names) + " |")
    for size, _, g in rows:
        print(f"| {size}x | " + " | ".join(f"{g['phase_kb'].get(p, 0) / 1024:,.0f}" for p in names) + " |")
    again = first["again"]
    print()
    print(f"unchanged re-index of the {rows[0][0]}x copy: {again['wall']:.2f} s wall, peak RSS {again['peak_kb'] / 1024:,.0f} MB "
          f"(up to date: {again['report']['up_to_date']})")
    if args.migration:
        migration_table(first, first["migration"])
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "ingest")  # --write-docs: this run's tables onto docs/benchmarks.md
