"""Retrieval evaluation: run every strategy on a JSONL fixture set and score the assembled context.

Each line: ``{"query": "...", "gold": ["path/to/file.py", "pkg.mod.func", "file.py::Class.method"],
"focus": [...]?}``. A packed fragment is relevant when its path equals a gold path, or its entity's
qualified name equals (or ends with ``.``+) a gold name. The ranking is the packed order (what the
agent reads). Metrics per strategy: Recall@1/5/10, MRR, nDCG@10, P@5, token efficiency (tokens of
relevant fragments / used tokens) and latency p50/p95.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acms.assembly.assemble import assemble
from acms.assembly.budget import BudgetTooSmall
from acms.assembly.model import Packed
from acms.assembly.protocol import parse_request
from acms.errors import UsageError
from acms.retrieval.search import Searcher
from acms.strategies.registry import StrategyRegistry
from acms.tokens import count


@dataclass(frozen=True)
class Case:
    query: str
    gold: tuple[str, ...]
    focus: tuple[str, ...] = ()


@dataclass
class StrategyScore:
    strategy: str
    recall: dict[int, list[float]] = field(default_factory=lambda: {1: [], 5: [], 10: []})
    rr: list[float] = field(default_factory=list)
    ndcg: list[float] = field(default_factory=list)
    p5: list[float] = field(default_factory=list)
    efficiency: list[float] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        mean = lambda xs: round(statistics.fmean(xs), 4) if xs else 0.0  # noqa: E731
        lat = sorted(self.latency_ms)
        p95 = lat[min(len(lat) - 1, int(math.ceil(0.95 * len(lat))) - 1)] if lat else 0.0
        return {
            "recall@1": mean(self.recall[1]), "recall@5": mean(self.recall[5]), "recall@10": mean(self.recall[10]),
            "mrr": mean(self.rr), "ndcg@10": mean(self.ndcg), "p@5": mean(self.p5),
            "token_efficiency": mean(self.efficiency),
            "latency_p50_ms": round(statistics.median(lat), 1) if lat else 0.0, "latency_p95_ms": round(p95, 1),
        }


def load_cases(path: Path) -> list[Case]:
    if not path.is_file():
        raise UsageError(f"no such fixture file: {path}")
    cases = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            obj: dict[str, Any] = json.loads(line)
            cases.append(Case(str(obj["query"]), tuple(obj["gold"]), tuple(obj.get("focus", ()))))
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"{path}:{n}: expected {{\"query\": ..., \"gold\": [...]}} ({exc})") from None
    if not cases:
        raise UsageError(f"{path} holds no cases")
    return cases


def matches(item: Packed, gold: str) -> bool:
    c = item.candidate
    if "::" in gold:
        path, _, qual = gold.partition("::")
        return c.path == path and (c.name == qual or c.name.endswith("." + qual))
    return c.path == gold or c.name == gold or c.name.endswith("." + gold)


def score_case(items: list[Packed], case: Case, used_tokens: int, s: StrategyScore) -> None:
    found_at: dict[str, int] = {}
    relevant_flags = []
    for rank, item in enumerate(items, 1):
        hit = [g for g in case.gold if matches(item, g)]
        relevant_flags.append(bool(hit))
        for g in hit:
            found_at.setdefault(g, rank)
    n = len(case.gold)
    for k in (1, 5, 10):
        s.recall[k].append(sum(1 for r in found_at.values() if r <= k) / n)
    first = min(found_at.values(), default=None)
    s.rr.append(1.0 / first if first else 0.0)
    dcg = sum(1.0 / math.log2(i + 2) for i, rel in enumerate(relevant_flags[:10]) if rel)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(n, 10)))
    s.ndcg.append(dcg / idcg if idcg else 0.0)
    s.p5.append(sum(relevant_flags[:5]) / 5)
    useful = sum(count(it.text) for it, rel in zip(items, relevant_flags) if rel)
    s.efficiency.append(useful / used_tokens if used_tokens else 0.0)


def evaluate(cases: list[Case], searcher: Searcher, registry: StrategyRegistry, strategies: list[str],
             budget: int) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name in strategies:
        s = StrategyScore(name)
        for i, case in enumerate(cases):
            data: dict[str, Any] = {"version": "v0", "id": f"00000000-0000-4000-8000-{i:012d}", "intent": case.query,
                                    "request_id": f"eval-{i}", "budgets": {"tokens_max": budget, "time_ms": 10000},
                                    "strategy": name}
            if case.focus:
                data["focus"] = list(case.focus)
            t = time.perf_counter()
            try:
                result = assemble(parse_request(data), searcher, registry)
                items, used = result.assembled.items, result.assembled.used_tokens
            except BudgetTooSmall:
                items, used = [], 0
            s.latency_ms.append(1000 * (time.perf_counter() - t))
            score_case(items, case, used, s)
        out[name] = s.summary()
    return out
