"""The vector cache updated for one edited file, against the matrix written whole (what a full build or a
compaction writes), in one run: in a fresh process (the matrix read from disk first, as ``acms index``
does) and in a long-lived one (``acms mcp``/``serve``/``watch``: the matrix its last update saved is kept,
``index.vectors._kept``), and the first read of the updated cache by another process.

    python bench/vector_update.py PROJECT [--file textwrap.py] [--repeat 7]

PROJECT is an indexed project whose caches hold a vector cache and a token segment of this acms (``acms
index`` leaves them). Both are copied to a temporary directory first; nothing is written into PROJECT.
The edited file's rows are let go and appended again with the same vectors (what an update costs does
not depend on what the vectors are), as the caches' update does it: ``VectorMatrix.plan`` says which rows
stay (a fresh process looks every fragment up; a long-lived one knows each kept row's file), ``updated``
lets the others go and appends, ``save`` links the base and writes the tail. The updated matrix must hold the same live rows
and answer the same nearest rows as the matrix written whole (checked). Times are medians of
``--repeat`` runs, with the ratio to the whole write of the same run; "written" counts the bytes of
files that are not links to the base. The machine is shared, so the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from acms.index import vectors
from acms.index.vectors import VectorMatrix
from acms.retrieval.segment import Segment


def written_bytes(directory: Path) -> int:
    """Bytes of the files under ``directory`` that are not hard links shared with another directory."""
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file() and p.stat().st_nlink == 1)


def median_ms(step: Callable[[int], object], repeat: int) -> float:
    times = []
    for i in range(repeat):
        start = time.perf_counter()
        step(i)
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--file", default="textwrap.py", help="the edited file, as a path in the project")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    cache = args.project / ".acms" / "cache"
    with tempfile.TemporaryDirectory(prefix="vector-update-") as tmp_name:
        tmp = Path(tmp_name)
        shutil.copytree(cache / "vectors", tmp / "v0")
        segment = Segment.load(cache / "tokens")
        files = [i for i, path in enumerate(segment.paths) if path == args.file]
        if not files:
            raise SystemExit(f"{args.file} is not a file of the index")
        edited = [segment.frags[i] for i in np.flatnonzero(np.asarray(segment.file_of) == files[0]).tolist()]

        def fresh() -> VectorMatrix:
            vectors._kept.clear()  # as another process finds it
            loaded = VectorMatrix.load(tmp / "v0")
            if loaded is None:
                raise SystemExit(f"no vector cache of this acms in {cache}")
            return loaded

        start = fresh()
        rows = start.rows_of(edited)
        if (rows < 0).any():
            raise SystemExit(f"{int((rows < 0).sum())} of {args.file}'s fragments have no row")
        appended = np.stack([start.row(i) for i in rows.tolist()])

        changed = {segment.files[files[0]]}
        order = {frag: i for i, frag in enumerate(edited)}

        def update(matrix: VectorMatrix, target: Path) -> VectorMatrix:
            plan = matrix.plan(segment.frags, segment.files, segment.file_of, changed)
            again = [segment.frags[i] for i in plan.again.tolist()]
            rows_again = appended[[order[frag] for frag in again]]
            return matrix.updated(plan.kept, again, rows_again, "bench", plan, segment.frags).save(target)

        whole = start.compacted()
        whole_ms = median_ms(lambda i: whole.save(tmp / f"whole{i}"), args.repeat)
        fresh_ms = median_ms(lambda i: update(fresh(), tmp / f"fresh{i}"), args.repeat)
        kept = [update(fresh(), tmp / "kept0")]  # the process's last update: kept, as a server keeps it
        kept_ms = median_ms(lambda i: kept.append(update(kept[-1], tmp / f"kept{i + 1}")), args.repeat)
        reread_ms = median_ms(lambda i: (vectors._kept.clear(), VectorMatrix.load(tmp / f"kept{i + 1}")), args.repeat)
        whole_read_ms = median_ms(lambda i: (vectors._kept.clear(), VectorMatrix.load(tmp / f"whole{i}")), args.repeat)

        last = kept[-1]
        on_disk = (vectors._kept.clear(), VectorMatrix.load(tmp / f"kept{args.repeat}"))[1]
        assert on_disk is not None
        want = {frag: whole.row(i).tobytes() for i, frag in whole.live()}
        for got in (last, on_disk):
            assert {frag: got.row(i).tobytes() for i, frag in got.live()} == want, "the update lost or changed a row"
        queries = np.asarray(whole.matrix)[:: max(1, len(whole.ids) // 20)]
        assert all(last.top(q, 10) == whole.top(q, 10) for q in queries), "the update answers otherwise"
        top_layered = median_ms(lambda i: last.top(queries[i % len(queries)], 10), max(args.repeat, 20))
        top_whole = median_ms(lambda i: whole.top(queries[i % len(queries)], 10), max(args.repeat, 20))

        print(f"{len(want)} live rows of {whole.matrix.shape[1]} floats; {args.file}: {len(edited)} rows let go and "
              f"appended; load average {os.getloadavg()[0]:.2f}; medians of {args.repeat}\n")
        print("| step | ms | against the whole write | written |")
        print("| --- | --- | --- | --- |")
        rows_out = [
            ("the matrix written whole (a full build, a compaction)", whole_ms, written_bytes(tmp / "whole0")),
            ("an update in a fresh process: read, find the rows, let go, append, save", fresh_ms,
             written_bytes(tmp / "fresh0")),
            ("an update in a long-lived process (the last one kept)", kept_ms, written_bytes(tmp / "kept1")),
        ]
        for name, ms, size in rows_out:
            print(f"| {name} | {ms:.1f} | {ms / whole_ms:.3f} | {size / 1e6:.2f} MB |")
        print(f"| the updated matrix read by another process | {reread_ms:.1f} | "
              f"(the whole one read: {whole_read_ms:.1f} ms) | |")
        print(f"| a nearest-10 query, updated / whole | {top_layered:.2f} / {top_whole:.2f} | | |")


if __name__ == "__main__":
    main()
