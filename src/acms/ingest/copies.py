"""Near-identical files: find them at index time and name the one in the source tree as their original.

A project that ships a generated or vendored copy of its own source tree (a ``deno/`` or ``dist-esm/``
mirror of ``src/``, a checked-in build, a fixture copied from the code) has every symbol twice. A
ranking that scores texts cannot tell them apart, so the copy took places in results and packed
context beside, or ahead of, the file an agent should edit. Each copy is recorded as
``copy uko:copyOf original``; assembly then shows the original only and names its copies in one line
(:mod:`acms.assembly.copies`).

**Sketch** (at emit time, one literal per file, ``uko:textSketch``): the file's lines with their
whitespace collapsed, blank lines dropped, the module paths of import lines blanked (what a copy step
rewrites), each hashed (CRC-32; ``SHINGLE`` = 1: a shingle is one
line); a MinHash of ``PERMUTATIONS`` multiply-shift hashes over the set of those hashes. The share of
equal MinHash values estimates the Jaccard similarity of two files' line sets. A file of fewer than
``MIN_SHINGLES`` distinct lines has no sketch: small files (``__init__.py``, a two-line re-export) are alike
by accident, not copies. The literal is ``<shingles>:<flags>:<base64 of the 32-bit values>``; flag
``g`` says the file's head declares it generated (``@generated``, "Code generated ... DO NOT EDIT",
"auto-generated").

**Groups** (a phase of every index run, over every file's sketch, so a refresh keeps them right after
any edit): locality-sensitive hashing (``BANDS`` bands of ``ROWS`` values) proposes pairs, a pair whose
estimated similarity is at least ``THRESHOLD`` is a pair of copies when the two live in different
folders under the same file name (its stem: a copy step may change the extension), and connected pairs
form a group. Files alike in one folder under different names are variants, not copies (the standard
library's ``encodings/cp850.py`` and ``cp858.py`` share 96 % of their lines and are two codecs).
Linear in the files but for the pairs proposed. The threshold is measured by ``bench/copies.py``.

**The original** of a group is chosen by principles, not names of projects (lower wins, in order):
marked vendored, marked generated (``.gitattributes`` linguist marks, :mod:`acms.ingest.attributes`; a
generated head unless the attributes clear it), the number of folders on its path that look like output
(``OUTPUT_DIRS``, or a name such as ``dist-esm``, ``foo_generated``), no source-root folder
(``src``/``source``/``sources``) on its path, the depth of the path, its length, the path itself.
Every member at least ``THRESHOLD`` alike to the original is its copy.
"""

from __future__ import annotations

import base64
import hashlib
import re
import zlib
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from posixpath import basename, dirname

import numpy as np
from pyoxigraph import Literal, NamedNode, Quad

from acms.arrays import distinct
from acms.sparql import catalog
from acms.store.protocol import GraphStore
from acms.terms import Term
from acms.vocab import UKO, XSD

__all__ = ["Copies", "FileSketch", "MarkReport", "THRESHOLD", "choose_original", "find_copies", "mark_copies",
           "parse_sketch", "sketch"]

# Lines per shingle. Runs of lines amplify a copy step's edits: every rewritten line changes the
# SHINGLE shingles that touch it. The standard library's .py files against copies whose import lines
# were all rewritten (bench/copies.py --mirror), before import paths were blanked, estimated similarity
# at or above 0.7: 3 lines 90.6 %, 2 lines 93.4 %, 1 line 96.4 % of the files (median 0.92 for each);
# with them blanked (``normalized_lines``) every such copy scores 1.0.
SHINGLE = 1
MIN_SHINGLES = 8  # fewer: no sketch (about ten non-blank lines)
PERMUTATIONS = 64
BUCKET_PAIRS = 16  # each file of a bucket is compared with this many after it (a long bucket stays linear)
BANDS, ROWS = 16, 4  # BANDS * ROWS == PERMUTATIONS; a pair alike at 0.8 is proposed with p > 0.999
# Estimated Jaccard similarity of the line sets at which two files (other folders, one stem) are copies.
# bench/copies.py on the standard library: the most alike pair that may be copies and is not is
# unittest/test/__main__.py and unittest/test/testmock/__main__.py (exact 0.625: shared boilerplate).
# Before import paths were blanked, 96.4 % of import-rewritten copies scored 0.7 or more, 86.1 % 0.8.
THRESHOLD = 0.7

