"""What kind of question a request asks, for ``auto``: plain words, no model.

The history and decision patterns are deliberately narrow (a question word or "history" plus a verb
of change or decision), so an ordinary task that mentions "change" still goes to the general
strategies.
"""

from __future__ import annotations

import re

from acms.assembly.protocol import RenderRequest

_HISTORY = re.compile(
    r"\b(why|when|who)\b.{0,80}\b(changed|modified|introduced|added|removed|deleted|renamed|rewritten|"
    r"rewrote|refactored|broke|regressed)\b"
    r"|\b(why|when|who)\b.{0,40}\bdid\b.{0,80}\b(introduce|add|change|modify|remove|delete|rename|rewrite|"
    r"refactor|break)\b"
    r"|\bhistory of\b|\bwhat changed\b|\bprevious versions?\b|\bgit (log|blame|history)\b",
    re.IGNORECASE | re.DOTALL,
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
