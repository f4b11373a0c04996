"""Retrieval evaluation: run every strategy on a JSONL fixture set and score the assembled context.

Each line: ``{"query": "...", "gold": ["path/to/file.py", "pkg.mod.func", "file.py::Class.method"],
"focus": [...]?}``. A packed fragment is relevant when its path equals a gold path, or its entity's
qualified name equals (or ends with ``.``+) a gold name. The ranking is the packed order (what the
agent reads), counted in distinct files when every gold entry is a path (a file shown twice does
not push the next file down) and in distinct entities otherwise. Metrics per strategy:
Recall@1/5/10, MRR (no cut-off), nDCG@10 (each gold counted once, so at most 1), P@5, token
efficiency (tokens of relevant fragments / used tokens), latency p50/p95, and for ``path::name``
gold the same recall and MRR by line overlap (``overlap_*``: a fragment counts for a symbol when it
shares a line with it, the rule the dev set applies to line-range baselines).

Every run also scores a baseline on the same index: ``bm25-windows``, BM25 over 40-line windows
(stride 20) of every indexed file, files ranked by their best window, ten files (the dev set's
``bm25-chunks`` with acms's tokenizer). It returns line ranges, not entities, so it is scored by
line overlap for name gold (as the dev set scores it); ``ratio`` is each strategy's figure over the
baseline's.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pyoxigraph import Literal

from acms.api import Index
from acms.assembly.model import Candidate, Packed
from acms.assembly.protocol import parse_request
from acms.errors import BudgetTooSmall, UsageError
from acms.ingest.walker import language_for
from acms.retrieval.search import Searcher
from acms.sparql import catalog
from acms.tokens import count

T = TypeVar("T")


CUTS = (1, 5, 10)
BASELINE = "bm25-windows"
BASELINE_FILES = 10
RATIO_KEYS = ("recall@1", "recall@5", "recall@10", "mrr")


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
    overlap_recall: dict[int, list[float]] = field(default_factory=lambda: {1: [], 5: [], 10: []})
    overlap_rr: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        mean = lambda xs: round(statistics.fmean(xs), 4) if xs else 0.0  # noqa: E731
        lat = sorted(self.latency_ms)
        p95 = lat[min(len(lat) - 1, int(math.ceil(0.95 * len(lat))) - 1)] if lat else 0.0
        return {
            "recall@1": mean(self.recall[1]), "recall@5": mean(self.recall[5]), "recall@10": mean(self.recall[10]),
            "mrr": mean(self.rr), "ndcg@10": mean(self.ndcg), "p@5": mean(self.p5),
            "token_efficiency": mean(self.efficiency),
            "latency_p50_ms": round(statistics.median(lat), 1) if lat else 0.0, "latency_p95_ms": round(p95, 1),
        } | ({f"overlap_recall@{k}": mean(self.overlap_recall[k]) for k in CUTS}
             | {"overlap_mrr": mean(self.overlap_rr)} if self.overlap_rr else {})


def read_cases(path: Path, parse: Callable[[int, dict[str, Any]], T], expected: str) -> list[T]:
    """The cases of a JSON-lines fixture (blank lines and ``#`` comments skipped), each made by ``parse``
    from its line's object; a line that does not parse is a usage error naming it and ``expected``."""
    if not path.is_file():
        raise UsageError(f"no such fixture file: {path}")
    cases = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            cases.append(parse(n, json.loads(line)))
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"{path}:{n}: expected {expected} ({exc!r})") from None
    if not cases:
        raise UsageError(f"{path} holds no cases")
    return cases


def load_cases(path: Path) -> list[Case]:
    return read_cases(path, lambda _, obj: Case(str(obj["query"]), tuple(obj["gold"]), tuple(obj.get("focus", ()))),
                      '{"query": ..., "gold": [...]}')


def is_symbol(gold: str) -> bool:
    return "::" in gold


def is_path(gold: str, files: Collection[str] = ()) -> bool:
    """A gold entry naming a file: one of the index's ``files``, or with a folder or a known file
    extension (``setup.py``, not ``pkg.mod.func``), and not ``path::name``."""
    return not is_symbol(gold) and (gold in files or "/" in gold or language_for(gold) != "text")


