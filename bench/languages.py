"""Indexing speed per file of the tree-sitter languages against Python's, measured in the same run.

For every corpus (one folder per language), each code file goes through what indexing does to it
before the store: the language's registered extractor (parse, symbols, calls, imports, fragments;
a fragment's token count is not stored, so none is counted). Python's files go through the same
path (``ast``), and that is the baseline the ratios are against. The table gives files, lines, milliseconds per file, micro-
seconds per line, and both ratios (per file and per line) to Python's; the issue asks for the per
file ratio to stay within 2x. Best of ``--repeat`` passes (the machine is shared).

    python bench/languages.py [--snapshots DIR] [--corpus LANG=DIR ...] [--repeat 3]

Default corpora: Python from the dev set's httpx snapshot, Go from gin's, JavaScript from axios's
``lib/`` (the dev set's ``snapshots/`` folder, which is not part of this repository: ``--snapshots DIR``
or ``ACMS_DEVSET_SNAPSHOTS``; extracted to a temporary folder), else this repository's ``src/`` for Python; every other language from tests/fixtures/polyglot_project (small files: its
per-file figures are a floor, its per-line figures carry the fixed cost of each file).
"""

from __future__ import annotations

import argparse
import os
import tarfile
import tempfile
import time
from pathlib import Path

from acms.ingest.extractors import extract
from acms.ingest.model import SourceFile
from acms.ingest.ts_languages import languages
from acms.ingest.walker import WalkSettings, language_for, list_files

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "polyglot_project"


def snapshot(snapshots: Path | None, name: str, into: Path, sub: str = "") -> Path | None:
    """The dev set's snapshot ``name`` extracted under ``into`` (its ``sub`` folder), or None."""
    found = sorted(snapshots.glob(f"{name}-*.tar.gz")) if snapshots and snapshots.is_dir() else []
    if not found:
        return None
    with tarfile.open(found[0]) as tar:
        tar.extractall(into, filter="data")
    top = next(p for p in into.iterdir() if p.name.startswith(f"{name}-"))
    return top / sub if sub else top


def corpora(tmp: Path, given: list[str], snapshots: Path | None) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for lang, sub, name in (("python", "", "httpx"), ("go", "", "gin"), ("javascript", "lib", "axios")):
        folder = tmp / name
        folder.mkdir()
        found = snapshot(snapshots, name, folder, sub)
        if found is not None:
            out[lang] = found
    out.setdefault("python", ROOT / "src")
    for lang in languages():
        out.setdefault(lang, FIXTURE)
    for item in given:
        lang, _, path = item.partition("=")
        out[lang] = Path(path)
    return out


def files_of(root: Path, language: str) -> list[SourceFile]:
    out = []
    for f in list_files(root, WalkSettings()).files:
        if language_for(f.path) != language:
            continue
        text = Path(f.abs_path).read_text(encoding="utf-8", errors="replace")
        out.append(SourceFile(f.path, text, len(text.encode()), "0" * 64, language))
    return out


def measure(sources: list[SourceFile], repeat: int) -> float:
    """Best seconds over ``repeat`` passes for the extraction of every file."""
    paths = {s.path for s in sources}
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for source in sources:
            extract(source, paths, 40)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", default=[], metavar="LANG=DIR")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--snapshots", type=Path, default=os.environ.get("ACMS_DEVSET_SNAPSHOTS"),
                        help="the dev set's snapshots/ folder (NAME-*.tar.gz); without it: src/ and the fixture")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for lang, root in corpora(Path(tmp), args.corpus, args.snapshots).items():
            sources = files_of(root, lang)
            if not sources:
                continue
            seconds = measure(sources, args.repeat)
            lines = sum(s.text.count("\n") + 1 for s in sources)
            rows.append((lang, root, len(sources), lines, seconds))
    base = next(r for r in rows if r[0] == "python")
    base_file, base_line = base[4] / base[2], base[4] / base[3]
    print(f"load average {os.getloadavg()[0]:.2f}; best of {args.repeat}; extraction per file\n")
    print("| language | corpus | files | lines | ms/file | µs/line | per file vs python | per line vs python |")
    print("|---|---|---|---|---|---|---|---|")
    for lang, root, files, lines, seconds in rows:
        corpus = root.name if root != FIXTURE else "polyglot fixture"
        print(f"| {lang} | {corpus} | {files} | {lines:,} | {seconds / files * 1e3:.2f} | {seconds / lines * 1e6:.1f} "
              f"| {seconds / files / base_file:.2f}x | {seconds / lines / base_line:.2f}x |")


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "languages")  # --write-docs: this run's tables onto docs/benchmarks.md
