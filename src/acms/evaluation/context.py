"""Needed context: does the assembled context hold what an agent needs to write the change?

A fixture line carries, for one task, the code the change needs (paths relative to the project root,
lines 1-based and inclusive, as the index shows them):

```
{"query": "round the polygon area to a configurable number of digits",
 "edit_sites": [{"file": "src/geometry/polygon.ts", "name": "Polygon.area", "start": 19, "end": 21}],
 "deps":       [{"file": "src/util/numbers.ts", "name": "roundTo", "start": 13, "def_line": 13}],
 "callees":    [{"file": "src/util/numbers.ts", "name": "roundTo", "start": 13, "def_line": 13}],
 "id": "optional", "focus": ["optional; default: the first edit site"]}
```

- **edit sites**: the definitions the change edits;
- **deps**: definitions elsewhere that the change's added lines use;
- **callees**: definitions the edit sites' own code calls or references.

Each task runs in two modes: ``task`` (the query text only) and ``focus`` (also ``focus``, by default
the first edit site as ``file::name``; a task without edit sites and without focus runs as ``task``
in both). A context is the ordered list of the ``path:start-end`` ranges and texts of a JSON reply's
fragments (its budget covers their text, what an agent puts into its prompt).

Metrics, per mode, macro averages over the tasks that have that kind of gold:

| metric | meaning |
| --- | --- |
| ``edit_recall`` | share of the edit sites some range overlaps |
| ``dep_recall`` | share of the deps whose lines ``start .. start+2`` (the header) overlap a range in the same file |
| ``dep_shown`` | share of the deps whose ``def_line`` is in the text shown (every line of a verbatim range; of an outline or a cut fragment only the lines its text reproduces) |
| ``callee_recall`` | share of the callees whose lines ``def_line .. def_line+2`` overlap a range in the same file |
| ``callee_shown`` | as ``dep_shown``, for callees |
| ``complete`` | all edit sites overlapped and at least half of the deps (``dep_recall`` sense); over the tasks with edit sites |
| ``tokens`` | mean tokens of the context (cl100k over each range's text), over all tasks |
| ``budget_used`` | ``tokens`` / budget |

The baseline scored beside every strategy in the same run is ``bm25-dedup``: BM25 over 40-line chunks
(stride 20) of the index's code files (not documents or data; ``Chunks``), taken in rank order while the
budget lasts, where a window pays only for its lines not already in the context (neighbouring windows would
otherwise pay twice for the 20 lines they share); a window that does not fit is skipped and later ones
are tried. In ``focus`` mode the focus edit site's lines are added to its query and come first in its
context, counted against the budget.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from acms.api import Index
from acms.assembly.protocol import parse_request
from acms.errors import BudgetTooSmall
from acms.evaluation.harness import read_cases
from acms.index.tokenize import search_terms
from acms.ingest.walker import language_for
from acms.tokens import count

BASELINE = "bm25-dedup"
MODES = ("task", "focus")
METRICS = ("edit_recall", "dep_recall", "dep_shown", "callee_recall", "callee_shown", "complete", "tokens",
           "budget_used")
CHUNK_LINES, CHUNK_STRIDE = 40, 20
HEADER_LINES = 3  # a dep or callee counts when a range overlaps its first lines (the header, decorators included)
NOT_CODE = frozenset({"markdown", "rst", "text", "json", "yaml", "toml", "html", "css"})


@dataclass(frozen=True)
class Site:
    """One gold definition: its file, name and lines."""

    file: str
    name: str
    start: int
    end: int
    def_line: int


@dataclass(frozen=True)
class ContextCase:
    id: str
    query: str
    edit_sites: tuple[Site, ...]
    deps: tuple[Site, ...]
    callees: tuple[Site, ...]
    focus: tuple[str, ...] = ()

    def focus_for(self, mode: str) -> tuple[str, ...]:
        """The focus of ``mode``: none for ``task``; the given one, else the first edit site, for ``focus``."""
        if mode == "task":
            return ()
        if self.focus:
            return self.focus
        return (f"{self.edit_sites[0].file}::{self.edit_sites[0].name}",) if self.edit_sites else ()


@dataclass(frozen=True)
class Range:
    """A piece of a context: where it is, its text, and the lines of the file its text shows."""

    path: str
    start: int
    end: int
    text: str
    shown: frozenset[int]


def is_context_fixture(path: Path) -> bool:
    """Whether a fixture file holds needed-context gold (its first case has ``edit_sites``)."""
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip() and not line.lstrip().startswith("#"):
                    obj = json.loads(line)
                    return isinstance(obj, dict) and "edit_sites" in obj
    except (OSError, ValueError):
        return False
    return False


def _sites(obj: dict[str, Any], key: str) -> tuple[Site, ...]:
    out = []
    for s in obj.get(key) or []:
        start = int(s["start"])
        end = int(s.get("end", start))
        out.append(Site(str(s["file"]), str(s.get("name", "")), start, end, int(s.get("def_line", start))))
    return tuple(out)


def load_context_cases(path: Path) -> list[ContextCase]:
    def parse(n: int, obj: dict[str, Any]) -> ContextCase:
        return ContextCase(str(obj.get("id", n)), str(obj["query"]), _sites(obj, "edit_sites"),
                           _sites(obj, "deps"), _sites(obj, "callees"), tuple(obj.get("focus", ())))

    return read_cases(path, parse, '{"query": ..., "edit_sites": [{"file", "start", "end"}], "deps": [...], '
                                   '"callees": [...]}')


class Files:
    """The project's files as lines, read once (what a range's text is compared with)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lines: dict[str, list[str]] = {}

    def lines(self, path: str) -> list[str]:
        if path not in self._lines:
            try:
                self._lines[path] = (self.root / path).read_bytes().decode("utf-8", "replace").splitlines()
            except OSError:
                self._lines[path] = []
        return self._lines[path]

    def text(self, path: str, start: int, end: int) -> str:
        return "\n".join(self.lines(path)[start - 1 : end])

    def shown(self, path: str, start: int, end: int, text: str, verbatim: bool) -> frozenset[int]:
        """The lines of ``start..end`` the text shows: all of a verbatim range; of an outline or a cut
        fragment, those whose stripped text it reproduces (or begins)."""
        if verbatim:
            return frozenset(range(start, end + 1))
        lines = self.lines(path)
        shown = [t.strip() for t in text.splitlines() if t.strip()]
        wanted = set(shown)
        return frozenset(i for i in range(start, min(end, len(lines)) + 1)
                         if (s := lines[i - 1].strip()) and (s in wanted or any(t.startswith(s) for t in shown)))


