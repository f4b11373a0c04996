"""The budget invariant, by property, or BudgetTooSmall, every time: ``count(output) <= budget`` for a
document; for a JSON reply ``sum(count(text)) == used_tokens <= budget`` (what the budget covers there)
with the envelope around the text within its documented bound."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from acms.assembly.budget import dumps, pack

from acms.errors import BudgetTooSmall
from acms.assembly.model import Assembled, Candidate
from acms.assembly.protocol import RenderRequest, ReplyMetrics, envelope_bound, reply_for
from acms.assembly.privacy import PrivacyMode
from acms.tokens import count

CODE_LINES = ["def f(x):", "    return x", "```", "````python", "x = '`'", "# ü 漢字 🙂 ∑",
              "", "    \"\"\"Doc.\"\"\"", "token = 'ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'"]

texts = st.one_of(
    st.text(max_size=300),
    st.text(alphabet=st.characters(blacklist_characters="\n"), min_size=200, max_size=1500),
    st.lists(st.sampled_from(CODE_LINES), max_size=60).map("\n".join),
    st.lists(st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=40), min_size=5,
             max_size=80).map("\n".join),
    st.just(""),
)


@st.composite
def candidates(draw: st.DrawFn) -> Candidate:
    start = draw(st.integers(1, 300))
    return Candidate(
        fragment=draw(st.sampled_from([f"urn:f:{i}" for i in range(10)])),
        entity=draw(st.sampled_from([f"urn:e:{i}" for i in range(8)])),
        name=draw(st.one_of(st.text(max_size=30), st.text(min_size=100, max_size=400))),
        kind=draw(st.sampled_from(["Function", "Method", "Class", "DocSection", "File", "🙂" * 30])),
        lod=draw(st.sampled_from(["macro", "micro", "atomic"])),
        text=draw(texts),
        path=draw(st.sampled_from(["pkg/a.py", "docs/guide.md", "b.txt", "Makefile", "ü/x.yaml"])),
        start_line=start,
        end_line=start + draw(st.integers(0, 60)),
        score=draw(st.floats(0, 1, allow_nan=False)),
        strategy=draw(st.sampled_from(["arce", "keyword-first", "breadth-depth-navigator"])),
        reason=draw(st.one_of(st.text(max_size=20), st.text(min_size=100, max_size=400))),
        tier=draw(st.sampled_from(["hot", "warm", "cold"])),
    )


budgets = st.one_of(st.integers(1, 60), st.integers(61, 600), st.integers(601, 4000))
# a budget as a fraction of what everything would take: the tight cases where truncation happens
fractions = st.floats(0.3, 1.0)
METRICS = ReplyMetrics(planner_ms=3, strategy="arce", strategy_reason="property test " * 30,
                       warnings=tuple(f"warning {i}: " + "ü漢🙂" * 40 for i in range(12)),
                       timings_ms={f"phase {i} " * 10: 1.5 for i in range(12)})


def _run(cands: list[Candidate], budget: int, mode: str, privacy: PrivacyMode) -> Assembled:
    if mode == "json":
        request = RenderRequest(id="00000000-0000-0000-0000-000000000000", intent="t",
                                request_id="r", tokens_max=budget, time_ms=100, privacy_mode=privacy)
        return reply_for(request, cands, METRICS)
    return pack(cands, budget, mode, "property test ✓")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(candidates(), max_size=7), st.one_of(budgets, fractions),
    st.sampled_from(["markdown", "text", "json"]), st.sampled_from(list(PrivacyMode)),
)
def test_output_never_exceeds_the_budget(
    cands: list[Candidate], budget: int | float, mode: str, privacy: PrivacyMode
) -> None:
    if isinstance(budget, float):
        budget = max(1, int(_run(cands, 1_000_000, mode, privacy).used_tokens * budget))
    try:
        result = _run(cands, budget, mode, privacy)
    except BudgetTooSmall as err:
        assert err.minimum > budget
        return
    if mode == "json":
        reply = result.reply
        assert reply is not None
        assert result.rendered == dumps(reply) and json.loads(result.rendered) == reply
        texts = [count(f["text"]) for f in reply["fragments"]]
        assert texts == [f["cost_tokens"] for f in reply["fragments"]]
        assert sum(texts) == reply["metrics"]["used_tokens"] == result.used_tokens <= budget
        assert reply["metrics"]["reply_tokens"] == count(result.rendered)
        assert count(result.rendered) - result.used_tokens <= envelope_bound(reply)
    else:
        assert count(result.rendered) == result.used_tokens <= budget
    by_id = {c.fragment: c for c in cands}
    for item in result.items:
        if item.truncated:
            full = item.candidate.text.rstrip("\n").split("\n")
            shown = item.text.split("\n")
            assert len(shown) < len(full) and shown == full[: len(shown)]
        assert item.candidate.fragment in by_id
    again = _run(cands, budget, mode, privacy)
    assert again.rendered == result.rendered
