"""Fuller forms: an outline placed whole becomes the body its strategy proposed below everything, when the
budget has room for it once the rest is packed; never past the budget, never twice the same lines."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from acms.assembly.budget import pack, pack_json
from acms.assembly.dedupe import dedupe, fuller_forms
from acms.assembly.model import Assembled, Candidate
from acms.tokens import count


def body(i: int, lines: int, score: float, path: str = "pkg/mod.py", start: int | None = None) -> Candidate:
    text = f"def fn{i}(x):\n" + "\n".join(f"    x = step_{i}_{j}(x, factor={j})" for j in range(lines - 1))
    first = start if start is not None else 100 * i + 1
    return Candidate(f"urn:f:{i}:micro", f"urn:e:{i}", f"pkg.mod.fn{i}", "Function", "micro", text, path,
                     first, first + lines - 1, score, "arce", f"body {i}")


def head(i: int, score: float, level: str = "signature", path: str = "pkg/mod.py") -> Candidate:
    return Candidate(f"urn:e:{i}#{level}", f"urn:e:{i}", f"pkg.mod.fn{i}", "Function", "macro", f"def fn{i}(x):",
                     path, 100 * i + 1, 100 * i + 1, score, "arce", f"{level} {i}")


def names(result: Assembled) -> list[tuple[str, str]]:
    return [(i.candidate.name, i.candidate.lod) for i in result.items]


def proposal() -> list[Candidate]:
    """A body to edit, two signatures of what it uses, and their bodies ranked below everything."""
    return [body(0, 6, 0.9), head(1, 0.6), head(2, 0.5), body(1, 8, 0.0), body(2, 8, 0.0)]


def test_room_left_shows_the_bodies_in_their_outlines_places() -> None:
    result = pack(proposal(), 2000, "markdown", "task")
    assert names(result) == [("pkg.mod.fn0", "micro"), ("pkg.mod.fn1", "micro"), ("pkg.mod.fn2", "micro")]
    assert result.items[1].candidate.score == 0.6  # the outline's rank, not the proposal's
    assert result.dropped == 0 and not any("merged" in w for w in result.warnings)  # nothing left out
    assert count(result.rendered) == result.used_tokens <= 2000


def test_no_room_keeps_the_outlines_and_room_for_one_goes_to_the_best() -> None:
    outlines = pack([body(0, 6, 0.9), head(1, 0.6), head(2, 0.5)], 2000, "markdown", "task").used_tokens
    one = pack([body(0, 6, 0.9), body(1, 8, 0.6), head(2, 0.5)], 2000, "markdown", "task").used_tokens
    tight = pack(proposal(), outlines, "markdown", "task")
    assert names(tight) == [("pkg.mod.fn0", "micro"), ("pkg.mod.fn1", "macro"), ("pkg.mod.fn2", "macro")]
    # room for fn1's body but not for both: the better-ranked outline becomes its body
    middle = pack(proposal(), one + 3, "markdown", "task")
    assert names(middle) == [("pkg.mod.fn0", "micro"), ("pkg.mod.fn1", "micro"), ("pkg.mod.fn2", "macro")]
    assert count(middle.rendered) <= one + 3


def test_a_body_that_repeats_lines_already_shown_stays_an_outline() -> None:
    # fn1's body lies inside fn0's lines (a method inside a class body shown whole)
    inner = body(1, 4, 0.0, start=2)
    cands = [body(0, 12, 0.9, start=1), replace(head(1, 0.6), start_line=2, end_line=2), inner]
    assert names(pack(cands, 2000, "markdown", "task")) == [("pkg.mod.fn0", "micro"), ("pkg.mod.fn1", "macro")]


def test_fuller_forms_pair_outlines_with_merged_bodies_only() -> None:
    cands = proposal() + [replace(body(3, 3, 0.0), tier="cold"), replace(head(3, 0.4), tier="cold")]
    kept = dedupe(cands)
    fuller = fuller_forms(cands, kept)
    assert {k: v.fragment for k, v in fuller.items()} == {"urn:e:1#signature": "urn:f:1:micro",
                                                          "urn:e:2#signature": "urn:f:2:micro"}
    # a body ranked above its outline is kept itself: there is nothing fuller to swap in
    assert fuller_forms([body(1, 8, 0.7), head(1, 0.6)], dedupe([body(1, 8, 0.7), head(1, 0.6)])) == {}


def _json(cands: list[Candidate], budget: int) -> Assembled:
    return pack_json(cands, budget, lambda a: {"fragments": [i.text for i in a.items]})


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 40), st.floats(0.01, 1.0), st.booleans()), min_size=1, max_size=8),
       st.integers(20, 1500))
def test_fuller_forms_fill_within_the_budget(spec: list[tuple[int, float, bool]], budget: int) -> None:
    """Whatever the sizes and the budget: the output keeps to the budget, shows each entity once, and
    proposing the bodies never leaves less of the budget used than the outlines alone."""
    planned = [body(i, n, s) if whole else head(i, s) for i, (n, s, whole) in enumerate(spec)]
    reserve = [body(i, n, 0.0) for i, (n, _, whole) in enumerate(spec) if not whole]
    alone = _json(planned, budget) if any(count(c.text) <= budget for c in planned) else None
    if alone is None:
        return
    filled = _json(planned + reserve, budget)
    assert filled.used_tokens <= budget
    entities = [i.candidate.entity for i in filled.items]
    assert len(entities) == len(set(entities))
    assert filled.used_tokens >= alone.used_tokens
    assert count(pack(planned + reserve, budget + 200, "markdown", "t").rendered) <= budget + 200