OUTPUT_DIRS = frozenset({
    "out", "output", "outputs", "build", "builds", "_build", "dist", "target", "bin", "obj", "gen", "generated",
    "__generated__", "autogen", "codegen", "vendor", "vendored", "third_party", "third-party", "thirdparty",
    "external", "externals", "deps", "node_modules", "bower_components", "es", "esm", "cjs", "umd", "amd",
    "compiled", "bundle", "bundles", "release", "releases", "site-packages", "dist-packages", "copies",
})
_OUTPUT_NAME = re.compile(r"^(.+[-_.])?(dist|build|out|gen|generated|compiled|bundle|vendor(ed)?)([-_.].+)?$")
SOURCE_DIRS = frozenset({"src", "source", "sources"})
_GENERATED_HEAD = re.compile(
    r"@generated|\bcode generated\b|\bdo not edit\b|\bauto-?generated\b|\bautomatically generated\b|"
    r"\bgenerated by\b.*\b(do not|don't) (edit|modify)\b", re.IGNORECASE)
HEAD_LINES = 5



@lru_cache(maxsize=1)
def _constants() -> tuple[np.ndarray, np.ndarray]:
    """Odd multipliers and offsets of the MinHash functions, fixed by name (the same in every process)."""
    a, b = [], []
    for i in range(PERMUTATIONS):
        d = hashlib.sha256(f"acms-minhash-{i}".encode()).digest()
        a.append(int.from_bytes(d[:8], "little") | 1)
        b.append(int.from_bytes(d[8:16], "little"))
    return np.array(a, dtype=np.uint64)[:, None], np.array(b, dtype=np.uint64)[:, None]


_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))


# An import line's module path: what a copy step rewrites (``"./util"`` -> ``"./util.ts"``, ``pkg.mod`` ->
# ``vendored.pkg.mod``). Quoted paths on lines that import, and Python's ``from X import``/``import X``.
_IMPORT_LINE = re.compile(r"^(import|export|from|#\s*include|use|require)\b|\brequire\s*\(")
_QUOTED = re.compile(r"""(["'`])[^"'`]*\1""")
_PY_MODULE = re.compile(r"^(from|import)\s+[\w.]+")
_IMPORT_STARTS = ("import", "export", "from", "#", "use")  # a cheap test before the pattern


def normalized_lines(text: str) -> list[str]:
    """The file's non-blank lines with runs of whitespace collapsed (indentation and trailing spaces
    changed by a formatter or a copy step do not make another file), and the module paths of import
    lines blanked (a copy step rewrites them; the names imported stay)."""
    out = []
    for line in text.splitlines():
        words = " ".join(line.split())
        if not words:
            continue
        if (words.startswith(_IMPORT_STARTS) or "require" in words) and _IMPORT_LINE.search(words):
            words = _PY_MODULE.sub(r"\1 _", _QUOTED.sub('""', words))
        out.append(words)
    return out


def _shingles(lines: list[str]) -> np.ndarray:
    """One 64-bit hash per run of ``SHINGLE`` lines, deduplicated."""
    h = np.fromiter((zlib.crc32(line.encode("utf-8", "surrogatepass")) for line in lines), dtype=np.uint64,
                    count=len(lines))
    n = len(lines) - SHINGLE + 1
    with np.errstate(over="ignore"):
        mixed = h[:n] * _MIX[0]
        for k in range(1, SHINGLE):
            mixed = (mixed ^ (mixed >> np.uint64(29))) + h[k : k + n] * _MIX[k]
    return distinct(mixed)


def sketch(text: str) -> str | None:
    """The ``uko:textSketch`` literal of a file's text, or None for a file too small to be a copy."""
    lines = normalized_lines(text)
    if len(lines) - SHINGLE + 1 < MIN_SHINGLES:
        return None
    shingles = _shingles(lines)
    if shingles.size < MIN_SHINGLES:  # many lines, few of them distinct (a table of one repeated line)
        return None
    a, b = _constants()
    with np.errstate(over="ignore"):
        values = ((a * shingles[None, :] + b) >> np.uint64(32)).min(axis=1).astype("<u4")
    head = "\n".join(text.splitlines()[:HEAD_LINES])
    flags = "g" if _GENERATED_HEAD.search(head) else ""
    return f"{len(shingles)}:{flags}:{base64.b64encode(values.tobytes()).decode('ascii')}"


