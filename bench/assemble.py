"""Assembly latency per strategy at budgets 1k/4k/8k/16k on the standard-library index.

The same run's bare keyword search (the BM25 index queried directly) is the baseline.

    python bench/assemble.py [--work DIR] [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from stdlib_index import DEFAULT_WORK, QUERIES, build, pct

from acms.service.assembly import assemble
from acms.assembly.protocol import parse_request
from acms.config import Settings
from acms.retrieval.search import Searcher
from acms.store.oxigraph import OxigraphStore
from acms.strategies.registry import StrategyRegistry
from acms.tokens import count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    _, layout = build(args.work, quiet=True)
    store = OxigraphStore(layout.graph)
    searcher = Searcher(store, layout, Settings())
    registry = StrategyRegistry.default()
    kw = searcher.caches.keyword()
    base = []
    for q in QUERIES:
        t = time.perf_counter()
        kw.top(q, 50)
        base.append(1000 * (time.perf_counter() - t))
    print(f"acms assembly benchmark — {len(QUERIES)} queries x {args.rounds}; baseline bare BM25 top-50 "
          f"p50 {statistics.median(base):.1f} ms, p95 {pct(base, 0.95):.1f} ms")
    print(f"{'strategy':<24} | {'budget':>6} | {'p50 ms':>7} | {'p95 ms':>7} | {'p95 / baseline':>14} | max used/budget")
    print(f"{'-' * 24}-|-{'-' * 6}-|-{'-' * 7}-|-{'-' * 7}-|-{'-' * 14}-|-{'-' * 15}")
    for name in [*registry.names(), "auto"]:
        for budget in (1000, 4000, 8000, 16000):
            lat, fill = [], 0.0
            for _ in range(args.rounds):
                for i, q in enumerate(QUERIES):
                    req = parse_request({"version": "v0", "id": f"00000000-0000-4000-8000-{i:012d}", "intent": q,
                                         "request_id": "b", "budgets": {"tokens_max": budget, "time_ms": 10000},
                                         "strategy": name})
                    t = time.perf_counter()
                    result = assemble(req, searcher, registry)
                    lat.append(1000 * (time.perf_counter() - t))
                    used = count(result.assembled.rendered)
                    assert used <= budget
                    fill = max(fill, used / budget)
            print(f"{name:<24} | {budget:>6} | {statistics.median(lat):>7.0f} | {pct(lat, 0.95):>7.0f} | "
                  f"{pct(lat, 0.95) / pct(base, 0.95):>13.0f}x | {fill:>15.3f}")
    store.close()


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "assemble")  # --write-docs: this run's tables onto docs/benchmarks.md
