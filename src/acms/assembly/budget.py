"""Pack candidates into a token budget: ``tokens.count(output) <= budget``, always.

Two outputs share one packer:

- :func:`pack`: a markdown or text document (:mod:`acms.assembly.render`); a block costs the
  tokens of its rendered header + body.
- :func:`pack_json`: a JSON reply built by a callback (``Assembled -> dict``, see
  :func:`acms.assembly.protocol.reply_builder`). The budget covers what a client puts into its
  prompt, the fragments' text: a fragment's ``cost_tokens`` is the count of its text and
  ``used_tokens = sum(cost_tokens) <= budget`` (the seed contract's rule). The envelope around the
  text (ids, provenance, kv_policy, metrics) is kept compact and bounded by the reply builder, and
  ``reply_tokens`` is the count of the whole serialization
  ``json.dumps(reply, ensure_ascii=False, separators=(",", ":"))`` (a fixed point, since that
  count is inside the reply).

Algorithm (deterministic; candidates are deduplicated first):

1. greedy: in rank order (score, then the tie breakers of ``rank_key``), take every block whose
   estimated cost still fits, so a better fragment is never left out for cheaper, weaker ones (by
   value per token, short outlines of weakly related entities used to crowd out the real code);
2. fill: the best skipped candidate that fits, truncated at a line boundary (binary search on the
   number of lines) if it does not fit whole; a truncated fragment shows at least
   ``min_useful_tokens`` of text (or all of it) and its ``end_line`` is moved to the last line
   shown when its text is a verbatim slice of the file;
3. fuller forms: when room is left after steps 1-2 (nothing had to be truncated), an outline placed
   whose entity's body was proposed below it (:func:`acms.assembly.dedupe.fuller_forms`) becomes
   that body, best-ranked first, while each fits and shows no lines a placed body already shows; it
   keeps the outline's place in the order. The budget is filled with the code the strategy found
   relevant rather than left unused;
4. enforce: token counts are not additive over concatenation, so the finished output is counted
   again and the last block is shortened, then dropped, until the count holds.

If no block fits at all, :class:`BudgetTooSmall` says which budget would.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from acms.assembly.dedupe import dedupe, fuller_forms, overlaps, rank_key
from acms.assembly.model import Assembled, Candidate, Packed
from acms.assembly.render import Format, block_parts, packed_parts, parse_format, preamble, render, render_packed
from acms.errors import BudgetTooSmall, UsageError
from acms.tokens import count, count_parts

ReplyBuilder = Callable[[Assembled], dict[str, Any]]
# Block costs are counted one by one; the whole output can count a few tokens less (joins merge
# tokens). Past this margin an estimate that does not fit is trusted without rendering everything.
ESTIMATE_SLACK = 16


def dumps(reply: dict[str, Any]) -> str:
    """The one serialization whose token count the JSON budget covers."""
    return json.dumps(reply, ensure_ascii=False, separators=(",", ":"))


class _Layout(Protocol):
    def cost(self, cand: Candidate, text: str, end_line: int, truncated: bool) -> int: ...
    def piece_cost(self, item: Packed) -> int: ...
    def used(self, skeleton: Assembled) -> int: ...
    def finish(self, skeleton: Assembled) -> Assembled: ...


@dataclass
class _DocumentLayout:
    fmt: Format
    task: str
    notice: str = ""

    def cost(self, cand: Candidate, text: str, end_line: int, truncated: bool) -> int:
        return count_parts(block_parts(text, cand, self.fmt, truncated, end_line))

    def piece_cost(self, item: Packed) -> int:
        return item.cost_tokens

    def used(self, skeleton: Assembled) -> int:
        """The count of the whole output, as ``finish`` renders it (its bodies' counts kept)."""
        parts = [preamble(self.task, self.fmt, self.notice)]
        for item in skeleton.items:
            parts += packed_parts(item, self.fmt)
        return count_parts(parts)

    def finish(self, skeleton: Assembled) -> Assembled:
        rendered = render((render_packed(i, self.fmt) for i in skeleton.items), self.fmt, self.task, self.notice)
        skeleton.rendered = rendered
        skeleton.used_tokens = count(rendered)
        return skeleton


@dataclass
class _JsonLayout:
    """The budget covers the fragments' text, which adds up exactly: no re-count of the whole reply."""

    build: ReplyBuilder
    max_rounds: int = 16

    def cost(self, cand: Candidate, text: str, end_line: int, truncated: bool) -> int:
        return count_parts((text,))  # a body's count kept for the next contexts that show it

    def piece_cost(self, item: Packed) -> int:
        return item.cost_tokens

    def used(self, skeleton: Assembled) -> int:
        return sum(i.cost_tokens for i in skeleton.items)

    def finish(self, skeleton: Assembled) -> Assembled:
        """Serialize with ``reply_tokens`` equal to the count of the serialization itself."""
        skeleton.used_tokens = self.used(skeleton)
        size = 0
        for _ in range(self.max_rounds):
            skeleton.reply_tokens = size
            reply = self.build(skeleton)
            rendered = dumps(reply)
            n = count(rendered)
            if n == size:
                skeleton.rendered, skeleton.reply = rendered, reply
                return skeleton
            size = n
        raise RuntimeError("reply_tokens did not reach a fixed point")  # pragma: no cover


class _Packer:
    def __init__(
        self, cands: Sequence[Candidate], budget: int, layout: _Layout, min_useful_tokens: int
    ) -> None:
        self.ranked = dedupe(cands)
        self.fuller = fuller_forms(cands, self.ranked)
        self.merged = len(cands) - len(self.ranked) - len(self.fuller)
        self.shown_whole: set[str] = set()  # outlines placed as their fuller form
        self.budget = budget
        self.layout = layout
        self.min_useful = min_useful_tokens
        self._lines: dict[str, list[str]] = {}
        self._floors: dict[str, int] = {}
        self._measured: dict[tuple[tuple[str, int], ...], int] = {}

    # -- pieces --------------------------------------------------------------------------------
    def lines(self, c: Candidate) -> list[str]:
        if c.fragment not in self._lines:
            self._lines[c.fragment] = c.text.rstrip("\n").split("\n")
        return self._lines[c.fragment]

    def make(self, c: Candidate, k: int) -> Packed:
        """The candidate cut to its first ``k`` lines (all of them: the candidate whole)."""
        lines = self.lines(c)
        if k >= len(lines):
            cost = self.layout.cost(c, c.text, c.end_line, False)
            return Packed(c, c.text, c.end_line, False, cost)
        text = "\n".join(lines[:k])
        verbatim = c.end_line - c.start_line + 1 == len(lines)
        end = c.start_line + k - 1 if verbatim else c.end_line
        return Packed(c, text, end, True, self.layout.cost(c, text, end, True))

    def floor(self, c: Candidate) -> int:
        """Fewest lines that show ``min_useful_tokens`` of text (or all of it)."""
        if c.fragment not in self._floors:
            lines = self.lines(c)
            target = min(self.min_useful, count("\n".join(lines)))
            lo, hi = 1, len(lines)
            while lo < hi:
                mid = (lo + hi) // 2
                if count("\n".join(lines[:mid])) >= target:
                    hi = mid
                else:
                    lo = mid + 1
            self._floors[c.fragment] = lo
        return self._floors[c.fragment]

    # -- whole outputs -------------------------------------------------------------------------
    @staticmethod
    def ordered(items: list[Packed]) -> list[Packed]:
        """Reading order: whole fragments best first, the truncated one last."""
        return sorted(items, key=lambda i: (i.truncated, rank_key(i.candidate)))

    def finish(self, items: list[Packed]) -> Assembled:
        items = self.ordered(items)
        placed = {i.candidate.fragment for i in items} | self.shown_whole
        dropped = [c for c in self.ranked if c.fragment not in placed]
        warnings = []
        if not self.ranked:
            warnings.append("no candidates to assemble")
        if self.merged:
            warnings.append(f"{self.merged} duplicate candidate(s) merged")
        if dropped:
            warnings.append(f"{len(dropped)} candidate(s) dropped for budget")
        warnings += [f"truncated {i.source_ref} to fit the budget" for i in items if i.truncated]
        skeleton = Assembled(items, "", 0, self.budget, len(dropped), warnings, dropped)
        return self.layout.finish(skeleton)

    def measure(self, items: list[Packed]) -> int:
        key = tuple(sorted((i.candidate.fragment, len(i.text)) for i in items))
        if key not in self._measured:
            self._measured[key] = self.layout.used(Assembled(self.ordered(items), "", 0, self.budget, 0, []))
        return self._measured[key]

    # -- steps ---------------------------------------------------------------------------------
    def fit(self, c: Candidate, others: list[Packed], max_k: int) -> Packed | None:
        """The longest prefix of ``c`` (at least its floor) that fits beside ``others``, exactly."""
        lo = self.floor(c)
        if lo > max_k:
            return None
        room = self.budget - self.measure(others)
        best = _largest(lo, max_k, lambda k: self.layout.piece_cost(self.make(c, k)) <= room)
        if best is None and self.layout.piece_cost(self.make(c, lo)) > room + ESTIMATE_SLACK:
            return None  # clearly too big: spare the full render and count
        start = best if best is not None else lo
        if self.measure([*others, self.make(c, start)]) <= self.budget:
            return self.make(c, start)
        best = _largest(
            lo, start - 1, lambda k: self.measure([*others, self.make(c, k)]) <= self.budget
        )
        return None if best is None else self.make(c, best)

    def fill(self, items: list[Packed], pool: list[Candidate]) -> list[Packed]:
        for c in pool:
            piece = self.fit(c, items, len(self.lines(c)))
            if piece is not None:
                return [*items, piece]
        return items

    def upgrade(self, items: list[Packed]) -> list[Packed]:
        """Step 3: outlines placed whole become their fuller forms while the room left holds them."""
        if not self.fuller or any(i.truncated for i in items):
            return items
        room = self.budget - self.measure(items)
        out = list(items)
        for n, item in enumerate(out):
            body = self.fuller.get(item.candidate.fragment)
            if body is None or room <= 0:
                continue
            body = replace(body, score=item.candidate.score)
            piece = self.make(body, len(self.lines(body)))
            extra = self.layout.piece_cost(piece) - item.cost_tokens
            if extra > room or any(overlaps(body, o.candidate) for o in out if o is not item):
                continue
            self.shown_whole.add(item.candidate.fragment)
            out[n] = piece
            room -= extra
        return out

    def enforce(self, items: list[Packed]) -> list[Packed]:
        items = self.ordered(items)
        while items and self.measure(items) > self.budget:
            last, others = items[-1], items[:-1]
            shown = len((last.text if last.truncated else last.candidate.text).rstrip("\n").split("\n"))
            shorter = self.fit(last.candidate, others, shown - 1)
            items = self.ordered([*others, shorter]) if shorter is not None else others
        return items

    def minimum(self) -> int:
        if not self.ranked:
            return self.measure([])
        return min(self.measure([self.make(c, self.floor(c))]) for c in self.ranked)

    def run(self) -> Assembled:
        if self.measure([]) > self.budget:
            raise BudgetTooSmall(self.budget, self.minimum())
        whole = {c.fragment: self.make(c, len(self.lines(c))) for c in self.ranked}
        cost = {f: self.layout.piece_cost(p) for f, p in whole.items()}
        order = self.ranked  # rank order: a better fragment is never left out for cheaper, weaker ones
        used = self.measure([])
        items: list[Packed] = []
        skipped: list[Candidate] = []
        for c in order:
            if used + cost[c.fragment] <= self.budget:
                items.append(whole[c.fragment])
                used += cost[c.fragment]
            else:
                skipped.append(c)
        items = self.enforce(self.upgrade(self.enforce(self.fill(items, skipped))))
        if not items and self.ranked:
            items = self.fill([], order)
            if not items:
                raise BudgetTooSmall(self.budget, self.minimum())
        return self.finish(items)


def _largest(lo: int, hi: int, ok: Callable[[int], bool]) -> int | None:
    """Largest k in [lo, hi] with ok(k), assuming ok is monotone (true, then false)."""
    best = None
    while lo <= hi:
        mid = (lo + hi) // 2
        if ok(mid):
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


def _check_budget(budget: int) -> None:
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise UsageError(f"budget must be a positive integer, not {budget!r}")


def pack(
    cands: Sequence[Candidate], budget: int, fmt: Format | str, task: str,
    min_useful_tokens: int = 24, notice: str = "",
) -> Assembled:
    """Pack into a markdown or text document of at most ``budget`` tokens (``notice``: a line under the
    title, counted like the rest)."""
    _check_budget(budget)
    layout = _DocumentLayout(parse_format(fmt), task, notice)
    return _Packer(cands, budget, layout, min_useful_tokens).run()


def pack_json(
    cands: Sequence[Candidate], budget: int, build: ReplyBuilder, min_useful_tokens: int = 24
) -> Assembled:
    """Pack into the JSON reply ``build`` makes; ``rendered`` is its serialization, ``reply`` the object.

    ``build`` receives the would-be result (items, dropped candidates, warnings, used_tokens) and
    must be deterministic; it is called many times while packing.
    """
    _check_budget(budget)
    return _Packer(cands, budget, _JsonLayout(build), min_useful_tokens).run()


__all__ = ["BudgetTooSmall", "ReplyBuilder", "dumps", "pack", "pack_json"]