def _overlaps(ranges: Iterable[Range], path: str, lo: int, hi: int) -> bool:
    return any(r.path == path and r.start <= hi and lo <= r.end for r in ranges)


def score(case: ContextCase, ranges: list[Range], budget: int) -> dict[str, float | None]:
    """One context's figures (None where the task has no gold of that kind)."""
    shown: dict[str, set[int]] = defaultdict(set)
    for r in ranges:
        shown[r.path] |= r.shown
    edits = [_overlaps(ranges, e.file, e.start, e.end) for e in case.edit_sites]
    deps = [_overlaps(ranges, d.file, d.start, d.start + HEADER_LINES - 1) for d in case.deps]
    calls = [_overlaps(ranges, c.file, c.def_line, c.def_line + HEADER_LINES - 1) for c in case.callees]
    share = lambda hits: sum(hits) / len(hits) if hits else None  # noqa: E731
    tokens = float(sum(count(r.text) for r in ranges))
    return {
        "edit_recall": share(edits), "dep_recall": share(deps),
        "dep_shown": share([d.def_line in shown[d.file] for d in case.deps]),
        "callee_recall": share(calls), "callee_shown": share([c.def_line in shown[c.file] for c in case.callees]),
        "complete": (float(all(edits) and (not deps or sum(deps) / len(deps) >= 0.5)) if edits else None),
        "tokens": tokens, "budget_used": tokens / budget if budget else 0.0,
    }


@dataclass
class Scores:
    rows: list[dict[str, float | None]] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for m in METRICS:
            xs = [r[m] for r in self.rows if r[m] is not None]
            out[m] = round(statistics.fmean(xs), 4) if xs else None  # type: ignore[arg-type]
        if self.latency_ms:
            out["latency_p50_ms"] = round(statistics.median(self.latency_ms), 1)
        return out


def _request(case: ContextCase, i: int, budget: int, strategy: str, mode: str) -> dict[str, Any]:
    data: dict[str, Any] = {"version": "v0", "id": f"00000000-0000-4000-8000-{i:012d}", "intent": case.query,
                            "request_id": f"eval-context-{i}", "budgets": {"tokens_max": budget, "time_ms": 10000},
                            "strategy": strategy}
    if focus := case.focus_for(mode):
        data["focus"] = list(focus)
    return data


_REF = re.compile(r"^(.+):(\d+)(?:-(\d+))?$")


def acms_ranges(index: Index, files: Files, case: ContextCase, i: int, budget: int, strategy: str,
                mode: str) -> list[Range]:
    """The context ``index.render`` gives the case (the path every client takes) as a JSON reply, whose
    budget covers the fragments' text, as an agent's prompt holds it: its fragments as ranges."""
    try:
        result = index.render(parse_request(_request(case, i, budget, strategy, mode)), output="json")
    except BudgetTooSmall:
        return []
    out = []
    for fragment in result.reply.get("fragments") or []:
        ref = _REF.match(str(fragment.get("source_ref") or ""))
        if ref is None:
            continue
        path, start = ref.group(1), int(ref.group(2))
        end = int(ref.group(3) or start)
        text = str(fragment.get("text") or "")
        verbatim = fragment.get("lod") in ("micro", "atomic") and not fragment.get("truncated")
        out.append(Range(path, start, end, text, files.shown(path, start, end, text, verbatim)))
    return out


