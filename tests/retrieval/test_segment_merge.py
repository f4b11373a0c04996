"""An update's merge of a segment's kept rows and its new ones: fragment order, whether every fragment
still has one row (what lets the caches be spliced), and the same after a save and a load."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from acms.arrays import distinct
from acms.index.string_column import StringColumn
from acms.index.token_table import TokenTable
from acms.retrieval.corpus_read import CorpusRow
from acms.retrieval.segment import Segment, merged, rows_named
from acms.retrieval.segment_rows import Places, SegmentRows


def _segment(frags: list[str], table: TokenTable | None = None) -> tuple[Segment, TokenTable]:
    table = table or TokenTable()
    rows = SegmentRows()
    for frag in frags:
        rows.add(CorpusRow(frag, f"text of {frag}", frag, f"pkg.{frag}", 1, 2, "file:a.py"), table)
    segment = rows.segment(rows.order(0, set()), table.lines(), Places({"file:a.py": "a.py"}, {}, {}, {}), [])
    return segment, table


def _merge(old_frags: list[str], keep: list[bool], new_frags: list[str],
           nesting: dict[str, str | None] | None = None) -> Segment:
    old, table = _segment(old_frags)
    new, _ = _segment(new_frags, TokenTable(list(old.text.tokens)))
    segment, fresh = merged(old, np.asarray(keep, dtype=bool), new, nesting or {}, [])
    rows = sorted([(f, False) for f, k in zip(old_frags, keep) if k] + [(f, True) for f in new_frags])
    assert fresh.tolist() == [is_new for _, is_new in rows]  # a new row goes after a kept one of its fragment
    return segment


NAMES = st.sets(st.text(alphabet="abcdef", min_size=1, max_size=4), max_size=12)


@settings(max_examples=150, deadline=None)
@given(NAMES, st.lists(st.booleans(), max_size=12), NAMES)
def test_the_merge_is_in_fragment_order_and_knows_whether_a_fragment_has_two_rows(
        old: set[str], keep: list[bool], new: set[str]) -> None:
    old_frags = sorted(old)
    keep = (keep + [True] * len(old_frags))[: len(old_frags)]
    kept = [f for f, k in zip(old_frags, keep) if k]
    nesting = {frag: (None if i % 2 else f"outline of {frag}") for i, frag in enumerate(kept[:3])}  # read again
    segment = _merge(old_frags, keep, sorted(new), nesting)
    want = sorted(kept + sorted(new))
    assert [segment.nesting[i] for i in range(len(segment))] == [nesting.get(f) for f in want]  # the rest had none
    assert isinstance(segment.frags, StringColumn) and segment.frags.tolist() == want
    assert segment.strict is not None  # known from the merge, not compared again
    assert segment.ordered == (len(set(want)) == len(want))
    assert [segment.names[i] for i in range(len(segment))] == want  # every column in the same order
    asked = sorted(new)[:3] + ["zz"]
    assert rows_named(segment.frags, asked) == [i for i, frag in enumerate(want) if frag in asked]  # both rows of one


def test_an_order_saved_is_the_order_loaded(tmp_path: Path) -> None:
    for keep, new, ordered in (([True, True, True], ["b2"], True), ([True, True, True], ["b"], False),
                               ([True, False, True], ["b"], True)):
        segment = _merge(["a", "b", "c"], keep, new)
        assert segment.ordered is ordered
        saved = segment.save(tmp_path / str(keep) / "".join(new), key="k")
        loaded = Segment.load(tmp_path / str(keep) / "".join(new))
        assert saved.strict is ordered and loaded.strict is ordered and loaded.ordered is ordered
        assert isinstance(loaded.frags, StringColumn) and loaded.frags == segment.frags


@given(st.lists(st.integers(-3, 3), max_size=30))
def test_distinct_is_numpy_s_unique(values: list[int]) -> None:
    array = np.asarray(values, dtype=np.int64)
    assert distinct(array).tolist() == np.unique(array).tolist()
