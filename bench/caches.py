"""Rebuild the keyword and ranking caches of an existing index and print what each step cost; with
``--against DIR``, check that every file built is byte for byte the one in DIR (a copy of the same
index's ``.acms/cache`` made by another version of acms). With ``--incremental FILE``, edit FILE (a path
in PROJECT: a function is added at its end), index the project again with the run told what changed
(``CacheDelta``), and print what updating the caches cost beside a full build of the same graph state,
which must answer as the update does (every score, window, place and nearest row; the files differ: an
update splices the postings and appends to the vector matrix). It writes to PROJECT: run it on a copy.

    python bench/caches.py PROJECT [--against DIR]
    python bench/caches.py PROJECT --incremental FILE [--index DIR]

Steps are ``DerivedCaches``' progress steps (``BUILD_STEPS``); RSS is this process's, sampled every
20 ms (the peak of each step, and the whole build's peak above the RSS before it). Run it on an index
``bench/ingest.py --keep DIR`` left (``DIR/x1``, ``DIR/x2``, ...) to see how the caches' build grows
with the project without indexing it again. The machine is shared: the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from acms.api import Index
from acms.config import load_settings
from acms.index.keyword import KeywordIndex
from acms.index.vectors import VectorMatrix
from acms.ranking.index import RankingIndex
from acms.retrieval import caches as caches_module
from acms.retrieval import segment as segment_module
from acms.retrieval.caches import CacheDelta, DerivedCaches
from acms.retrieval.embedding_store import active_model
from acms.service.indexing import IndexRun
from acms.service.indexing.after_files import AfterFiles
from acms.sparql import catalog
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore
from acms.store.protocol import GraphStore


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def differences(built: Path, reference: Path) -> list[str]:
    """Files whose bytes differ, or that only one side has (paths relative to the cache directories);
    the name of a build's token numbering is its own (random), so it is left out."""
    def files(d: Path) -> dict[str, Path]:
        return {str(p.relative_to(d)): p for p in sorted(d.rglob("*"))
                if p.is_file() and p.name not in ("numbers.npy", "numbering.txt")}

    a, b = files(built), files(reference)
    out = [f"only built: {k}" for k in sorted(a.keys() - b.keys())]
    out += [f"only in reference: {k}" for k in sorted(b.keys() - a.keys())]
    out += [f"differs: {k}" for k in sorted(a.keys() & b.keys()) if a[k].read_bytes() != b[k].read_bytes()]
    return out


def _keyword_answers(got: KeywordIndex, want: KeywordIndex, label: str) -> list[str]:
    """Where two keyword indexes answer differently: their documents, or the scores (bit for bit) of a
    sample of their terms alone and three at a time."""
    if got.ids != want.ids:
        return [f"{label}: other documents"]
    terms = want.terms()  # either layout: a full index's vocabulary, or a base and a delta's live terms
    queries = terms[::97] + [" ".join(terms[i : i + 3]) for i in range(0, len(terms), 389)]
    return [f"{label}: other scores for {q!r}" for q in queries
            if got.scores(q).tobytes() != want.scores(q).tobytes()][:5]


def answer_differences(built: IndexLayout, reference: IndexLayout) -> list[str]:
    """Where an updated cache answers otherwise than a full build of the same graph state: an update
    splices the postings (term numbering aside) and appends to the vector matrix, so its files are not
    the full build's byte for byte, but every score, window, place and nearest row must be."""
    out = _keyword_answers(KeywordIndex.load(built.cache_dir("keyword")),
                           KeywordIndex.load(reference.cache_dir("keyword")), "keyword")
    got, want = RankingIndex.load(built.cache_dir("ranking")), RankingIndex.load(reference.cache_dir("ranking"))
    if (got.files, got.dense) != (want.files, want.dense):
        out.append("ranking: other files")
    for name in ("window_file", "window_lines", "frag_ids", "locations"):
        if not np.array_equal(getattr(got, name), getattr(want, name)):
            out.append(f"ranking: other {name}")
    for name in ("windows", "paths", "names"):
        out += _keyword_answers(getattr(got, name), getattr(want, name), f"ranking {name}")
    vectors, full = VectorMatrix.load(built.cache_dir("vectors")), VectorMatrix.load(reference.cache_dir("vectors"))
    if (vectors is None) != (full is None):
        out.append("vectors: on one side only")
    elif vectors is not None and full is not None:
        rows = np.asarray(full.matrix)
        if {f: vectors.row(i).tobytes() for i, f in vectors.live()} != {f: full.row(i).tobytes() for i, f in full.live()}:
            out.append("vectors: other rows")
        out += [f"vectors: other nearest rows to row {i}" for i in range(0, len(rows), max(1, len(rows) // 50))
                if vectors.top(rows[i], 20) != full.top(rows[i], 20)][:5]
    return out


def build(project: Path) -> tuple[list[tuple[int, float, float]], float, float, float]:
    """(step, seconds, peak MB) per step; the whole build's seconds, its peak MB, the RSS before it."""
    with Index.open(project, embed_on_index=False) as idx:
        for name in ("keyword", "ranking"):
            shutil.rmtree(idx.layout.cache_dir(name), ignore_errors=True)
        peak, stop = [0.0], threading.Event()

        def watch() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], rss_mb())
                time.sleep(0.02)

        before = rss_mb()
        steps: list[tuple[int, float, float]] = []
        whole_peak = [before]
        start = last = time.perf_counter()

        def step(n: int) -> None:
            nonlocal last
            now = time.perf_counter()
            top = max(peak[0], rss_mb())
            steps.append((n, now - last, top))
            whole_peak[0] = max(whole_peak[0], top)
            last, peak[0] = now, rss_mb()

        thread = threading.Thread(target=watch, daemon=True)
        thread.start()
        caches = DerivedCaches(idx.store, idx.layout, progress=step)
        caches.keyword()
        caches.ranking()
        stop.set()
        thread.join()
        return steps, time.perf_counter() - start, whole_peak[0], before