def _runs(lines: Iterable[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for n in sorted(lines):
        if out and n == out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


class Chunks:
    """``bm25-dedup``'s ranking: BM25 (bm25s, Lucene variant, k1 1.5, b 0.75) over 40-line chunks, stride 20,
    of the index's code files as they are on disk; a chunk's document is its path's words and its lines'
    (acms's code-aware search terms)."""

    def __init__(self, files: Files, paths: Iterable[str]) -> None:
        import bm25s  # the baseline's own library, imported by this command only

        self.chunks: list[tuple[str, int, int]] = []
        docs: list[list[str]] = []
        for path in sorted(paths):
            if language_for(path) in NOT_CODE:
                continue
            lines = files.lines(path)
            words = search_terms(path.replace("/", " "))
            for start in range(0, max(1, len(lines) - CHUNK_LINES + CHUNK_STRIDE), CHUNK_STRIDE):
                end = min(len(lines), start + CHUNK_LINES)
                self.chunks.append((path, start + 1, max(end, start + 1)))
                docs.append(words + search_terms("\n".join(lines[start:end])))
        self.model = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        if docs:
            self.model.index(docs, show_progress=False)

    def ranking(self, query: str) -> list[int]:
        """Chunk numbers with a positive score, best first (a tie keeps the corpus order)."""
        if not self.chunks:
            return []
        words = [w for w in search_terms(query) if w in self.model.vocab_dict]
        if not words:
            return []
        scores = np.asarray(self.model.get_scores(words), dtype=np.float64)
        return [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > 0]


def baseline_ranges(chunks: Chunks, files: Files, case: ContextCase, budget: int, mode: str) -> list[Range]:
    """``bm25-dedup``'s context for the case (see the module docstring)."""
    query = case.query
    ranges: list[Range] = []
    have: dict[str, set[int]] = defaultdict(set)
    used = 0

    def add(path: str, lo: int, hi: int, text: str, tokens: int) -> None:
        nonlocal used
        ranges.append(Range(path, lo, hi, text, frozenset(range(lo, hi + 1))))
        have[path].update(range(lo, hi + 1))
        used += tokens

    site = case.edit_sites[0] if mode == "focus" and case.edit_sites else None
    if site is not None:
        text = files.text(site.file, site.start, site.end)
        query = f"{query}\n{text}"
        end, tokens = site.end, count(text)
        while tokens > budget and end > site.start:  # an edit site larger than the budget is cut
            end = site.start + (end - site.start) // 2 if tokens > 2 * budget else end - 1
            tokens = count(files.text(site.file, site.start, end))
        if tokens <= budget:
            add(site.file, site.start, end, files.text(site.file, site.start, end), tokens)
    for i in chunks.ranking(query):
        if used >= budget:
            break
        path, lo, hi = chunks.chunks[i]
        new = [n for n in range(lo, hi + 1) if n not in have[path]]
        if not new:
            continue
        pieces = [(a, b, files.text(path, a, b)) for a, b in _runs(new)]
        costs = [count(t) for _, _, t in pieces]
        if used + sum(costs) <= budget:
            for (a, b, t), cost in zip(pieces, costs, strict=True):
                add(path, a, b, t, cost)
    return ranges


@dataclass
class ContextEvaluation:
    budget: int
    gold: dict[str, int]
    strategies: dict[str, dict[str, dict[str, float | None]]]  # strategy -> mode -> metrics
    baseline: dict[str, dict[str, float | None]]  # mode -> metrics

    def as_json(self) -> dict[str, Any]:
        return {"kind": "context", "budget": self.budget, "gold": self.gold, "strategies": self.strategies,
                "baseline": {BASELINE: self.baseline}}


def evaluate_context(cases: list[ContextCase], index: Index, strategies: list[str], budget: int,
                     modes: tuple[str, ...] = MODES) -> ContextEvaluation:
    """Every strategy in every mode through ``index.render``, then ``bm25-dedup`` on the same index."""
    files = Files(index.root)
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for name in strategies:
        out[name] = {}
        for mode in modes:
            s = Scores()
            for i, case in enumerate(cases):
                t = time.perf_counter()
                ranges = acms_ranges(index, files, case, i, budget, name, mode)
                s.latency_ms.append(1000 * (time.perf_counter() - t))
                s.rows.append(score(case, ranges, budget))
            out[name][mode] = s.summary()
    base: dict[str, dict[str, float | None]] = {}
    chunks = Chunks(files, index.searcher.caches.ranking().files)
    for mode in modes:
        s = Scores()
        for case in cases:
            s.rows.append(score(case, baseline_ranges(chunks, files, case, budget, mode), budget))
        base[mode] = s.summary()
    gold = {"cases": len(cases), "with_edit_sites": sum(bool(c.edit_sites) for c in cases),
            "edit_sites": sum(len(c.edit_sites) for c in cases), "with_deps": sum(bool(c.deps) for c in cases),
            "deps": sum(len(c.deps) for c in cases), "with_callees": sum(bool(c.callees) for c in cases),
            "callees": sum(len(c.callees) for c in cases)}
    return ContextEvaluation(budget, gold, out, base)
