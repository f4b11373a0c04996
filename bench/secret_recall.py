"""The scrubber measured: recall per placement, false positives on decoys and on real code, and its
cost per megabyte as files grow.

* **Recall**: ``bench/secret_placements.py``'s project over several seeds (other random values in the
  same placements); a secret is caught when none of its fragments is left in ``scrub``'s output (a
  secret file name: when ``redact_path`` replaced it). One row per placement.
* **Decoys**: the look-alikes planted beside them; a decoy is a false positive when it does not
  survive scrubbing whole.
* **Real code**: every file of acms's own ``src/`` and of the standard library, which hold no secret:
  every finding there is a false positive (listed).
* **Cost**: CPU seconds per MB of ``scrub`` (the process's own time: the machines these run on are
  shared, and wall time there says more about the neighbours) on 1, 5 and 50 MB files, multi-line
  and on one line, of ordinary code (the standard library) and of dense secrets (the placements'
  files repeated); the ratio column divides each row's CPU seconds per MB by its kind's 1 MB row:
  linear is about 1. Wall seconds are printed beside.

    python bench/secret_recall.py [--seeds 5] [--sizes 1,5,50] [--no-code]
"""

from __future__ import annotations

import argparse
import random
import sys
import sysconfig
import time
from collections import Counter
from pathlib import Path

from acms.privacy import scan, scrub
from acms.privacy.names import redact_path

_HERE = Path(__file__).resolve().parent
_TEXT = (".py", ".pyi", ".md", ".rst", ".txt", ".toml", ".cfg", ".ini", ".json", ".yml", ".yaml", ".sh",
         ".js", ".html", ".css", ".c", ".h", ".xml")


if str(_HERE) not in sys.path:  # bench/ is sys.path[0] when run as a script, not when a test loads it by path
    sys.path.insert(0, str(_HERE))
import secret_placements as sp  # a sibling script: the generated corpus


def recall(seeds: int) -> None:
    caught: Counter[str] = Counter()
    planted: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    decoys: Counter[str] = Counter()
    missed: list[str] = []
    redacted: list[str] = []
    for seed in range(1, seeds + 1):
        for p in sp.build(seed):
            out = scrub(p.text, p.path).text
            for s in p.secrets:
                planted[p.kind] += 1
                left = [f for f in s.fragments if f in out]
                if left:
                    missed.append(f"{p.kind} (seed {seed}): {left[0][:24]}…")
                else:
                    caught[p.kind] += 1
            if p.name_secret:
                planted[p.kind] += 1
                if p.name_secret in redact_path(p.path):
                    missed.append(f"{p.kind} (seed {seed}): the file name")
                else:
                    caught[p.kind] += 1
            for d in p.decoys:
                decoys[p.kind] += 1
                if d in out:
                    kept[p.kind] += 1
                else:
                    redacted.append(f"{p.kind}: {d[:60]}")
    kinds = [k for k in dict.fromkeys(p.kind for p in sp.build(1))]
    secret_kinds = [k for k in kinds if planted[k]]
    n, c = sum(planted.values()), sum(caught.values())
    nd, kd = sum(decoys.values()), sum(kept.values())
    print(f"{len(secret_kinds)} placements of secrets, {len(kinds) - len(secret_kinds)} of decoys only; "
          f"{seeds} seeds")
    print()
    print("| placement | secrets caught | decoys kept |")
    print("| --- | ---: | ---: |")
    for k in kinds:
        sec = f"{caught[k]}/{planted[k]}" if planted[k] else "-"
        dec = f"{kept[k]}/{decoys[k]}" if decoys[k] else "-"
        print(f"| {k} | {sec} | {dec} |")
    print()
    print(f"recall: {c}/{n} = {100 * c / n:.1f} %; placements with a miss: "
          f"{sum(caught[k] < planted[k] for k in secret_kinds)} of {len(secret_kinds)}")
    print(f"decoys kept: {kd}/{nd}; false-positive rate on decoys: {100 * (nd - kd) / nd:.1f} %")
    for m in missed:
        print("  missed:", m)
    for r in redacted:
        print("  redacted decoy:", r)


