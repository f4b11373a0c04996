"""The default pipeline fills the budget with what its walk found: with room left once everything planned is
in, the signatures and references become the bodies they stand for, in their planned places; without
room, depth still sets the level of detail; and the output never passes the budget."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acms.assembly.model import Assembled
from acms.service.assembly import assemble
from acms.tokens import count

from .test_assembly import project, request, session  # noqa: F401  (module fixtures: one index)

FOCUS = ["pkg/mod.py::Parser.parse_header"]
TASK = "parse header lines"


def run(session, budget: int) -> Assembled:  # noqa: F811
    searcher, reg = session
    return assemble(request(TASK, budget=budget, focus=FOCUS, strategy="arce"), searcher, reg).assembled


def outlines(result: Assembled) -> list[str]:
    """The walk's signatures and references still shown as such."""
    return [i.candidate.name for i in result.items
            if i.candidate.lod == "macro" and i.candidate.fragment.endswith(("#signature", "#reference"))]


def test_room_left_turns_what_the_focus_uses_into_bodies(session) -> None:  # noqa: F811
    tight, roomy = run(session, 600), run(session, 4000)
    signature = next(i.candidate for i in tight.items if i.candidate.name == "pkg.util.normalize")
    assert signature.lod == "macro" and signature.text.startswith("def normalize(text: str) -> str:")
    whole = next(i.candidate for i in roomy.items if i.candidate.name == "pkg.util.normalize")
    assert whole.lod == "micro" and "return" in whole.text and "shown whole" in whole.reason
    assert whole.end_line > signature.end_line  # the body's lines, not the declaration's
    # the focus first, then the bodies in the places the plan gave their outlines
    names = [i.candidate.name for i in roomy.items]
    assert names[0] == "pkg.mod.Parser.parse_header"
    planned = [n for n in (i.candidate.name for i in run(session, 1200).items) if n in names]
    assert planned == [n for n in names if n in planned]
    # every outline became its body, but a method inside a class shown whole: its lines are there already
    shown = {i.candidate.name: i.candidate.lod for i in roomy.items}
    assert outlines(roomy) == ["pkg.mod.Base.describe"] and shown["pkg.mod.Base"] == "micro"
    assert roomy.used_tokens > tight.used_tokens and roomy.dropped == 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(150, 5000))
def test_the_budget_is_kept_and_filled_while_material_remains(session, budget: int) -> None:  # noqa: F811
    result = run(session, budget)
    assert count(result.rendered) == result.used_tokens <= budget
    entities = [i.candidate.entity for i in result.items]
    assert len(entities) == len(set(entities))
    # from a budget where a tenth holds a block: 90 % used, or all there is shown (the one outline left is
    # a method inside its class's body, shown whole)
    if budget >= 600:
        assert result.used_tokens >= 0.9 * budget or (result.dropped == 0 and set(outlines(result)) <= {
            "pkg.mod.Base.describe"})
