"""A body longer than its share of the budget is shown as its excerpt: the contiguous lines with the most
task words that fit, with exact provenance, so one giant function does not crowd out every other entity."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from acms.assembly.filters import BODY_SHARE, FIRST_SHARE, MIN_EXCERPT, _best_span, excerpt, excerpts
from acms.assembly.model import Candidate
from acms.assembly.protocol import parse_request
from acms.tokens import count

FILLER = [f"    value_{i} = compute_something_else({i}, flag=True)  # unrelated bookkeeping" for i in range(300)]
BODY = ["def attrs(maybe_cls=None, these=None, repr_ns=None):", *FILLER[:150],
        "    # match_args: add __match_args__ so that match statements can destructure instances",
        "    if match_args and '__match_args__' not in cls.__dict__:",
        "        cls.__match_args__ = tuple(a.name for a in attrs if a.init)", *FILLER[150:]]


def cand(text: str, score: float = 1.0, start: int = 10, frag: str = "f:attrs") -> Candidate:
    lines = text.count("\n") + 1
    return Candidate(frag, "e:attrs", "attr._make.attrs", "Function", "micro", text, "src/attr/_make.py", start,
                     start + lines - 1, score, "arce", "file #1")


def request(intent: str, budget: int):
    return parse_request({"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "intent": intent,
                          "request_id": "t", "budgets": {"tokens_max": budget, "time_ms": 1000}})


def test_a_long_body_becomes_the_lines_that_match_with_exact_provenance() -> None:
    whole = cand("\n".join(BODY))
    part = excerpt(whole, {"match", "args", "match_args"}, 400)
    assert count(part.text) <= 400 and part.text in whole.text
    shown = part.text.split("\n")
    assert any("__match_args__" in line for line in shown)
    # provenance: the slice's own lines, inside the body's
    assert BODY[part.start_line - whole.start_line: part.end_line - whole.start_line + 1] == shown
    assert whole.start_line < part.start_line <= part.end_line < whole.end_line
    assert part.fragment != whole.fragment and "excerpt, lines" in part.reason


def test_bodies_within_their_share_and_tiny_budgets_stay_whole() -> None:
    short = cand("def f():\n    return 1")
    assert excerpt(short, {"f"}, 400) is short
    long = cand("\n".join(BODY))
    assert excerpt(long, {"match"}, MIN_EXCERPT - 1) is long  # the packer's truncation handles tiny budgets


def test_the_best_ranked_body_gets_the_larger_share() -> None:
    budget = 2000
    first, second = cand("\n".join(BODY), 1.0, frag="f:1"), cand("\n".join(BODY), 0.9, frag="f:2")
    out = excerpts([second, first], request("add match args", budget))
    by_id = {c.fragment.split("#")[0]: c for c in out}
    assert count(by_id["f:1"].text) <= FIRST_SHARE * budget and count(by_id["f:2"].text) <= BODY_SHARE * budget
    assert count(by_id["f:1"].text) > count(by_id["f:2"].text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.integers(0, 5)), min_size=1, max_size=60), st.integers(1, 200))
def test_best_span_is_the_richest_window_that_fits(lines: list[tuple[int, int]], limit: int) -> None:
    costs, hits = [c for c, _ in lines], [h for _, h in lines]
    lo, hi = _best_span(costs, hits, limit)
    assert 0 <= lo < hi <= len(lines)
    if min(costs) <= limit:
        assert sum(costs[lo:hi]) <= limit
        best = max(sum(hits[a:b]) for a in range(len(lines)) for b in range(a + 1, len(lines) + 1)
                   if sum(costs[a:b]) <= limit)
        assert sum(hits[lo:hi]) == best
