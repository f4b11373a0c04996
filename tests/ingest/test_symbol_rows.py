"""The symbol table a run leaves for the next: read back as written, for its graph state only, and
never a wrong table (a name holding a separator leaves none: the next run reads the store)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from acms.ingest.symbols import SymbolRows, choose

names = st.text(min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(rows=st.dictionaries(names, st.tuples(names, names), max_size=8))
def test_saved_rows_load_as_written_or_not_at_all(tmp_path_factory, rows: dict[str, tuple[str, str]]) -> None:
    cache = tmp_path_factory.mktemp("symbols")
    SymbolRows("run-1", rows).save(cache)
    loaded = SymbolRows.load(cache, "run-1")
    fields = [f for e, (qn, kind) in rows.items() for f in (e, qn, kind)]
    held = any("\x1e" in f or "\x1f" in f or not _encodable(f) for f in fields)
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