@dataclass(frozen=True)
class FileSketch:
    """A listed file as the copies phase sees it: its path, MinHash values, whether its head says
    generated, and its ``.gitattributes`` marks."""

    path: str
    values: np.ndarray  # PERMUTATIONS uint32
    generated_head: bool = False
    marks: Mapping[str, bool] | None = None

    @property
    def generated(self) -> bool:
        marked = (self.marks or {}).get("generated")
        return marked if marked is not None else self.generated_head

    @property
    def vendored(self) -> bool:
        return bool((self.marks or {}).get("vendored"))


def parse_sketch(path: str, literal: str, marks: Mapping[str, bool] | None = None) -> FileSketch | None:
    """A stored sketch back; None for one this version cannot read (it is then no copy of anything)."""
    try:
        _, flags, data = literal.split(":", 2)
        values = np.frombuffer(base64.b64decode(data, validate=True), dtype="<u4")
    except ValueError:
        return None
    if values.size != PERMUTATIONS:
        return None
    return FileSketch(path, values, "g" in flags, marks)


def output_folders(path: str) -> int:
    """How many folders on ``path`` look like build output, generated or vendored code."""
    folders = dirname(path).split("/") if "/" in path else []
    return sum(1 for f in folders if f.lower() in OUTPUT_DIRS or _OUTPUT_NAME.match(f.lower()))


def preference(f: FileSketch) -> tuple[int, int, int, int, int, int, str]:
    """Sort key of a group's members: the first is the original (see the module docstring)."""
    folders = f.path.split("/")[:-1]
    in_source = any(d.lower() in SOURCE_DIRS for d in folders)
    return (int(f.vendored), int(f.generated), output_folders(f.path), 0 if in_source else 1,
            len(folders), len(f.path), f.path)


def choose_original(members: Iterable[FileSketch]) -> FileSketch:
    return min(members, key=preference)


@lru_cache(maxsize=1 << 16)  # every listed path, on every run: a long-lived process refreshes again and again
def _stem(path: str) -> str:
    name = basename(path)
    return name.split(".", 1)[0] if not name.startswith(".") else name


def may_copy(a: str, b: str) -> bool:
    """Whether one of two paths could be a copy of the other: other folders, the same file name's stem."""
    return dirname(a) != dirname(b) and _stem(a) == _stem(b)


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Estimated Jaccard similarity of two files' shingle sets."""
    return float(np.count_nonzero(a == b)) / PERMUTATIONS


