"""The graph side of a branch switch, against an earlier revision of acms in the same run.

Two copies of a prepared repository (a git repository with two branches, already indexed: the one
``bench/refresh.py`` makes has ``main`` and ``switch``, 300 files apart) are made under WORK. One is
indexed by acms as it is in this checkout, the other by the source of ``--baseline`` (``git archive`` of
that revision, first on the import path of its processes). Each copy first switches once, uncounted (the
copies' folder differs from the prepared one's: that run writes the directory tree again in both). Then
``acms index`` runs after each checkout, the two in turn (which goes first alternates by round), so both
see the same load. Then, with ``--edits``, one function of ``--edit-file`` is edited and indexed that many
times in each copy, in turn (the one-edit refresh, which must not get slower).

Prints a table of each run (load average at its start, wall and CPU from ``/usr/bin/time``, the graph
side's phases: relinking, linking, versions, validation, store, tiers, and what the run spent outside
every phase) and the medians of both with their ratio, this checkout / baseline.

    python bench/switch_graph.py PREPARED WORK --baseline REV [--rounds 2] [--edits 3] [--edit-file textwrap.py]

PREPARED is only read; WORK is written to (two copies of PREPARED: room for them is needed).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
GRAPH = ("relinking", "linking", "versions", "validation", "store", "tiers")
RUN = """
import sys
if __name__ == "__main__":
    from acms.cli.main import main
    sys.argv[0] = "acms"
    sys.exit(main())
"""


def index(repo: Path, source: Path, script: Path, timing: Path) -> dict[str, float]:
    """``acms index --json`` in a fresh process whose acms is the one under ``source``."""
    load = float(Path("/proc/loadavg").read_text().split()[0])
    env = {**os.environ, "PYTHONPATH": str(source / "src")}
    proc = subprocess.run(["/usr/bin/time", "-f", "%e %U %S", "-o", str(timing), sys.executable, "-P", str(script),
                           "index", str(repo), "--json"], check=False, capture_output=True, text=True, env=env,
                          cwd=script.parent)
    if proc.returncode:
        raise SystemExit(f"acms index failed ({proc.returncode}): {proc.stderr[-1500:]}")
    wall, user, system = map(float, timing.read_text().split()[-3:])
    report = json.loads(proc.stdout)
    t: dict[str, float] = report["timings"]
    row = {"load": load, "wall": wall, "cpu": user + system, "seconds": float(report["seconds"]),
           "files": float(report["files_indexed"] + report.get("files_relinked", 0))}
    row.update({k: float(t.get(k, 0.0)) for k in GRAPH})
    row["graph"] = sum(row[k] for k in GRAPH)
    row["outside"] = row["seconds"] - sum(t.values())
    return row


def edit(path: Path, n: int) -> None:
    """One function of ``path`` edited: a line added at the top of its body, then that line's value changed."""
    lines = path.read_text().splitlines(keepends=True)
    mark = re.compile(r"^    _acms_bench_edit = \d+\n$")
    for i, line in enumerate(lines):
        if mark.match(line):
            lines[i] = f"    _acms_bench_edit = {n}\n"
            break
    else:
        at = next((i for i, line in enumerate(lines) if line.startswith("def ") and line.rstrip().endswith(":")), None)
        if at is None:
            raise SystemExit(f"no one-line top-level def in {path} to edit")
        lines.insert(at + 1, f"    _acms_bench_edit = {n}\n")
    path.write_text("".join(lines))


def table(title: str, rows: list[tuple[str, str, dict[str, float]]]) -> None:
    keys = ["wall", "cpu", "seconds", "graph", *GRAPH, "outside"]
    print(f"\n{title}\n")
    print("| acms | step | load | files | " + " | ".join(f"{k} s" for k in keys) + " |")
    print("|---|---|---|---|" + "---|" * len(keys))
    for who, step, r in rows:
        print(f"| {who} | {step} | {r['load']:.2f} | {r['files']:.0f} | " + " | ".join(f"{r[k]:.2f}" for k in keys) + " |")
    print("\n| median | baseline | this checkout | this / baseline |")
    print("|---|---|---|---|")
    for k in keys:
        base = statistics.median(r[k] for who, _, r in rows if who == "baseline")
        ours = statistics.median(r[k] for who, _, r in rows if who == "this")
        print(f"| {k} | {base:.2f} | {ours:.2f} | {ours / base if base > 0 else float('nan'):.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("prepared", type=Path, help="a prepared, indexed git repository (only read)")
    parser.add_argument("work", type=Path, help="where the two copies go (written to)")
    parser.add_argument("--baseline", required=True, help="the git revision of acms to compare with")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--branches", nargs=2, default=["switch", "main"], help="checked out in turn")
    parser.add_argument("--edits", type=int, default=0, help="one-edit refreshes of each copy after the switches")
    parser.add_argument("--edit-file", default="textwrap.py", help="the file of the prepared repository edited")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        work = Path(tmp)
        base_src = work / "baseline-src"
        base_src.mkdir()
        archive = subprocess.run(["git", "archive", args.baseline], cwd=CHECKOUT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base_src)], input=archive, check=True)
        script, timing = work / "acms_main.py", work / "time.txt"
        script.write_text(RUN)
        sources = {"baseline": base_src, "this": CHECKOUT}
        copies = {who: work / who / args.prepared.name for who in sources}
        for who, copy in copies.items():
            shutil.copytree(args.prepared, copy, symlinks=True)
            subprocess.run(["git", "checkout", "-q", "-f", args.branches[1]], cwd=copy, check=True)
            subprocess.run(["git", "checkout", "-q", args.branches[0]], cwd=copy, check=True)
            index(copy, sources[who], script, timing)  # uncounted: the tree is written again at the new folder
            subprocess.run(["git", "checkout", "-q", args.branches[1]], cwd=copy, check=True)
            index(copy, sources[who], script, timing)
        switches: list[tuple[str, str, dict[str, float]]] = []
        for rnd in range(args.rounds):
            for branch in args.branches:
                order = list(sources) if rnd % 2 == 0 else list(sources)[::-1]
                for who in order:
                    subprocess.run(["git", "checkout", "-q", branch], cwd=copies[who], check=True)
                    switches.append((who, f"to {branch}", index(copies[who], sources[who], script, timing)))
        table(f"A branch switch ({args.branches[0]} <-> {args.branches[1]}), {args.rounds} rounds, "
              f"baseline {args.baseline}", switches)
        if args.edits:
            edits: list[tuple[str, str, dict[str, float]]] = []
            for n in range(args.edits):
                order = list(sources) if n % 2 == 0 else list(sources)[::-1]
                for who in order:
                    edit(copies[who] / args.edit_file, n)
                    edits.append((who, f"edit {n + 1}", index(copies[who], sources[who], script, timing)))
            table(f"One edited function of {args.edit_file}", edits)


if __name__ == "__main__":
    main()
