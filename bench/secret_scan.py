"""Secret scrubbing on a planted-secret corpus: acms ``scrub`` next to detect-secrets alone.

Writes the corpus of ``bench/secrets_corpus.py`` (seeded), runs every file through (a)
``acms.privacy.scrub`` and (b) detect-secrets with its default plugins and filters (its own
``scan_file``, as its CLI does; each reported value is then cut from its line), and prints:

* recall: planted secrets none of whose fragments is left in the output;
* decoys kept: look-alikes (example keys, hashes, UUIDs, placeholders...) still in the output;
* misses per kind, and every missed secret / redacted decoy of acms;
* MB/s on the corpus and on ordinary source code (the running interpreter's standard library).

    python bench/secret_scan.py [--seed N] [--code-mb 5] [--keep DIR] [--json]
"""

from __future__ import annotations

import sys
from pathlib import Path

import argparse
import json
import os
import sysconfig
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from acms.privacy import scrub

_HERE = Path(__file__).resolve().parent


if str(_HERE) not in sys.path:  # bench/ is sys.path[0] when run as a script, not when a test loads it by path
    sys.path.insert(0, str(_HERE))
import secrets_corpus  # a sibling script: the generated corpus


@dataclass
class Score:
    """What one detector left in the corpus, and how fast it ran."""

    name: str
    secrets: int = 0
    caught: int = 0
    decoys: int = 0
    kept: int = 0
    missed: list[dict[str, str]] = field(default_factory=list)
    redacted_decoys: list[dict[str, str]] = field(default_factory=list)
    misses_by_kind: Counter[str] = field(default_factory=Counter)
    mb_s_corpus: float = 0.0
    mb_s_code: float = 0.0

    @property
    def recall(self) -> float:
        return self.caught / self.secrets if self.secrets else 1.0

    @property
    def kept_share(self) -> float:
        return self.kept / self.decoys if self.decoys else 1.0

    def to_json(self) -> dict[str, object]:
        return {"recall": round(self.recall, 4), "caught": self.caught, "secrets": self.secrets,
                "decoys_kept": round(self.kept_share, 4), "kept": self.kept, "decoys": self.decoys,
                "misses_by_kind": dict(self.misses_by_kind), "missed": self.missed,
                "redacted_decoys": self.redacted_decoys, "mb_s_corpus": round(self.mb_s_corpus, 2),
                "mb_s_code": round(self.mb_s_code, 2)}


def score(name: str, manifest: dict[str, list[dict[str, object]]],
          outputs: dict[str, str]) -> Score:
    s = Score(name)
    for sec in manifest["secrets"]:
        s.secrets += 1
        out = outputs[str(sec["file"])]
        frags = [str(f) for f in cast(list[object], sec["fragments"])]
        if any(f in out for f in frags):
            s.missed.append({"kind": str(sec["kind"]), "file": str(sec["file"]),
                             "placement": str(sec["placement"])})
            s.misses_by_kind[str(sec["kind"])] += 1
        else:
            s.caught += 1
    for dec in manifest["decoys"]:
        s.decoys += 1
        if str(dec["value"]) in outputs[str(dec["file"])]:
            s.kept += 1
        else:
            s.redacted_decoys.append({"kind": str(dec["kind"]), "file": str(dec["file"]),
                                      "value": str(dec["value"])})
    return s


def run_scrub(texts: dict[str, str]) -> dict[str, str]:
    return {rel: scrub(text, rel).text for rel, text in texts.items()}


def run_detect_secrets(root: Path, rels: list[str]) -> dict[str, str]:
    """detect-secrets as its CLI scans a file (default plugins and filters), then each reported
    value cut from the line it was reported on (anywhere in the file if the line moved)."""
    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings

    out: dict[str, str] = {}
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with default_settings():
            for rel in rels:
                text = (root / rel).read_text(encoding="utf-8")
                lines = text.split("\n")
                for secret in scan_file(rel):
                    value = secret.secret_value or ""
                    if not value:
                        continue
                    i = secret.line_number - 1
                    if 0 <= i < len(lines) and value in lines[i]:
                        lines[i] = lines[i].replace(value, "[REDACTED:detect-secrets]")
                    else:
                        lines = "\n".join(lines).replace(value, "[REDACTED:detect-secrets]") \
                            .split("\n")
                out[rel] = "\n".join(lines)
    finally:
        os.chdir(cwd)
    return out


