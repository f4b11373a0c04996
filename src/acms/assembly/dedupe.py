"""Remove candidates that would show the reader the same code twice.

Strategies overlap by design (a keyword hit and a graph neighbour are often the same method, a class
body contains its methods), and every duplicate wastes budget. Three rules, applied in rank order
(score descending; ties prefer ``micro`` over ``macro`` over ``atomic``, then the fragment id):

1. same fragment id: keep the best-ranked one;
2. same entity: keep the best-ranked fragment of it;
3. same file, overlapping line ranges: drop a candidate whose overlap with an already kept one is
   more than half of the smaller of the two ranges (a method inside a kept class body); an outline
   (``macro``: signatures, not bodies) repeats no code, so it neither drops nor is dropped by rule 3
   (a class's outline beside the methods shown from it);
4. history (tier ``cold``) is another time, so rule 3 never compares it with the present or with
   another version; instead a cold candidate whose text a kept candidate already shows is dropped
   (the same old body archived by a re-index and by a commit).

The result is in rank order, so it does not depend on the order of the input.

A strategy may propose an entity twice on purpose: its planned form (a signature or a one-line
reference) and, ranked below everything, its body. Rule 2 keeps the planned form; :func:`fuller_forms`
names the body it merged, which the packer shows instead when the budget has room for it after
everything it could place (:mod:`acms.assembly.budget`, step 3).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from acms.assembly.model import Candidate

LOD_RANK = {"micro": 0, "macro": 1, "atomic": 2}


def _score(c: Candidate) -> float:
    return c.score if not math.isnan(c.score) else -math.inf


def rank_key(c: Candidate) -> tuple[object, ...]:
    """A total order on candidates: best first, every field as a last-resort tie breaker."""
    return (
        -_score(c), LOD_RANK.get(c.lod, len(LOD_RANK)), c.fragment, c.entity, c.path,
        c.start_line, c.end_line, c.name, c.kind, c.lod, c.strategy, c.reason, c.tier, c.text,
    )


def _span(c: Candidate) -> int:
    return max(1, c.end_line - c.start_line + 1)


def _overlaps(a: Candidate, b: Candidate) -> bool:
    """More than half of the smaller range is shared (same file only)."""
    if not a.path or a.path != b.path or "cold" in (a.tier, b.tier) or "macro" in (a.lod, b.lod):
        return False
    shared = min(a.end_line, b.end_line) - max(a.start_line, b.start_line) + 1
    return shared > 0 and 2 * shared > min(_span(a), _span(b))


def overlaps(a: Candidate, b: Candidate) -> bool:
    """Rule 3's test: would ``a`` and ``b`` show the reader the same lines?"""
    return _overlaps(a, b)


def fuller_forms(cands: Iterable[Candidate], kept: Iterable[Candidate]) -> dict[str, Candidate]:
    """For each kept outline (``macro``), the best body (``micro``) of its entity that rule 2 merged into
    it, by the kept outline's fragment id. History (``cold``) has no fuller form: it is another time."""
    kept = list(kept)
    outlines = {c.entity: c for c in kept if c.lod == "macro" and c.tier != "cold"}
    placed = {c.fragment for c in kept}
    out: dict[str, Candidate] = {}
    for c in sorted(cands, key=rank_key):
        head = outlines.get(c.entity)
        if head is not None and c.lod == "micro" and c.tier != "cold" and c.fragment not in placed \
                and head.fragment not in out:
            out[head.fragment] = c
    return out


def dedupe(cands: Iterable[Candidate]) -> list[Candidate]:
    """Keep one candidate per fragment, per entity and per region of a file; best first."""
    seen_fragments: set[str] = set()
    seen_entities: set[str] = set()
    kept_by_path: dict[str, list[Candidate]] = {}
    kept_texts: set[str] = set()
    kept: list[Candidate] = []
    for c in sorted(cands, key=rank_key):
        if c.fragment in seen_fragments or c.entity in seen_entities:
            continue
        if any(_overlaps(c, k) for k in kept_by_path.get(c.path, ())):
            continue
        if c.tier == "cold" and c.text in kept_texts:
            continue
        kept_texts.add(c.text)
        seen_fragments.add(c.fragment)
        seen_entities.add(c.entity)
        kept_by_path.setdefault(c.path, []).append(c)
        kept.append(c)
    return kept