def matches(item: Packed, gold: str) -> bool:
    c = item.candidate
    if is_symbol(gold):
        path, _, qual = gold.partition("::")
        return c.path == path and (c.name == qual or c.name.endswith("." + qual))
    return c.path == gold or c.name == gold or c.name.endswith("." + gold)


def units(items: list[Packed], case: Case, files: Collection[str] = ()) -> list[list[Packed]]:
    """What one rank counts: distinct files for a case whose gold are all paths (so a file shown twice
    does not push the next file down), else distinct entities; each unit keeps its items in order."""
    key = (lambda i: i.candidate.path) if all(is_path(g, files) for g in case.gold) else (
        lambda i: (i.candidate.path, i.candidate.entity))
    grouped: dict[object, list[Packed]] = {}
    for item in items:
        grouped.setdefault(key(item), []).append(item)
    return list(grouped.values())


def gold_ranks(ranked: list[list[Packed]], gold: tuple[str, ...], hit: Callable[[Packed, str], bool]) -> dict[str, int]:
    found: dict[str, int] = {}
    for rank, unit in enumerate(ranked, 1):
        for g in gold:
            if g not in found and any(hit(i, g) for i in unit):
                found[g] = rank
    return found


def _add_ranks(found: dict[str, int], n: int, recall: dict[int, list[float]], rr: list[float]) -> None:
    for k in CUTS:
        recall[k].append(sum(1 for r in found.values() if r <= k) / n)
    first = min(found.values(), default=None)
    rr.append(1.0 / first if first else 0.0)


def overlap_matcher(spans: dict[str, tuple[str, int, int]], files: Collection[str] = ()) -> Callable[[Packed, str], bool]:
    """Path gold by path; name and ``path::name`` gold by sharing a line with the entity's span."""
    def hit(item: Packed, g: str) -> bool:
        if is_path(g, files):
            return item.candidate.path == g
        span = spans.get(g)
        return span is not None and item.candidate.path == span[0] and (
            item.candidate.start_line <= span[2] and item.end_line >= span[1])
    return hit


def score_case(items: list[Packed], case: Case, used_tokens: int, s: StrategyScore,
               spans: dict[str, tuple[str, int, int]] | None = None,
               match: Callable[[Packed, str], bool] = matches, files: Collection[str] = ()) -> None:
    """Score one packed context. ``spans``: gold symbol → (path, start, end) in the index, for the
    line-overlap rule (an item counts for a symbol when it is in its file and shares a line).
    ``match``: the relevance rule (by path and entity name unless told otherwise); ``files``: the
    index's files, so that a gold ``requirements.txt`` counts as a path."""
    ranked = units(items, case, files)
    found = gold_ranks(ranked, case.gold, match)
    n = len(case.gold)
    _add_ranks(found, n, s.recall, s.rr)
    rank_of_unit = {r for r in found.values()}
    relevant_flags = [i + 1 in rank_of_unit for i in range(len(ranked))]
    dcg = sum(1.0 / math.log2(i + 2) for i, rel in enumerate(relevant_flags[:10]) if rel)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(n, 10)))
    s.ndcg.append(dcg / idcg if idcg else 0.0)
    s.p5.append(sum(relevant_flags[:5]) / 5)
    relevant_items = {id(i) for unit in ranked for i in unit if any(match(i, g) for g in case.gold)}
    useful = sum(count(it.text) for it in items if id(it) in relevant_items)
    s.efficiency.append(useful / used_tokens if used_tokens else 0.0)
    symbols = [g for g in case.gold if not is_path(g, files)]  # names and path::name: by their spans
    if spans is not None and symbols:
        per_item = [[i] for i in items]
        _add_ranks(gold_ranks(per_item, tuple(symbols), overlap_matcher(spans)), len(symbols),
                   s.overlap_recall, s.overlap_rr)


