"""A kept symbol table's update writes only the rows that differ: a run that drops and adds back most of
its files' entities as they were (a branch switch) leaves those rows alone, and the table is the one a
table made whole from the same rows holds."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from acms.ingest.symbols import FILE, SymbolRows


def test_rows_added_back_as_they_were_are_not_written_again(tmp_path: Path) -> None:
    first = {f"urn:e{i}": (f"m.f{i}", "Function") for i in range(20)}
    SymbolRows("run-1", first).save(tmp_path)
    db = sqlite3.connect(tmp_path / FILE)
    db.executescript("""
        CREATE TABLE writes (entity TEXT);
        CREATE TRIGGER on_insert AFTER INSERT ON symbols BEGIN INSERT INTO writes VALUES (new.entity); END;
        CREATE TRIGGER on_update AFTER UPDATE ON symbols BEGIN INSERT INTO writes VALUES (new.entity); END;
        CREATE TRIGGER on_delete AFTER DELETE ON symbols BEGIN INSERT INTO writes VALUES (old.entity); END;
    """)
    db.close()
    loaded = SymbolRows.load(tmp_path, "run-1")
    assert loaded is not None
    # every entity dropped; all but three added back as they were: one renamed, one of another kind, one new
    added = {e: row for e, row in first.items() if e not in ("urn:e3", "urn:e4", "urn:e5")}
    added |= {"urn:e3": ("m.g3", "Function"), "urn:e4": ("m.f4", "Class"), "urn:new": ("m.new", "Method")}
    SymbolRows("run-2", loaded.replaced(first, added).rows).save(tmp_path)  # as a run leaves it
    db = sqlite3.connect(tmp_path / FILE)
    try:
        written = sorted(e for (e,) in db.execute("SELECT entity FROM writes"))
    finally:
        db.close()
    assert written == ["urn:e3", "urn:e4", "urn:e5", "urn:new"]
    again = SymbolRows.load(tmp_path, "run-2")
    assert again is not None and dict(again.rows.items()) == added