def code_sample(mb: float) -> list[Path]:
    """Standard-library ``.py`` files, sorted, up to ``mb`` megabytes: ordinary source code."""
    lib = Path(sysconfig.get_paths()["stdlib"])
    files: list[Path] = []
    size = 0
    for f in sorted(lib.rglob("*.py")):
        if "site-packages" in f.parts:
            continue
        try:
            n = f.stat().st_size
        except OSError:
            continue
        files.append(f)
        size += n
        if size >= mb * 1e6:
            break
    return files


def throughput(fn: Callable[[], object], nbytes: int, rounds: int = 1) -> float:
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return nbytes / 1e6 / best if best > 0 else float("inf")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=20240611)
    parser.add_argument("--code-mb", type=float, default=5.0,
                        help="MB of standard-library code for the MB/s column (0: skip)")
    parser.add_argument("--keep", type=Path, help="write the corpus here (default: a temp dir)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()

    corpus = secrets_corpus
    tmp = None
    if args.keep:
        root = args.keep
    else:
        tmp = tempfile.TemporaryDirectory(prefix="acms-secrets-")
        root = Path(tmp.name)
    corpus.build(root, args.seed)
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    rels = sorted({str(x["file"]) for x in manifest["secrets"] + manifest["decoys"]})
    texts = {rel: (root / rel).read_text(encoding="utf-8") for rel in rels}
    corpus_bytes = sum(len(t.encode()) for t in texts.values())

    scrub("warm up", "x.py")
    acms = score("acms scrub", manifest, run_scrub(texts))
    acms.mb_s_corpus = throughput(lambda: run_scrub(texts), corpus_bytes, rounds=5)
    ds = score("detect-secrets", manifest, run_detect_secrets(root, rels))
    ds.mb_s_corpus = throughput(lambda: run_detect_secrets(root, rels), corpus_bytes, rounds=3)

    code_mb = 0.0
    if args.code_mb > 0:
        files = code_sample(args.code_mb)
        lib = Path(sysconfig.get_paths()["stdlib"])
        code = {str(f.relative_to(lib)): f.read_text(encoding="utf-8", errors="replace")
                for f in files}
        nbytes = sum(len(t.encode()) for t in code.values())
        code_mb = nbytes / 1e6
        acms.mb_s_code = throughput(lambda: [scrub(t, p) for p, t in code.items()], nbytes)
        ds.mb_s_code = throughput(lambda: run_detect_secrets(lib, list(code)), nbytes)
    if tmp is not None:
        tmp.cleanup()

    kinds = sorted({str(s["kind"]) for s in manifest["secrets"]})
    if args.json:
        print(json.dumps({
            "seed": args.seed, "files": len(rels), "corpus_bytes": corpus_bytes,
            "secrets": len(manifest["secrets"]), "kinds": len(kinds),
            "decoys": len(manifest["decoys"]), "code_mb": round(code_mb, 2),
            "scrub": acms.to_json(), "detect_secrets": ds.to_json()}, indent=1))
        return

    print(f"corpus: {len(rels)} files, {corpus_bytes / 1e3:.1f} kB, {len(manifest['secrets'])} "
          f"secrets of {len(kinds)} kinds, {len(manifest['decoys'])} decoys (seed {args.seed}); "
          f"code: {code_mb:.1f} MB of the standard library")
    print()
    print(f"{'detector':<16} {'recall':>16} {'decoys kept':>16} {'MB/s corpus':>12} "
          f"{'MB/s code':>10}")
    for s in (acms, ds):
        print(f"{s.name:<16} {s.caught:>4}/{s.secrets:<4} {100 * s.recall:5.1f}% "
              f"{s.kept:>4}/{s.decoys:<4} {100 * s.kept_share:5.1f}% {s.mb_s_corpus:>12.2f} "
              f"{s.mb_s_code:>10.2f}")
    print()
    counts = Counter(str(s["kind"]) for s in manifest["secrets"])
    print(f"{'kind':<22} {'planted':>7} {'scrub missed':>13} {'detect-secrets missed':>22}")
    for kind in kinds:
        print(f"{kind:<22} {counts[kind]:>7} {acms.misses_by_kind[kind]:>13} "
              f"{ds.misses_by_kind[kind]:>22}")
    if acms.missed or acms.redacted_decoys:
        print()
        for m in acms.missed:
            print(f"scrub missed   {m['kind']:<20} {m['file']}  ({m['placement']})")
        for d in acms.redacted_decoys:
            print(f"scrub redacted decoy {d['kind']:<14} {d['file']}  {d['value'][:60]}")


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "secret_scan")  # --write-docs: this run's tables onto docs/benchmarks.md