def symbol_spans(searcher: Searcher, cases: list[Case]) -> dict[str, tuple[str, int, int]]:
    """Line spans of the gold symbols (``path::Qualified.name``) and gold names (``pkg.mod.func``) in
    the current index; a name several entities end with takes the shortest qualified name."""
    out: dict[str, tuple[str, int, int]] = {}
    files = set(searcher.caches.ranking().files)
    names = sorted({g for c in cases for g in c.gold if not is_symbol(g) and not is_path(g, files)})
    if names:
        rows = searcher.store.select(catalog.text("evaluation/named-spans"),
                                     {"name": [Literal(n) for n in sorted({g.rsplit(".", 1)[-1] for g in names})]})
        for g in names:
            hits = [r for r in rows if r["qn"].value == g or r["qn"].value.endswith("." + g)]
            if hits:
                r = min(hits, key=lambda r: (len(r["qn"].value), r["qn"].value))
                out[g] = (r["path"].value, int(r["start"].value), int(r["end"].value))
    by_path: dict[str, list[str]] = {}
    for g in {g for c in cases for g in c.gold if is_symbol(g)}:
        by_path.setdefault(g.partition("::")[0], []).append(g)
    for path, golds in sorted(by_path.items()):
        rows = searcher.store.select(catalog.text("evaluation/symbol-spans"), {"path": Literal(path)})
        for g in golds:
            qual = g.partition("::")[2]
            hits = [r for r in rows if r["qn"].value == qual or r["qn"].value.endswith("." + qual)]
            if hits:
                r = min(hits, key=lambda r: len(r["qn"].value))
                out[g] = (path, int(r["start"].value), int(r["end"].value))
    return out


def _request(case: Case, i: int, budget: int, strategy: str) -> dict[str, Any]:
    data: dict[str, Any] = {"version": "v0", "id": f"00000000-0000-4000-8000-{i:012d}", "intent": case.query,
                            "request_id": f"eval-{i}", "budgets": {"tokens_max": budget, "time_ms": 10000},
                            "strategy": strategy}
    if case.focus:
        data["focus"] = list(case.focus)
    return data


def baseline_items(searcher: Searcher, query: str) -> list[Packed]:
    """The ``bm25-windows`` baseline's answer: the ten files with the best windows, each with that window."""
    index = searcher.caches.ranking()
    scores = index.windows.scores(query)
    out: list[Packed] = []
    seen: set[int] = set()
    for w in sorted(range(len(scores)), key=lambda w: (-float(scores[w]), w)):
        if scores[w] <= 0 or len(out) >= BASELINE_FILES:
            break
        f = int(index.window_file[w])
        if f in seen:
            continue
        seen.add(f)
        start, end = (int(x) for x in index.window_lines[w])
        path = index.files[f]
        c = Candidate(fragment=f"{path}#{start}", entity=path, name=path, kind="Window", lod="micro", text="",
                      path=path, start_line=start, end_line=end, score=float(scores[w]), strategy=BASELINE, reason="")
        out.append(Packed(c, "", end, False, 0))
    return out


@dataclass
class Evaluation:
    strategies: dict[str, dict[str, float]]
    baseline: dict[str, float]

    def ratio(self) -> dict[str, dict[str, float | None]]:
        return {name: {k: (round(row[k] / self.baseline[k], 3) if self.baseline.get(k) else None) for k in RATIO_KEYS}
                for name, row in self.strategies.items()}

    def as_json(self) -> dict[str, Any]:
        return {"strategies": self.strategies, "baseline": {BASELINE: self.baseline}, "ratio": self.ratio()}


def evaluate(cases: list[Case], index: Index, strategies: list[str], budget: int) -> Evaluation:
    """Every strategy through ``index.render`` (the path every client takes), then the baseline."""
    searcher = index.searcher
    spans = symbol_spans(searcher, cases)
    files = set(searcher.caches.ranking().files)
    out: dict[str, dict[str, float]] = {}
    for name in strategies:
        s = StrategyScore(name)
        for i, case in enumerate(cases):
            t = time.perf_counter()
            try:
                result = index.render(parse_request(_request(case, i, budget, name)))
                items, used = result.assembled.items, result.assembled.used_tokens
            except BudgetTooSmall:
                items, used = [], 0
            s.latency_ms.append(1000 * (time.perf_counter() - t))
            score_case(items, case, used, s, spans, files=files)
        out[name] = s.summary()
    base = StrategyScore(BASELINE)
    for case in cases:
        t = time.perf_counter()
        items = baseline_items(searcher, case.query)
        base.latency_ms.append(1000 * (time.perf_counter() - t))
        score_case(items, case, 0, base, spans, match=overlap_matcher(spans, files), files=files)
    return Evaluation(out, base.summary())
