"""A string column (``acms.index.string_column``): an updated one holds each kept row's old string and each redone row's new one, whatever
runs the kept rows form."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from acms.index import string_column
from acms.index.string_column import StringColumn

WORDS = st.text(alphabet=st.sampled_from("ab_é€\n"), max_size=5)
OPTIONAL = st.none() | WORDS


@settings(max_examples=300, deadline=None)
@given(st.lists(OPTIONAL, max_size=12), st.data())
def test_each_row_holds_its_kept_or_redone_string(words: list[str | None], data: st.DataObject) -> None:
    old = StringColumn.of(words)
    pick = st.integers(-1, len(words) - 1) if words else st.just(-1)
    source = data.draw(st.lists(pick, max_size=15))
    redone = data.draw(st.lists(OPTIONAL, min_size=source.count(-1), max_size=source.count(-1)))
    fresh = iter(redone)
    expected = [words[s] if s >= 0 else next(fresh) for s in source]
    for many in (string_column.MANY_RUNS, 0):  # copied a run at a time, or gathered through an index
        string_column.MANY_RUNS, before = many, string_column.MANY_RUNS
        try:
            column = old.spliced(np.asarray(source, dtype=np.int64), redone)
        finally:
            string_column.MANY_RUNS = before
        assert [column[i] for i in range(len(column))] == expected == column.tolist() == list(column)
        assert (column.nulls is not None) == (None in expected)  # no mask when nothing is None


@settings(max_examples=200, deadline=None)
@given(st.lists(OPTIONAL, max_size=12))
def test_a_saved_column_loads_as_it_was(tmp_path_factory: object, words: list[str | None]) -> None:
    folder = tmp_path_factory.mktemp("column")  # type: ignore[attr-defined]
    StringColumn.of(words).save(folder, "names")
    loaded = StringColumn.load(folder, "names")
    assert loaded.tolist() == words and len(loaded) == len(words)
    assert [loaded[i] for i in range(-len(words), 0)] == words


@settings(max_examples=200, deadline=None)
@given(st.lists(OPTIONAL, max_size=12), st.data())
def test_rows_taken_together_are_the_rows_one_by_one(words: list[str | None], data: st.DataObject) -> None:
    column = StringColumn.of(words)
    rows = data.draw(st.lists(st.integers(0, len(words) - 1), max_size=15)) if words else []
    assert column.take(np.asarray(rows, dtype=np.int64)) == [column[i] for i in rows] == [words[i] for i in rows]
