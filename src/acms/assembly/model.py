"""The values that flow through assembly: what strategies propose, what the packer placed.

Kept free of store and rendering concerns so that dedupe, privacy, budget and protocol can be tested
(and reasoned about) as pure functions over these three shapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

LODS = ("macro", "micro", "atomic")


@dataclass(frozen=True)
class Candidate:
    """One fragment a strategy proposes; ``fragment`` is the unique id of this exact text."""

    fragment: str
    entity: str
    name: str
    kind: str
    lod: str
    text: str
    path: str
    start_line: int
    end_line: int
    score: float
    strategy: str
    reason: str
    tier: str = "warm"
    copies: tuple[str, ...] = ()  # paths of near-identical copies of this file, not shown (acms.assembly.copies)

    @property
    def source_ref(self) -> str:
        """``path:start-end``, the provenance a reader can open."""
        return f"{self.path}:{self.start_line}-{self.end_line}"


@dataclass(frozen=True)
class Packed:
    """A candidate as placed in the output; ``text``/``end_line`` differ from it when truncated."""

    candidate: Candidate
    text: str
    end_line: int
    truncated: bool
    cost_tokens: int

    @property
    def source_ref(self) -> str:
        return f"{self.candidate.path}:{self.candidate.start_line}-{self.end_line}"


@dataclass
class Assembled:
    """The packer's result: ``used_tokens <= budget``, where ``used_tokens`` is ``tokens.count(rendered)``
    for a document and the sum of the fragments' ``cost_tokens`` for a JSON reply.

    ``dropped_candidates`` are the (deduplicated) candidates left out for lack of budget, best
    first; the reply's ``kv_policy.evict`` and ``coverage_entities`` come from them.
    """

    items: list[Packed]
    rendered: str
    used_tokens: int
    budget: int
    dropped: int
    warnings: list[str]
    dropped_candidates: list[Candidate] = field(default_factory=list)
    reply: dict[str, Any] | None = None
    reply_tokens: int = 0  # JSON output: the count of the whole serialized reply (0 for documents)
