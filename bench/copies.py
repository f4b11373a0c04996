"""How alike are the files a sketch calls alike, and what does finding copies cost?

For each project given (default: the interpreter's standard library), every listed file is sketched as
an index run sketches it (:func:`acms.ingest.copies.sketch`); every pair that shares a locality-sensitive
hashing band is compared by its estimated similarity (MinHash) and by the exact Jaccard similarity of
the two shingle sets. The table counts pairs by estimated similarity with the exact figure beside it, so
the threshold (``acms.ingest.copies.THRESHOLD``) can be read off: where pairs stop being the same file
edited a little and become files that merely share boilerplate. ``--show LO HI`` lists the pairs in a
band for a look by eye; ``--same-stem`` keeps only the pairs that may be copies (other folders, the
same file name's stem), the rule the index applies. The time to sketch every file and to group them is printed beside the time to
read the files (the baseline in the same run).

    python bench/copies.py [PROJECT ...] [--same-stem] [--show 0.6 0.9] [--mirror]
"""

from __future__ import annotations

import argparse
import re
import sysconfig
import time
from itertools import combinations
from pathlib import Path

import numpy as np

from acms.ingest.copies import (BANDS, ROWS, SHINGLE, _shingles, find_copies, may_copy, normalized_lines,
                                parse_sketch, similarity, sketch)
from acms.ingest.walker import ReadText, list_files, read_source

BINS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0001)


def measure(root: Path, show: tuple[float, float] | None, same_stem: bool) -> None:
    listing = list_files(root)
    t = time.perf_counter()
    texts = {}
    for f in listing.files:
        got = read_source(f)
        if isinstance(got, ReadText):
            texts[f.path] = got.text
    read_s = time.perf_counter() - t
    t = time.perf_counter()
    sketches = {p: sketch(text) for p, text in texts.items()}
    sketch_s = time.perf_counter() - t
    files = [s for p, lit in sketches.items() if lit and (s := parse_sketch(p, lit)) is not None]
    t = time.perf_counter()
    copies = find_copies(files)
    group_s = time.perf_counter() - t
    by_band: dict[bytes, list[str]] = {}
    vals = {f.path: f.values for f in files}
    for f in files:
        raw = f.values.tobytes()
        for band in range(BANDS):
            by_band.setdefault(band.to_bytes(1, "little") + raw[band * ROWS * 4:(band + 1) * ROWS * 4], []).append(f.path)
    pairs = {tuple(sorted(p)) for m in by_band.values() if 1 < len(m) <= 200 for p in combinations(m, 2)}
    shingles = {}
    rows: list[tuple[float, float, str, str]] = []
    for a, b in sorted(pairs):
        if same_stem and not may_copy(a, b):
            continue
        for p in (a, b):
            if p not in shingles:
                shingles[p] = set(_shingles(normalized_lines(texts[p])).tolist())
        exact = len(shingles[a] & shingles[b]) / len(shingles[a] | shingles[b])
        rows.append((similarity(vals[a], vals[b]), exact, a, b))
    print(f"\n{root}: {len(listing.files)} files listed, {len(files)} sketched (>= {SHINGLE}-line shingles), "
          f"{len(pairs)} pairs proposed by the bands")
    print(f"read {read_s:.2f} s (baseline) | sketch {sketch_s:.2f} s ({sketch_s / max(read_s, 1e-9):.2f}x) | "
          f"group {group_s * 1000:.1f} ms | copies found {len(copies.original_of)}")
    print(f"{'estimated':>14} {'pairs':>6} {'exact mean':>11} {'exact min':>10} {'exact max':>10}")
    for lo, hi in zip(BINS, BINS[1:]):
        inside = [r for r in rows if lo <= r[0] < hi]
        if inside:
            ex = [r[1] for r in inside]
            print(f"{lo:>6.2f}-{min(hi, 1.0):<7.2f} {len(inside):>6} {sum(ex) / len(ex):>11.3f} {min(ex):>10.3f} {max(ex):>10.3f}")
    if show:
        for est, exact, a, b in sorted(rows, reverse=True):
            if show[0] <= est < show[1]:
                print(f"  {est:.2f} {exact:.2f}  {a}  {b}")


IMPORT_LINE = re.compile(r"^(\s*)(from|import) (\S+)")


def mirror(root: Path) -> None:
    """Each .py file against a copy whose import lines a copy step rewrote (``import x`` ->
    ``import vendored_copy.x``): the share of such copies each threshold and shingle size recognises."""
    import acms.ingest.copies as copies

    texts = [f.read_text(encoding="utf-8", errors="replace") for f in sorted(root.rglob("*.py"))]
    print(f"\n{root}: {len(texts)} .py files against their import-rewritten copies")
    print(f"{'shingle':>8} {'files':>6} {'median':>7} {'p5':>6} {'p10':>6} {'>=0.6':>7} {'>=0.7':>7} {'>=0.8':>7}")
    kept = copies.SHINGLE
    try:
        for size in (3, 2, 1):
            copies.SHINGLE = size
            sims = []
            for text in texts:
                copy = "\n".join(IMPORT_LINE.sub(lambda m: f"{m[1]}{m[2]} vendored_copy.{m[3]}", line)
                                 for line in text.splitlines())
                a, b = sketch(text), sketch(copy)
                if a and b:
                    sa, sb = parse_sketch("a", a), parse_sketch("b", b)
                    if sa is not None and sb is not None:
                        sims.append(similarity(sa.values, sb.values))
            s = np.array(sims)
            print(f"{size:>8} {s.size:>6} {np.median(s):>7.2f} {np.quantile(s, 0.05):>6.2f} {np.quantile(s, 0.1):>6.2f}"
                  + "".join(f"{(s >= x).mean():>7.3f}" for x in (0.6, 0.7, 0.8)))
    finally:
        copies.SHINGLE = kept


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("projects", nargs="*", type=Path)
    ap.add_argument("--show", nargs=2, type=float)
    ap.add_argument("--mirror", action="store_true", help="also: each .py file against an import-rewritten copy")
    ap.add_argument("--same-stem", action="store_true", help="only pairs that may be copies (other folders, one stem)")
    a = ap.parse_args()
    for root in a.projects or [Path(sysconfig.get_paths()["stdlib"])]:
        measure(root, tuple(a.show) if a.show else None, a.same_stem)
        if a.mirror:
            mirror(root)


if __name__ == "__main__":
    main()