@dataclass(frozen=True)
class Copies:
    """The result: copy path -> its original's path."""

    original_of: dict[str, str]

    def copies_of(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for copy, original in sorted(self.original_of.items()):
            out.setdefault(original, []).append(copy)
        return out


def find_copies(files: list[FileSketch], threshold: float = THRESHOLD) -> Copies:
    """Group near-identical files and map each copy to its group's original."""
    by_path = {f.path: f for f in files}
    parent = {f.path: f.path for f in files}

    def root(p: str) -> str:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    # Only files that share a stem can be copies; of those, the ones that share a band land in one bucket.
    by_stem: dict[str, list[FileSketch]] = {}
    for f in files:
        by_stem.setdefault(_stem(f.path), []).append(f)
    buckets: dict[tuple[int, bytes, str], list[str]] = {}
    for f in sorted((f for same in by_stem.values() if len(same) > 1 for f in same), key=lambda f: f.path):
        raw, stem = f.values.tobytes(), _stem(f.path)
        for band in range(BANDS):
            buckets.setdefault((band, raw[band * ROWS * 4 : (band + 1) * ROWS * 4], stem), []).append(f.path)
    checked: set[tuple[str, str]] = set()
    for members in buckets.values():
        for i, a in enumerate(members):
            for b in members[i + 1 : i + 1 + BUCKET_PAIRS]:  # a bucket of many alike files: its neighbours
                if (a, b) in checked or root(a) == root(b) or not may_copy(a, b):
                    continue
                checked.add((a, b))
                if similarity(by_path[a].values, by_path[b].values) >= threshold:
                    parent[root(b)] = root(a)
    groups: dict[str, list[FileSketch]] = {}
    for f in files:
        groups.setdefault(root(f.path), []).append(f)
    original_of: dict[str, str] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        original = choose_original(members)
        for m in members:
            if m.path != original.path and may_copy(m.path, original.path) and (
                    similarity(m.values, original.values) >= threshold):
                original_of[m.path] = original.path
    return Copies(original_of)


@dataclass(frozen=True)
class MarkReport:
    """What the copies phase found: copies, files marked generated or vendored, triples changed."""

    copies: int
    marked: int
    changed: int


def mark_copies(store: GraphStore, listed: Mapping[str, NamedNode], marks: Mapping[str, Mapping[str, bool]],
                touched: Collection[str] | None = None) -> MarkReport:
    """Bring the graph's ``uko:copyOf`` / ``uko:generated`` / ``uko:vendored`` triples in line with the
    files it holds now (``listed``: path -> file IRI, the run's listing) and their ``.gitattributes``
    ``marks`` (path -> mark -> value): the sketches of the files that share a stem with another (only
    those can be copies) read, groups found again, and only the difference written (a steady state
    writes nothing). Each triple sits in its file's tier graph, as the file's other triples do.

    ``touched``: the paths an incremental run wrote or removed (None: look at every file). Copies are
    found among files of one stem only, so only the groups of those files' stems can change: the other
    stems' sketches are not read (a standard library's ~450). The marks are looked at for every file
    (a ``.gitattributes`` edit is no file the run indexes)."""
    stems = Counter(_stem(path) for path in listed)
    scope = None if touched is None else {_stem(p) for p in touched}
    wanted = sorted(p for p in listed if stems[_stem(p)] > 1 and (scope is None or _stem(p) in scope)
                    or any((marks.get(p) or {}).values()))
    rows = store.select(catalog.text("copies/file-sketches"), {"file": [listed[p] for p in wanted]}) if wanted else []
    iri_of: dict[str, NamedNode] = {}
    graph_of: dict[str, NamedNode] = {}
    files: list[FileSketch] = []
    for r in rows:
        path = r["path"].value
        iri_of[path], graph_of[path] = r["file"], r["g"]  # type: ignore[assignment]
        if "sketch" in r and r["sketch"] is not None and stems[_stem(path)] > 1:
            found = parse_sketch(path, r["sketch"].value, marks.get(path))
            if found is not None:
                files.append(found)
    copies = find_copies(files)
    want: set[tuple[str, str, str]] = set()
    for copy, original in copies.original_of.items():
        want.add((iri_of[copy].value, UKO.copyOf.value, iri_of[original].value))
    marked = 0
    for path, values in marks.items():
        if path not in iri_of:
            continue
        for mark in ("generated", "vendored"):
            if values.get(mark):
                want.add((iri_of[path].value, UKO[mark].value, "true"))
        marked += any(values.values())
    have: dict[tuple[str, str, str], tuple[Term, Term, Term]] = {}
    outside = 0  # copies of stems out of scope: as they are
    for r in store.select(catalog.text("copies/marks")):
        o = r["o"]
        key = (r["file"].value, r["p"].value, o.value if isinstance(o, NamedNode) else o.value.lower())
        path = r["path"].value if r.get("path") is not None else None
        if scope is not None and key[1] == UKO.copyOf.value and path in listed and _stem(path) not in scope:
            outside += 1
            continue
        have[key] = (r["file"], r["p"], o)
    gone = sorted(k for k in have if k not in want)
    new = sorted(k for k in want if k not in have)
    if gone or new:
        by_iri = {iri.value: path for path, iri in iri_of.items()}
        quads = [Quad(NamedNode(s), NamedNode(p), NamedNode(o) if p == UKO.copyOf.value else Literal("true", datatype=XSD.boolean),
                      graph_of[by_iri[s]]) for s, p, o in new]
        deletes = [(catalog.text("copies/delete-marks.ru"), {"file p o": [have[k] for k in gone]})] if gone else []
        store.replace(deletes, quads)  # type: ignore[arg-type]
    return MarkReport(copies=len(copies.original_of) + outside, marked=marked, changed=len(gone) + len(new))
