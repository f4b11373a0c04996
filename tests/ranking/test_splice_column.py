"""A string column (``acms.index.string_column``): an updated one holds each kept row's old string and each redone row's new one, whatever
runs the kept rows form."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from acms.index import string_column
from acms.index.string_column import StringColumn
from acms.ranking.index import FragmentPlace, ids_array
from acms.ranking.splice import _frag_ids

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


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 99), max_size=12), st.data())
def test_rows_of_one_width_are_each_kept_or_redone_row(values: list[int], data: st.DataObject) -> None:
    """``spliced_rows`` (numbers, pairs of numbers, byte strings), a run at a time or gathered."""
    pick = st.integers(-1, len(values) - 1) if values else st.just(-1)
    source = data.draw(st.lists(pick, max_size=15))
    redone = data.draw(st.lists(st.integers(100, 199), min_size=source.count(-1), max_size=source.count(-1)))
    fresh = iter(redone)
    expected = [values[s] if s >= 0 else next(fresh) for s in source]
    for many in (string_column.MANY_RUNS, 0):
        string_column.MANY_RUNS, before = many, string_column.MANY_RUNS
        try:
            src = np.asarray(source, dtype=np.int64)
            flat = string_column.spliced_rows(np.asarray(values, dtype=np.int64), src, np.asarray(redone, dtype=np.int64))
            pairs = string_column.spliced_rows(np.asarray([[v, -v] for v in values], dtype=np.int64).reshape(-1, 2), src,
                                               np.asarray([[v, -v] for v in redone], dtype=np.int64).reshape(-1, 2))
            words = string_column.spliced_rows(np.asarray([b"x" * (v % 7) for v in values], dtype=np.bytes_), src,
                                               np.asarray([b"y" * (v % 5) for v in redone], dtype=np.bytes_))
        finally:
            string_column.MANY_RUNS = before
        assert flat.tolist() == expected
        assert pairs.tolist() == [[v, -v] for v in expected]
        assert words.tolist() == [(b"x" * (v % 7)) if v < 100 else (b"y" * (v % 5)) for v in expected]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab#/", max_size=8), max_size=10), st.data())
def test_spliced_fragment_ids_are_those_made_from_every_id(ids: list[str], data: st.DataObject) -> None:
    """The ranking index's fragment IRIs after an update: the array ``ids_array`` makes of them all, as
    wide as the longest (also when the longest ones were dropped)."""
    pick = st.integers(-1, len(ids) - 1) if ids else st.just(-1)
    source = data.draw(st.lists(pick, max_size=12))
    redone = data.draw(st.lists(st.text(alphabet="cd", max_size=5), min_size=source.count(-1),
                                max_size=source.count(-1)))
    fresh = iter(redone)
    expected = ids_array([ids[s] if s >= 0 else next(fresh) for s in source] or [""])
    places = [FragmentPlace(f, "p", 0, 0, 0, "", "", 0, 0) for f in redone]
    got = _frag_ids(ids_array(ids or [""])[: len(ids)], np.asarray(source, dtype=np.int64), places)
    if source:
        assert got.dtype == expected.dtype and got.tolist() == expected.tolist()
