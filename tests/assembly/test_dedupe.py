"""Dedupe: one fragment per id, per entity and per region of a file; independent of input order."""

from __future__ import annotations

import random
from dataclasses import replace

from acms.assembly.dedupe import dedupe
from acms.assembly.model import Candidate


def cand(fragment: str, entity: str, score: float, start: int = 1, end: int = 10,
         path: str = "pkg/mod.py", lod: str = "micro") -> Candidate:
    return Candidate(fragment, entity, entity.rsplit("/", 1)[-1], "Function", lod, f"text {fragment}",
                     path, start, end, score, "arce", "test")


def ids(cands: list[Candidate]) -> list[str]:
    return [c.fragment for c in cands]


def test_same_fragment_keeps_highest_score() -> None:
    a, b = cand("f1", "e1", 0.4), cand("f1", "e1", 0.9)
    out = dedupe([a, b])
    assert out == [b]


def test_same_entity_keeps_highest_score() -> None:
    out = dedupe([cand("f1", "e1", 0.5), cand("f2", "e1", 0.7, start=100, end=110)])
    assert ids(out) == ["f2"]


def test_same_entity_tie_prefers_micro_then_macro_then_atomic() -> None:
    atomic = cand("a", "e1", 0.5, lod="atomic", start=1, end=3)
    macro = cand("b", "e1", 0.5, lod="macro", start=1, end=3)
    micro = cand("c", "e1", 0.5, lod="micro", start=1, end=3)
    assert ids(dedupe([atomic, macro, micro])) == ["c"]
    assert ids(dedupe([atomic, macro])) == ["b"]


def test_same_entity_full_tie_is_broken_by_fragment_id() -> None:
    assert ids(dedupe([cand("z", "e1", 0.5), cand("m", "e1", 0.5)])) == ["m"]


def test_method_inside_kept_class_is_dropped() -> None:
    klass = cand("class", "Parser", 0.9, start=1, end=50)
    method = cand("method", "Parser.parse", 0.8, start=10, end=20)
    assert ids(dedupe([method, klass])) == ["class"]


def test_better_method_drops_the_enclosing_class() -> None:
    klass = cand("class", "Parser", 0.5, start=1, end=50)
    method = cand("method", "Parser.parse", 0.8, start=10, end=20)
    assert ids(dedupe([klass, method])) == ["method"]


def test_small_overlap_keeps_both() -> None:
    a = cand("a", "ea", 0.9, start=1, end=10)
    b = cand("b", "eb", 0.8, start=10, end=19)  # one shared line out of ten
    assert ids(dedupe([a, b])) == ["a", "b"]


def test_exactly_half_overlap_keeps_both() -> None:
    a = cand("a", "ea", 0.9, start=1, end=10)
    b = cand("b", "eb", 0.8, start=6, end=15)  # five of ten lines: not more than half
    assert ids(dedupe([a, b])) == ["a", "b"]


def test_different_files_are_not_merged() -> None:
    a = cand("a", "ea", 0.9, path="pkg/a.py")
    b = cand("b", "eb", 0.8, path="pkg/b.py")
    assert ids(dedupe([b, a])) == ["a", "b"]


def test_output_is_ranked_and_independent_of_input_order() -> None:
    cands = [cand(f"f{i}", f"e{i % 7}", round(0.1 * (i % 5), 2), start=i * 3, end=i * 3 + 4,
                  path=f"p{i % 3}.py", lod=("micro", "macro", "atomic")[i % 3]) for i in range(30)]
    expected = dedupe(cands)
    for seed in range(5):
        shuffled = cands[:]
        random.Random(seed).shuffle(shuffled)
        assert dedupe(shuffled) == expected
    scores = [c.score for c in expected]
    assert scores == sorted(scores, reverse=True)
    assert len({c.entity for c in expected}) == len(expected)
    assert dedupe(expected) == expected


def test_fragment_duplicates_with_different_text_are_resolved_deterministically() -> None:
    a = cand("f1", "e1", 0.5)
    b = replace(a, text="other text")
    assert dedupe([a, b]) == dedupe([b, a])


def test_an_outline_and_the_bodies_it_lists_are_both_kept() -> None:
    """A class's outline names its methods without their bodies: no code is shown twice."""
    outline = cand("outline", "Parser", 0.9, lod="macro", start=1, end=50)
    method = cand("method", "Parser.parse", 0.8, start=10, end=20)
    assert ids(dedupe([method, outline])) == ["outline", "method"]
    assert ids(dedupe([replace(outline, score=0.7), method])) == ["method", "outline"]
