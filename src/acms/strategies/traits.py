"""What kind of question a request asks, for ``auto``: plain words, no model.

The history and decision patterns are deliberately narrow (a question word or "history" plus a verb
of change or decision), so an ordinary task that mentions "change" still goes to the general
strategies.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from acms.assembly.protocol import RenderRequest

_VERB = (r"(changed|modified|introduced|added|removed|deleted|renamed|rewritten|rewrote|refactored|broke|"
         r"regressed|introduce|add|change|modify|remove|delete|rename|rewrite|refactor|break)")
# A question about the past: "why/when" with an auxiliary ("why was…", "when did we…", "why has…") or
# "who" with a verb of change, then that verb within the same clause (no sentence break, no newline).
# A wh-word in a task's subordinate clause ("…needed when updating the cache… added") is not one: a
# commit-style task of several lines matched the looser pattern and went to the history strategy.
_HISTORY = re.compile(
    r"\b(why|when)\s+(was|were|did|does|do|has|have|had|is)\b[^.!?\n]{0,80}\b" + _VERB + r"\b"
    r"|\bwho\s+(\w+\s+)?" + _VERB + r"\b"
    r"|\bhistory of\b|\bwhat changed\b|\bprevious versions?\b|\bgit (log|blame|history)\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(decisions?|decided|adrs?|rationale)\b|\bwhy did we\b|\bwhat did we (decide|agree)\b",
    re.IGNORECASE,
)


def request_traits(request: RenderRequest) -> set[str]:
    traits = set()
    if request.focus:
        traits.add("focus")
    if request.plan:
        traits.add("plan")
    if _HISTORY.search(request.intent):
        traits.add("history")
    if _DECISION.search(request.intent):
        traits.add("decision")
    return traits


# Which way a task walks the graph: "who calls X", "callers of X", "where is X used" want the edges into
# X (callers, subclasses, users); "what does X call", "X's dependencies" the edges out of it. Neither:
# both ways alike.
_INWARD = re.compile(
    r"\b(who|what|which\s+\w+)\s+(calls?|uses?|imports?|invokes?|subclass(es)?|extends?|inherits? from|depends? on)\b"
    r"|\b(callers|users|usages|uses|subclasses|dependents|importers)\s+of\b"
    r"|\bwhere\s+(is|are)\b.{0,60}\b(called|used|invoked|imported|referenced)\b",
    re.IGNORECASE,
)
_OUTWARD = re.compile(
    r"\bwhat\s+(does|do)\b.{0,60}\b(call|use|import|invoke|depend on)\b"
    r"|\b(callees|dependencies)\s+of\b",
    re.IGNORECASE,
)


def edge_direction(intent: str) -> str | None:
    """``"in"``, ``"out"`` or None: the direction a graph walk should favour for this task."""
    inward, outward = _INWARD.search(intent), _OUTWARD.search(intent)
    if inward and not outward:
        return "in"
    if outward and not inward:
        return "out"
    return None