def real_code() -> None:
    roots = [_HERE.parent / "src", Path(sysconfig.get_paths()["stdlib"])]
    print()
    print("| real code | files | MB | findings | findings per MB | files with a finding | MB/s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    listed: list[str] = []
    for root in roots:
        files = sorted(p for p in root.rglob("*") if p.suffix in _TEXT and p.is_file()
                       and "site-packages" not in p.parts and "__pycache__" not in p.parts)
        size = found = with_finding = 0
        seconds = 0.0
        for f in files:
            try:
                text = f.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            size += len(text.encode())
            rel = str(f.relative_to(root))
            t = time.perf_counter()
            hits = scan(text, rel)
            seconds += time.perf_counter() - t
            found += len(hits)
            with_finding += bool(hits)
            for h in hits:
                line = text[text.rfind("\n", 0, h.start) + 1:text.find("\n", h.end) % (len(text) + 1)]
                listed.append(f"{root.name}/{rel}:{h.line} {h.kind}: {line.strip()[:90]}")
        mb = size / 1e6
        print(f"| {root} | {len(files)} | {mb:.1f} | {found} | {found / mb:.2f} | {with_finding} "
              f"({100 * with_finding / max(len(files), 1):.2f} %) | {mb / seconds:.1f} |")
    for x in listed:
        print("  finding:", x)


def _code_text(mb: float) -> str:
    """``mb`` megabytes of standard-library source: one megabyte of files drawn across the whole
    library (seeded), repeated, so that every size holds the same mix (the library's first files are
    not like its tests)."""
    lib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(f for f in lib.rglob("*.py") if "site-packages" not in f.parts)
    random.Random(5).shuffle(files)
    parts: list[str] = []
    size = 0
    for f in files:
        text = f.read_text(encoding="utf-8", errors="replace")
        parts.append(text)
        size += len(text)
        if size >= 1e6:
            break
    block = "".join(parts)[:1_000_000]
    return (block * (int(mb) + 1))[: int(mb * 1e6)]


def _dense_text(mb: float) -> str:
    """The placements' files (secrets and decoys) one after another, with new values each round, up to
    ``mb`` megabytes: every megabyte the same mix."""
    parts: list[str] = []
    size, seed = 0, 100
    while size < mb * 1e6:
        for p in sp.build(seed):
            parts.append(p.text)
            size += len(p.text)
        seed += 1
    return "".join(parts)[: int(mb * 1e6)]


def cost(sizes: list[float]) -> None:
    print()
    print("| text | layout | MB | CPU s | CPU s/MB | ratio to 1 MB | wall s | findings |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, make, path in (("code", _code_text, "big.py"), ("dense secrets", _dense_text, "big.txt")):
        biggest = make(max(sizes))
        for layout in ("multi-line", "one line"):
            base = None
            for mb in sizes:
                text = biggest[: int(mb * 1e6)]
                if layout == "one line":
                    text = text.replace("\n", " ")
                t, cpu = time.perf_counter(), time.process_time()
                found = len(scrub(text, path).findings)
                s, wall = time.process_time() - cpu, time.perf_counter() - t
                per = s / mb
                base = base or per
                print(f"| {name} | {layout} | {mb:g} | {s:.2f} | {per:.2f} | {per / base:.2f} | {wall:.1f} | {found} |",
                      flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5, help="seeds of the placements' values")
    ap.add_argument("--sizes", default="1,5,50", help="MB of the cost rows")
    ap.add_argument("--no-code", action="store_true", help="skip the real-code rows")
    args = ap.parse_args()
    scrub("warm = 'up'", "x.py")
    recall(args.seeds)
    if not args.no_code:
        real_code()
    sizes = [float(x) for x in args.sizes.split(",") if x]
    if sizes:
        cost(sizes)


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "secret_recall")  # --write-docs: this run's tables onto docs/benchmarks.md
