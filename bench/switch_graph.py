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

With ``--renamed``, one more switch of this checkout's copy measures what the fragments renamed by it
cost (a fragment's IRI carries its start line: a line inserted above renames it). The changed files'
quads are read before and after the switch (``file_quads``, the store closed by acms); a fragment that
vanished and one that appeared with the same owners, level of detail and text are one fragment renamed.
Had it kept its IRI, only its quads whose predicate and object changed (its lines) would go out and
come in: the rest of its quads, the owners' links to it and its vector are what the rename costs. The
seconds are the run's store phase in the share of the quads its diff removed and inserted that a stable
IRI would have spared, plus the embedding's share of the run (the renamed fragments among those it
embedded). An estimate: the caches' rows of those fragments are made again either way (their lines moved).

    python bench/switch_graph.py PREPARED WORK --baseline REV [--rounds 2] [--edits 3] [--edit-file textwrap.py]
                                 [--renamed]

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

from pyoxigraph import Literal, NamedNode, Quad

from acms.store.oxigraph import OxigraphStore
from acms.vocab import RDF, TIER_HOT, TIER_WARM, UKO
from installed import as_installed

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
           "files": float(report["files_indexed"] + report.get("files_relinked", 0)),
           "embedded": float(report.get("embedded", 0)), "embeddings": float(t.get("embeddings", 0.0))}
    row.update({k: float(t.get(k, 0.0)) for k in GRAPH})
    row["graph"] = sum(row[k] for k in GRAPH)
    row["outside"] = row["seconds"] - sum(t.values())
    return row


def changed_files(store: OxigraphStore, repo: Path, a: str, b: str) -> list[NamedNode]:
    """The IRIs of the files the two branches hold differently, as the store names them."""
    names = subprocess.run(["git", "diff", "--name-only", a, b], cwd=repo, check=True, capture_output=True,
                           text=True).stdout.split()
    out: list[NamedNode] = []
    for name in names:
        for q in store.quads(predicate=UKO.path, obj=Literal(name)):
            if q.graph_name in (TIER_HOT, TIER_WARM) and isinstance(q.subject, NamedNode):
                out.append(q.subject)
                break
    return out


class Fragments:
    """One side's fragments among the files' quads: each one's quads, (predicate, object) pairs and key."""

    def __init__(self, quads: list[Quad]) -> None:
        self.all = quads
        self.quads: dict[object, list[Quad]] = {}
        owners: dict[object, set[str]] = {}
        frags = {q.subject for q in quads if q.predicate == RDF.type and q.object == UKO.Fragment}
        for q in quads:
            if q.subject in frags:
                self.quads.setdefault(q.subject, []).append(q)
            elif q.predicate == UKO.hasFragment and q.object in frags:
                self.quads.setdefault(q.object, []).append(q)
                owners.setdefault(q.object, set()).add(q.subject.value)
        self.pairs = {f: {(q.predicate, q.object) for q in qs if q.subject == f and q.predicate != UKO.vector}
                      for f, qs in self.quads.items()}
        self.keys = {f: (frozenset(owners.get(f, ())), *sorted(str(o) for p, o in self.pairs[f]
                                                                if p in (UKO.lod, UKO.text))) for f in self.quads}


def renamed_cost(repo: Path, branches: tuple[str, str], source: Path, script: Path, timing: Path) -> dict[str, float]:
    """What the fragments renamed by one switch (``branches[1]`` -> ``branches[0]``) cost: quads, and
    seconds estimated (see the module docstring)."""
    graph = repo / ".acms" / "graph"
    store = OxigraphStore(graph, read_only=True)
    try:
        files = changed_files(store, repo, *branches)
        before = Fragments(store.file_quads(files))
    finally:
        store.close()
    subprocess.run(["git", "checkout", "-q", branches[0]], cwd=repo, check=True)
    row = index(repo, source, script, timing)
    store = OxigraphStore(graph, read_only=True)
    try:
        after = Fragments(store.file_quads(files))
    finally:
        store.close()
    gone: dict[tuple[object, ...], list[object]] = {}
    for f in before.quads:
        if f not in after.quads:
            gone.setdefault(before.keys[f], []).append(f)
    pairs = [(gone[after.keys[f]].pop(), f) for f in after.quads if f not in before.quads and gone.get(after.keys[f])]
    out_all = sum(len(before.quads[o]) for o, _ in pairs)
    in_all = sum(len(after.quads[n]) for _, n in pairs)
    out_kept_iri = sum(len(before.pairs[o] - after.pairs[n]) for o, n in pairs)  # its lines, had it kept its IRI
    in_kept_iri = sum(len(after.pairs[n] - before.pairs[o]) for o, n in pairs)
    # the seconds: the run's store phase (the diff: its removals and its bulk load) in the share of the quads
    # it removed and inserted that a stable IRI would have left alone; the vectors the embedding wrote after it
    # are the embedding's
    removed = len(set(before.all) - set(after.all))
    inserted = sum(1 for q in set(after.all) - set(before.all) if q.predicate != UKO.vector)
    in_vectors = sum(1 for _, n in pairs for q in after.quads[n] if q.predicate == UKO.vector)
    spared = (out_all - out_kept_iri) + (in_all - in_vectors - in_kept_iri)
    store_s = row["store"] * spared / max(removed + inserted, 1)
    embedded = row["embedded"]
    vectors = sum(1 for _, n in pairs if any(q.predicate == UKO.vector for q in after.quads[n]))  # embedded again
    embedding = row["embeddings"] * min(vectors, embedded) / embedded if embedded else 0.0
    return {"fragments": float(len(before.quads)), "renamed": float(len(pairs)), "quads out": float(out_all),
            "quads in": float(in_all), "out had it kept its IRI": float(out_kept_iri),
            "in had it kept its IRI": float(in_kept_iri), "store s saved": store_s, "embedding s saved": embedding,
            "switch s": row["seconds"], "store s": row["store"], "embedded": float(embedded),
            "renamed embedded": float(vectors), "the diff's quads out": float(removed),
            "the diff's quads in": float(inserted), "of them a stable IRI spares": float(spared)}


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
    as_installed()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("prepared", type=Path, help="a prepared, indexed git repository (only read)")
    parser.add_argument("work", type=Path, help="where the two copies go (written to)")
    parser.add_argument("--baseline", required=True, help="the git revision of acms to compare with")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--branches", nargs=2, default=["switch", "main"], help="checked out in turn")
    parser.add_argument("--edits", type=int, default=0, help="one-edit refreshes of each copy after the switches")
    parser.add_argument("--edit-file", default="textwrap.py", help="the file of the prepared repository edited")
    parser.add_argument("--renamed", action="store_true",
                        help="one more switch measures what its renamed fragments cost (quads, seconds)")
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
        if args.renamed:
            subprocess.run(["git", "checkout", "-q", "-f", args.branches[1]], cwd=copies["this"], check=True)
            index(copies["this"], CHECKOUT, script, timing)
            cost = renamed_cost(copies["this"], (args.branches[0], args.branches[1]), CHECKOUT, script, timing)
            print(f"\nThe fragments renamed by a switch to {args.branches[0]} (this checkout)\n")
            print("| | value |\n|---|---|")
            for key, value in cost.items():
                print(f"| {key} | {value:.2f} |" if key.endswith(" s") or " s " in key or "µs" in key else f"| {key} | {value:.0f} |")


if __name__ == "__main__":
    main()
