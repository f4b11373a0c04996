"""The symbol table a run leaves for the next: read back as written, for its graph state only, and
never a wrong table (a name holding a separator leaves none: the next run reads the store)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acms.ingest import symbols
from acms.ingest.symbols import SymbolRows, choose

names = st.text(min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(rows=st.dictionaries(names, st.tuples(names, names), max_size=8))
def test_saved_rows_load_as_written_or_not_at_all(tmp_path_factory, rows: dict[str, tuple[str, str]]) -> None:
    cache = tmp_path_factory.mktemp("symbols")
    SymbolRows("run-1", rows).save(cache)
    loaded = SymbolRows.load(cache, "run-1")
    fields = [f for e, (qn, kind) in rows.items() for f in (e, qn, kind)]
    held = any(not _encodable(f) for f in fields)
    assert loaded is None if held else loaded is not None and loaded.rows == rows


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def test_a_table_of_another_state_is_not_used(tmp_path: Path) -> None:
    SymbolRows("run-1", {"e": ("pkg.f", "Function")}).save(tmp_path)
    assert SymbolRows.load(tmp_path, "run-2") is None
    assert SymbolRows.load(tmp_path, "") is None


def test_the_table_picks_one_entity_per_name_in_any_order() -> None:
    rows = [("urn:a", "m.f", "Function"), ("urn:b", "m.f", "Method"), ("urn:b", "m.g", "Class")]
    for ordered in (rows, rows[::-1]):
        table = choose(ordered)
        assert table["m.f"][0].value == "urn:b" and table.kinds() == {"m.f": "Method", "m.g": "Class"}
        assert dict(table.items()) == {qn: table[qn] for qn in table}


qnames = st.sampled_from(["m", "m.f", "m.g", "pkg.m", "pkg.m.C", "pkg.m.C.f"])
kinds = st.sampled_from(["Module", "Function", "Class", "Method"])
entities = st.sampled_from([f"urn:e{i}" for i in range(12)])
row_maps = st.dictionaries(entities, st.tuples(qnames, kinds), max_size=12)


@settings(max_examples=80, deadline=None)
@given(first=row_maps, runs=st.lists(st.tuples(st.sets(entities), row_maps), min_size=1, max_size=4),
       queries=st.sampled_from([None, 0, 2]))
def test_a_kept_table_after_updates_is_the_table_of_its_rows(tmp_path_factory, first: dict[str, tuple[str, str]],
                                                             runs: list[tuple[set[str], dict[str, tuple[str, str]]]],
                                                             queries: int | None) -> None:
    """Runs in a row, each loading the last one's table, dropping and adding rows, saving: every name
    looked up, and every row, is what a table made whole from the same rows holds (shared names too).
    ``queries``: names asked one query each before the table reads every row (None: never)."""
    with pytest.MonkeyPatch.context() as patch:
        if queries is not None:
            patch.setattr(symbols, "READ_WHOLE_FROM", queries)
            patch.setattr(symbols, "QUERY_COST", 10**9)
        _kept_table_runs(tmp_path_factory, first, runs)


def _kept_table_runs(tmp_path_factory, first: dict[str, tuple[str, str]],
                     runs: list[tuple[set[str], dict[str, tuple[str, str]]]]) -> None:
    cache = tmp_path_factory.mktemp("kept")
    SymbolRows("run-0", first).save(cache)
    want = dict(first)
    for i, (dropped, added) in enumerate(runs):
        loaded = SymbolRows.load(cache, f"run-{i}")
        assert loaded is not None
        got = loaded.replaced(dropped, added)
        for entity in dropped:
            want.pop(entity, None)
        want.update(added)
        whole = choose((e, qn, kind) for e, (qn, kind) in want.items())
        table = got.table()
        for qn in ["m", "m.f", "m.g", "pkg.m", "pkg.m.C", "pkg.m.C.f", "absent"]:
            assert table.get(qn) == whole.get(qn) and (qn in table.kinds()) == (qn in whole.kinds())
            assert table.kinds().get(qn) == whole.kinds().get(qn)
        assert dict(table.kinds()) == whole.kinds() and dict(got.rows) == want
        SymbolRows(f"run-{i + 1}", got.rows).save(cache)  # as the index run leaves it
        assert SymbolRows.load(cache, f"run-{i}") is None
    final = SymbolRows.load(cache, f"run-{len(runs)}")
    assert final is not None and dict(final.rows) == want


def test_an_update_changes_the_saved_table_in_place(tmp_path: Path) -> None:
    """A run's few rows go into the file the last run left (not a new file of every row), and only
    while that file is still of the state they were loaded at."""
    rows = {f"urn:e{i}": (f"m.f{i}", "Function") for i in range(1000)}
    SymbolRows("run-1", rows).save(tmp_path)
    before = (tmp_path / "symbols.db").stat().st_ino
    loaded = SymbolRows.load(tmp_path, "run-1")
    assert loaded is not None
    SymbolRows("run-2", loaded.replaced(["urn:e1"], {"urn:new": ("m.new", "Class")}).rows).save(tmp_path)
    assert (tmp_path / "symbols.db").stat().st_ino == before
    again = SymbolRows.load(tmp_path, "run-2")
    assert again is not None and again.table()["m.new"][0].value == "urn:new" and "m.f1" not in again.table()
    assert len(again.rows) == 1000
    # a table saved meanwhile by another run is not updated with rows of an older state: written whole
    stale = SymbolRows.load(tmp_path, "run-2")
    assert stale is not None
    SymbolRows("run-3", {"urn:x": ("x", "Module")}).save(tmp_path)
    SymbolRows("run-4", stale.replaced([], {"urn:y": ("y", "Module")}).rows).save(tmp_path)
    last = SymbolRows.load(tmp_path, "run-4")
    want = {e: v for e, v in rows.items() if e != "urn:e1"} | {"urn:new": ("m.new", "Class"), "urn:y": ("y", "Module")}
    assert last is not None and dict(last.rows) == want
