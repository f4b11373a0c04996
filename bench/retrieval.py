"""Keyword, vector and hybrid search on the standard-library index, next to the bare libraries.

Prints build times (postings, vectors), query latency p50/p95 at k=50 per mode through acms (numpy
scoring + the SPARQL describe/rank query with fn: lookups), and in the same run the baselines: the
BM25 index queried directly (bm25s) and numpy brute-force cosine on the same matrix.

    python bench/retrieval.py [--work DIR] [--rounds N]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import time
from pathlib import Path

from stdlib_index import DEFAULT_WORK, QUERIES, build, pct

from acms.config import Settings
from acms.retrieval.caches import DerivedCaches
from acms.retrieval.embedding_store import query_provider
from acms.retrieval.search import Mode, Searcher
from acms.store.oxigraph import OxigraphStore


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    _, layout = build(args.work)
    shutil.rmtree(layout.cache_dir("keyword"), ignore_errors=True)
    shutil.rmtree(layout.cache_dir("vectors"), ignore_errors=True)
    store = OxigraphStore(layout.graph)
    settings = Settings()
    caches = DerivedCaches(store, layout)
    t = time.perf_counter()
    n_docs = len(caches.corpus)
    t_corpus = time.perf_counter() - t
    t = time.perf_counter()
    kw = caches.keyword()
    t_kw = time.perf_counter() - t
    provider = query_provider(store, settings, layout)
    assert provider is not None
    t = time.perf_counter()
    vm = caches.vectors(provider.model_id)
    t_vec = time.perf_counter() - t
    searcher = Searcher(store, layout, settings)
    searcher.caches = caches
    lat: dict[str, list[float]] = {"keyword": [], "vector": [], "hybrid": [], "bm25s direct": [], "numpy cosine": []}
    for _ in range(args.rounds):
        for q in QUERIES:
            for mode in (Mode.KEYWORD, Mode.VECTOR, Mode.HYBRID):
                t = time.perf_counter()
                searcher.search(q, mode, 50)
                lat[mode.value].append(1000 * (time.perf_counter() - t))
            t = time.perf_counter()
            kw.top(q, 50)
            lat["bm25s direct"].append(1000 * (time.perf_counter() - t))
            qv = provider.embed([q])[0]
            t = time.perf_counter()
            vm.top(qv, 50)
            lat["numpy cosine"].append(1000 * (time.perf_counter() - t))
    store.close()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"acms retrieval benchmark — {n_docs:,} searchable fragments, {len(QUERIES)} queries x {args.rounds}, k=50")
    print(f"build: corpus read {t_corpus:.1f}s, keyword postings {t_kw:.1f}s, vector matrix {t_vec:.1f}s; peak RSS {rss:,.0f} MB")
    print(f"{'path':<14} | {'p50 ms':>8} | {'p95 ms':>8} | vs baseline p95")
    print(f"{'-' * 14}-|-{'-' * 8}-|-{'-' * 8}-|-{'-' * 16}")
    base = {"keyword": "bm25s direct", "vector": "numpy cosine", "hybrid": "bm25s direct"}
    for name, xs in lat.items():
        ratio = f"{pct(xs, 0.95) / pct(lat[base[name]], 0.95):.1f}x" if name in base else "baseline"
        print(f"{name:<14} | {statistics.median(xs):>8.1f} | {pct(xs, 0.95):>8.1f} | {ratio}")


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "retrieval")  # --write-docs: this run's tables onto docs/benchmarks.md
