"""Packing: rank order first, line-boundary truncation, determinism, too-small budgets."""

from __future__ import annotations

import random

import pytest

from acms.assembly.budget import dumps, pack, pack_json

from acms.errors import BudgetTooSmall, UsageError
from acms.assembly.model import Assembled
from acms.assembly.model import Candidate
from acms.tokens import count


def cand(i: int, lines: int, score: float, path: str | None = None) -> Candidate:
    text = "\n".join(f"    value_{i}_{j} = compute(item_{j}, factor={j})  # step {j}" for j in range(lines))
    start = 10 * i * 100 + 1
    return Candidate(f"urn:f:{i}", f"urn:e:{i}", f"pkg.mod.fn{i}", "Function", "micro", text,
                     path or f"pkg/m{i}.py", start, start + lines - 1, score, "arce", f"hit {i}")


# Renamed from test_greedy_prefers_value_per_token: the packer now takes candidates in rank order, and this
# case passes for another reason: the best candidate does not fit whole, so it is skipped by the greedy step
# (the smaller ones after it fit) and comes back truncated in the fill step.
def test_a_best_candidate_too_big_to_fit_whole_is_truncated_last() -> None:
    big = cand(0, 60, 0.9)            # best score, larger than the budget
    small = [cand(1, 3, 0.6), cand(2, 3, 0.55)]
    budget = count(pack(small, 10_000, "markdown", "task").rendered) + 120
    result = pack([big, *small], budget, "markdown", "task")
    whole = {i.candidate.fragment for i in result.items if not i.truncated}
    assert whole == {"urn:f:1", "urn:f:2"}
    assert count(result.rendered) == result.used_tokens <= budget
    # the big one fills what is left, truncated, as the last block
    assert result.items[-1].candidate.fragment == "urn:f:0" and result.items[-1].truncated


def test_truncation_keeps_a_prefix_of_whole_lines() -> None:
    c = cand(0, 80, 0.7)
    result = pack([c], 300, "markdown", "explain fn0")
    [item] = result.items
    lines = c.text.split("\n")
    shown = item.text.split("\n")
    assert item.truncated and 1 <= len(shown) < len(lines)
    assert shown == lines[: len(shown)]
    assert item.end_line == c.start_line + len(shown) - 1
    assert f"{c.path}:{c.start_line}-{item.end_line} · pkg.mod.fn0 (Function) (truncated)" in result.rendered
    assert count(result.rendered) <= 300
    assert result.dropped == 0 and any("truncated" in w for w in result.warnings)


def test_truncation_uses_most_of_the_remainder() -> None:
    c = cand(0, 200, 0.7)
    result = pack([c], 1000, "text", "t")
    one_more_line = len(result.items[0].text.split("\n")) + 1
    bigger = "\n".join(c.text.split("\n")[:one_more_line])
    assert result.used_tokens <= 1000 < result.used_tokens + count(bigger) - count(result.items[0].text) + 1


def test_packing_is_deterministic_and_independent_of_input_order() -> None:
    cands = [cand(i, 1 + (i * 7) % 23, round(0.3 + (i % 5) / 10, 2)) for i in range(20)]
    first = pack(cands, 700, "markdown", "task")
    for seed in range(3):
        shuffled = cands[:]
        random.Random(seed).shuffle(shuffled)
        again = pack(shuffled, 700, "markdown", "task")
        assert again.rendered == first.rendered and again.items == first.items


def test_duplicates_are_merged_before_packing() -> None:
    c = cand(1, 3, 0.5)
    result = pack([c, c], 10_000, "text", "t")
    assert len(result.items) == 1 and "1 duplicate candidate(s) merged" in result.warnings


def test_budget_too_small_names_a_budget_that_works() -> None:
    cands = [cand(0, 40, 0.9), cand(1, 5, 0.5)]
    with pytest.raises(BudgetTooSmall) as info:
        pack(cands, 20, "markdown", "task")
    err = info.value
    assert err.code == "BUDGET_TOO_SMALL" and isinstance(err, UsageError)
    assert f"at least {err.minimum}" in err.message
    result = pack(cands, err.minimum, "markdown", "task")
    assert result.items and result.used_tokens <= err.minimum
    with pytest.raises(BudgetTooSmall):
        pack(cands, err.minimum - 1, "markdown", "task")


def test_no_candidates_gives_the_preamble_or_too_small() -> None:
    result = pack([], 50, "markdown", "task")
    assert result.rendered == "# Context for: task\n" and result.items == []
    with pytest.raises(BudgetTooSmall):
        pack([], 2, "markdown", "task")


@pytest.mark.parametrize("budget", [0, -3, True, 2.5])
def test_budget_must_be_a_positive_integer(budget: object) -> None:
    with pytest.raises(UsageError):
        pack([], budget, "text", "t")  # type: ignore[arg-type]


def _rank_order_case() -> tuple[Candidate, list[Candidate], int]:
    """One large best candidate, twelve small weaker ones, and the token count of the large one packed alone."""
    big = cand(0, 30, 0.9)  # the best candidate, large (≈700 tokens)
    small = [cand(i, 3, round(0.5 - 0.01 * i, 2)) for i in range(1, 13)]  # many small, lower-scored ones
    return big, small, count(pack([big], 10_000, "markdown", "task").rendered)


# A few tokens of slack: the greedy step adds per-block counts, which can exceed the count of the joined
# output by a token or two: at exactly the joined count, the big one is packed truncated rather than whole.
@pytest.mark.parametrize("extra", [10, 100, 400])
def test_rank_order_packs_a_high_scored_large_candidate_before_small_ones(extra: int) -> None:
    """When the budget holds the best candidate, it is packed whole and first, even though by value per token
    the small ones would have filled the budget and left it truncated or out; the invariant still holds."""
    big, small, only_big = _rank_order_case()
    assert count(pack(small, 10_000, "markdown", "task").rendered) > only_big + extra  # they cannot all fit
    budget = only_big + extra
    result = pack([*small, big], budget, "markdown", "task")
    assert result.items[0].candidate.fragment == "urn:f:0" and not result.items[0].truncated
    assert result.items[0].text == big.text
    assert count(result.rendered) == result.used_tokens <= budget
    whole = [i.candidate.fragment for i in result.items if not i.truncated]
    # the small ones that made it are the best of them, in score order
    assert whole[1:] == [c.fragment for c in small[: len(whole) - 1]]
    assert result.dropped == 13 - len(result.items)


def test_rank_order_in_json_output_keeps_the_budget() -> None:
    """The JSON packer shares the order: the big best candidate first, and the fragments' text within budget
    (what the budget covers in JSON); ``reply_tokens`` counts the whole serialization."""
    big, small, _ = _rank_order_case()

    def build(a: Assembled) -> dict[str, object]:
        return {"items": [{"ref": i.source_ref, "text": i.text} for i in a.items], "used_tokens": a.used_tokens,
                "reply_tokens": a.reply_tokens}

    budget = count(big.text) + 150
    result = pack_json([*small, big], budget, build)
    assert result.items[0].candidate.fragment == "urn:f:0" and not result.items[0].truncated
    assert sum(count(i.text) for i in result.items) == result.used_tokens <= budget
    assert budget - result.used_tokens < 24  # filled: the next fragment's shortest useful cut did not fit
    assert result.reply is not None and result.reply["used_tokens"] == result.used_tokens
    assert result.reply["reply_tokens"] == count(result.rendered) == count(dumps(result.reply))
