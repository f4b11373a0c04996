"""The store write of a branch switch: the replaced files' quads as a diff against the SPARQL deletes.

On a copy of a prepared repository (a git repository with two branches, already indexed: the one
``bench/refresh.py`` makes has ``main`` and ``switch``, 300 files apart), ``acms index`` runs after each
checkout, alternately with the diff (the embedded store's ``SupportsFileRewrite``) and without it (the
capability taken away in that process: the files' SPARQL deletes and a load of every new quad), so both
see the same load. Prints a table of each run (load average at its start, wall and CPU from
``/usr/bin/time``, the store and versions phases, which now share the read of the old quads) and the
ratio of the medians, diff / SPARQL, measured in the same run.

    python bench/file_rewrite.py COPY [--rounds 2] [--branches main switch]

COPY is written to (its index and checkouts): never the bench's own prepared repository.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from installed import as_installed

# acms in a process whose embedded store does not rewrite by a diff (isinstance caches a class's answer,
# so the method goes before any check)
WITHOUT = """
import sys
from acms.store import oxigraph
del oxigraph.OxigraphStore.rewrite_files
if __name__ == "__main__":
    from acms.cli.main import main
    sys.argv[0] = "acms"
    sys.exit(main())
"""


def run(repo: Path, diff: bool, script: Path, timing: Path) -> dict[str, object]:
    load = float(Path("/proc/loadavg").read_text().split()[0])
    acms = [sys.executable, "-m", "acms"] if diff else [sys.executable, str(script)]
    proc = subprocess.run(["/usr/bin/time", "-f", "%e %U %S", "-o", str(timing), *acms, "index", str(repo), "--json"],
                          check=False, capture_output=True, text=True, cwd=script.parent)
    if proc.returncode:
        raise SystemExit(f"acms index failed ({proc.returncode}): {proc.stderr[-1500:]}")
    wall, user, system = map(float, timing.read_text().split()[-3:])
    report = json.loads(proc.stdout)
    t = report["timings"]
    return {"load": load, "wall": wall, "cpu": round(user + system, 2), "store": round(t.get("store", 0.0), 2),
            "versions": round(t.get("versions", 0.0), 2), "files": report["files_indexed"]}


def main() -> None:
    as_installed()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo", type=Path, help="a writable copy of a prepared, indexed git repository")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--branches", nargs=2, default=["switch", "main"], help="checked out in turn")
    args = parser.parse_args()
    rows: list[tuple[str, str, dict[str, object]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        script, timing = Path(tmp) / "without_diff.py", Path(tmp) / "time.txt"
        script.write_text(WITHOUT)
        for _ in range(args.rounds):
            for diff in (False, True):
                for branch in args.branches:
                    subprocess.run(["git", "checkout", "-q", branch], cwd=args.repo, check=True)
                    rows.append(("diff" if diff else "sparql", branch, run(args.repo, diff, script, timing)))
    print("| write | to | load | files | wall s | CPU s | store s | versions s |")
    print("|---|---|---|---|---|---|---|---|")
    for mode, branch, r in rows:
        print(f"| {mode} | {branch} | {r['load']} | {r['files']} | {r['wall']} | {r['cpu']} | {r['store']} | {r['versions']} |")
    med = {mode: {k: statistics.median(float(r[k]) for m, _, r in rows if m == mode)  # type: ignore[arg-type]
                  for k in ("wall", "cpu", "store", "versions")} for mode in ("sparql", "diff")}
    print()
    print("| median | sparql | diff | diff / sparql |")
    print("|---|---|---|---|")
    for k in ("wall", "cpu", "store", "versions"):
        print(f"| {k} | {med['sparql'][k]:.2f} | {med['diff'][k]:.2f} | {med['diff'][k] / max(med['sparql'][k], 1e-9):.2f} |")
    both = {m: med[m]["store"] + med[m]["versions"] for m in med}
    print(f"| store + versions | {both['sparql']:.2f} | {both['diff']:.2f} | {both['diff'] / max(both['sparql'], 1e-9):.2f} |")


if __name__ == "__main__":
    main()