# What an update's seconds are split into: (label, owner, attribute) wrapped with a timer
_PARTS = [
    ("segment loaded", DerivedCaches, "_saved_segment"),
    ("fragments to read again", DerivedCaches, "_fragments_again"),
    ("places of the rows read", DerivedCaches, "_bound_places"),
    ("hot tier, nesting moved", DerivedCaches, "_nesting_moved"),
    ("merged", caches_module, "merged"),
    ("compacted", segment_module.Segment, "compacted"),
    ("segment saved", segment_module.Segment, "save"),
    ("keyword built", KeywordIndex, "from_chunks"),
    ("keyword spliced", DerivedCaches, "_spliced_keyword"),
    ("ranking places", segment_module.Segment, "places"),
    ("windows", caches_module, "file_windows"),
    ("ranking built", RankingIndex, "from_windows"),
    ("ranking spliced", DerivedCaches, "_spliced_ranking"),
    ("keyword saved", KeywordIndex, "save"),
    ("ranking saved", RankingIndex, "save"),
    ("vectors read again", DerivedCaches, "_updated_vectors"),
]


@contextmanager
def timing_parts(seconds: dict[str, float]) -> Iterator[None]:
    """Add each wrapped call's seconds to ``seconds[label]`` (an outer call only: ``from_chunks`` inside
    ``from_windows`` counts once, in the outer)."""
    depth = [0]
    saved: list[tuple[Any, str, Any]] = []

    def wrap(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            depth[0] += 1
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    seconds[label] = seconds.get(label, 0.0) + time.perf_counter() - start
        return timed

    for label, owner, name in _PARTS:
        original = owner.__dict__[name]
        saved.append((owner, name, original))
        fn = original.__func__ if isinstance(original, classmethod) else original
        wrapped = wrap(label, fn)
        setattr(owner, name, classmethod(wrapped) if isinstance(original, classmethod) else wrapped)
    try:
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def stored_files(store: GraphStore) -> dict[str, str]:
    """File IRI -> content hash of every current file."""
    return {r["file"].value: r["hash"].value for r in store.select(catalog.text("ingest/stored-files"))}


class _Steps:
    """A run's progress, with the caches phase's steps timed."""

    def __init__(self) -> None:
        self.phase, self.last, self.steps = "", 0.0, []

    def start(self, phase: str, total: int | None = None) -> None:
        self.phase, self.last = phase, time.perf_counter()

    def update(self, done: int, total: int | None = None) -> None:
        if self.phase == "caches":
            now = time.perf_counter()
            self.steps.append((done, now - self.last))
            self.last = now

    def finish(self, phase: str) -> None:
        pass


def incremental(project: Path, edited: str, index: Path | None = None) -> None:
    """Edit ``edited``, index again with the run told what changed, then build the same state in full.
    ``index``: the index directory when it is not PROJECT/.acms (``bench/stdlib_index.py``'s)."""
    layout = IndexLayout(index or project / ".acms")
    store = OxigraphStore(layout.graph)
    try:
        before = DerivedCaches(store, layout)
        for name in ("keyword", "ranking"):  # a segment for the state before: built in full if missing
            if not (layout.cache_dir("tokens") / "manifest.json").is_file():
                shutil.rmtree(layout.cache_dir(name), ignore_errors=True)
        before.keyword(), before.ranking()
        model = active_model(store)
        if model is not None:
            before.vectors(model.model_id)
        keys, hashes = (before.text_key, before.state_key), stored_files(store)
        path = project / edited
        stamp = time.strftime("%H%M%S")
        with path.open("a", encoding="utf-8") as f:
            f.write(f"\n\ndef acms_bench_edit_{stamp}(value):\n    \"\"\"Added by bench/caches.py.\"\"\"\n    return value\n")
        parts: dict[str, float] = {}

        class Phases(AfterFiles):
            def warm_caches(self, layout: IndexLayout) -> None:
                after = stored_files(self.run.store)
                changed = frozenset(f for f in hashes.keys() | after.keys() if hashes.get(f) != after.get(f))
                self.run.cache_delta = CacheDelta(*keys, changed)
                with timing_parts(parts):
                    super().warm_caches(layout)

            def warm_vectors(self, layout: IndexLayout) -> None:
                with timing_parts(parts):
                    super().warm_vectors(layout)

        class Run(IndexRun):
            def _after_files(self) -> None:
                Phases(self).write()

        steps = _Steps()
        report = Run(project, store, load_settings(project), layout, progress=steps).run()
        timings = report.timings
        full_layout = IndexLayout(Path(tempfile.mkdtemp(prefix="acms-caches-full-")))
        full_parts: dict[str, float] = {}
        full_steps: list[tuple[int, float]] = []
        last = [time.perf_counter()]

        def step(n: int) -> None:
            now = time.perf_counter()
            full_steps.append((n, now - last[0]))
            last[0] = now

        full = DerivedCaches(store, full_layout, progress=step)
        start = time.perf_counter()
        with timing_parts(full_parts):
            full.keyword(), full.ranking()
        full_text = time.perf_counter() - start
        start = time.perf_counter()
        model = active_model(store)
        if model is not None:
            full.vectors(model.model_id)
        full_vectors = time.perf_counter() - start
    finally:
        store.close()
    tokens = layout.cache_dir("tokens")
    size = sum(p.stat().st_size for p in tokens.rglob("*") if p.is_file())
    print(f"{report.files_indexed} file(s) indexed ({edited}), load {os.getloadavg()[0]:.2f}")
    print()
    print("| step | update s | full build s |")
    print("| --- | --- | --- |")
    for (n, s), (_, f) in zip(steps.steps, full_steps):
        print(f"| {n} | {s:.2f} | {f:.2f} |")
    print(f"| **caches phase** | **{timings.get('caches', 0):.2f}** | **{full_text:.2f}** |")
    print(f"| **vectors phase** | **{timings.get('vectors', 0):.2f}** | **{full_vectors:.2f}** |")
    print()
    print("| part | update s | full build s |")
    print("| --- | --- | --- |")
    for label, _, _ in _PARTS:
        if label in parts or label in full_parts:
            print(f"| {label} | {parts.get(label, 0):.2f} | {full_parts.get(label, 0):.2f} |")
    print()
    print(f"segment on disk: {size / 2**20:.1f} MB ({tokens})")
    found = answer_differences(layout, full_layout)
    shutil.rmtree(full_layout.root, ignore_errors=True)
    print("answers as the full build" if not found else "\n".join(found))
    if found:
        sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--against", type=Path, help="a cache directory to compare the built files with")
    parser.add_argument("--incremental", metavar="FILE", help="edit FILE (in PROJECT), index again, update the caches")
    parser.add_argument("--index", type=Path, help="with --incremental: the index directory (default PROJECT/.acms)")
    args = parser.parse_args()
    if args.incremental:
        incremental(args.project.resolve(), args.incremental, args.index and args.index.resolve())
        return
    load = os.getloadavg()[0]
    steps, seconds, peak, before = build(args.project)
    print(f"caches of {args.project} (load {load:.2f} before, {os.getloadavg()[0]:.2f} after)")
    print()
    print("| step | s | peak RSS MB |")
    print("| --- | --- | --- |")
    for n, s, top in steps:
        print(f"| {n} | {s:.1f} | {top:,.0f} |")
    print(f"| **whole** | **{seconds:.1f}** | **{peak:,.0f}** (+{peak - before:,.0f} over {before:,.0f}) |")
    if args.against:
        cache = args.project / ".acms" / "cache"
        found = [d for name in ("keyword", "ranking") for d in differences(cache / name, args.against / name)]
        print()
        print("identical to the reference" if not found else "\n".join(found))
        if found:
            sys.exit(1)


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "caches")  # --write-docs: this run's tables onto docs/benchmarks.md
