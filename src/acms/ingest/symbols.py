"""The project's symbol table (qualified name -> entity and class), kept beside the caches.

Linking a changed file resolves its calls, imports and bases against every symbol of the project.
Reading them from the store (``ingest/qualified-names.rq``) cost 1.5-3 s a standard library for
every run, whatever it changed; so a run leaves the table it linked against in ``cache/symbols.db``,
keyed by the graph state it made, and the next run takes it, drops the replaced files' entities and
adds the new ones. A table of another state is not trusted: the store is read again.

The table is an SQLite file (the standard library's, a table indexed by entity and by name): a run
that changed a few files asks it for the few hundred names their links look up, and leaves the next
state by deleting and inserting those files' rows in one transaction. Held as one file read and
written whole, a standard library's 71k rows cost ~0.15 s a run (read ~60 ms, the table of names
~40 ms, written ~45 ms) whatever the run changed. A first index writes it whole.

A name two entities share (two folders with a module ``util``) goes to the one with the greatest IRI,
whatever order rows come in: the one whose path sorts last, as a first index that writes files in
path order leaves it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import ItemsView, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pyoxigraph import NamedNode

from acms.sparql import catalog
from acms.store.protocol import GraphStore

__all__ = ["SymbolRows", "SymbolTable", "choose", "wins"]

FORMAT = "acms.symbols/3"
FILE = "symbols.db"
OLDER = ("symbols.tsv", "symbols.json")  # what older versions left: read once, then replaced
TSV_FORMAT = "acms.symbols/2"
# A kept table looks names up one query each until it asked READ_WHOLE_FROM of them and their cost reaches
# reading every row once: a row read whole costs about 1/QUERY_COST of a query (measured on the standard library).
READ_WHOLE_FROM = 1000
QUERY_COST = 6
FIELD, RECORD = "\x1f", "\x1e"  # the older file's separators


def wins(entity: str, kind: str, held: tuple[str, str] | None) -> bool:
    """Whether (entity, kind) takes a name ``held`` by (entity, kind): the greatest IRI, and for one
    entity of several classes the first class by name, so any order of rows gives one table."""
    return held is None or entity > held[0] or (entity == held[0] and kind < held[1])


def choose(rows: Iterable[tuple[str, str, str]]) -> SymbolTable:
    """Qualified name -> (entity, class local name) of (entity IRI, qualified name, class) rows."""
    best: dict[str, tuple[str, str]] = {}
    for entity, qn, kind in rows:
        if wins(entity, kind, best.get(qn)):
            best[qn] = (entity, kind)
    return SymbolTable(best)


class SymbolTable(Mapping[str, tuple[NamedNode, str]]):
    """Qualified name -> (entity, class local name), the entity made a term only when looked up."""

    def __init__(self, best: dict[str, tuple[str, str]]) -> None:
        self._best = best

    def __getitem__(self, qn: str) -> tuple[NamedNode, str]:
        entity, kind = self._best[qn]
        return NamedNode(entity), kind

    def __iter__(self) -> Iterator[str]:
        return iter(self._best)

    def __len__(self) -> int:
        return len(self._best)

    def kinds(self) -> dict[str, str]:
        """Qualified name -> class local name, without making any term."""
        return {qn: kind for qn, (_, kind) in self._best.items()}


def entity_rows(rows: Iterable[tuple[str, str, str]]) -> dict[str, tuple[str, str]]:
    """Entity IRI -> (qualified name, class) of (entity, qualified name, class) rows, by the same rule."""
    found: dict[str, tuple[str, str]] = {}
    for entity, qn, kind in rows:
        held = found.get(entity)
        if held is None or kind < held[1]:
            found[entity] = (qn, kind)
    return found


class _Kinds(Mapping[str, str]):
    """Qualified name -> class local name of a kept table, looked up by name (the Python resolver asks
    for a few hundred; only a tree-sitter file's resolver walks them all)."""

    def __init__(self, table: _KeptTable) -> None:
        self._table = table

    def __getitem__(self, qn: str) -> str:
        return self._table.best(qn)[1]

    def __contains__(self, qn: object) -> bool:
        return isinstance(qn, str) and self._table.held(qn) is not None

    def get(self, qn: str, default: str | None = None) -> str | None:  # type: ignore[override]
        held = self._table.held(qn)
        return default if held is None else held[1]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table.whole().kinds())

    def __len__(self) -> int:
        return len(self._table.whole())


class _Db:
    """The saved table: one SQLite file, for the graph state ``run`` it was loaded at."""

    def __init__(self, path: Path, conn: sqlite3.Connection, run: str) -> None:
        self.path, self.conn, self.run = path, conn, run

    @classmethod
    def open(cls, path: Path, run: str) -> _Db | None:
        """The file at ``path`` if it is the table of graph state ``run``."""
        if not run or not path.is_file():
            return None
        try:
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
            try:
                meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            except sqlite3.Error:
                conn.close()
                return None
        except (sqlite3.Error, ValueError):
            return None
        if meta.get("format") != FORMAT or meta.get("run") != run:
            conn.close()
            return None
        return cls(path, conn, run)

    def named(self, qn: str) -> list[tuple[str, str]]:
        return self.conn.execute("SELECT entity, kind FROM symbols WHERE qn = ?", (qn,)).fetchall()

    def row(self, entity: str) -> tuple[str, str] | None:
        found = self.conn.execute("SELECT qn, kind FROM symbols WHERE entity = ?", (entity,)).fetchone()
        return None if found is None else (found[0], found[1])

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM symbols").fetchone()[0])

    def rows(self) -> Iterator[tuple[str, str, str]]:
        """Every row, fetched at once (no read left open while the same process writes the file)."""
        return iter(self.conn.execute("SELECT entity, qn, kind FROM symbols").fetchall())


class _KeptRows(Mapping[str, tuple[str, str]]):
    """Entity IRI -> (qualified name, class): the saved table's rows, less ``dropped``, with ``added``
    (which win over both); what a run changed is all it holds in memory."""

    def __init__(self, db: _Db, dropped: frozenset[str] = frozenset(),
                 added: dict[str, tuple[str, str]] | None = None) -> None:
        self.db, self.dropped, self.added = db, dropped, added or {}

    def __getitem__(self, entity: str) -> tuple[str, str]:
        if entity in self.added:
            return self.added[entity]
        found = None if entity in self.dropped else self.db.row(entity)
        if found is None:
            raise KeyError(entity)
        return found

    def __iter__(self) -> Iterator[str]:
        for entity, _, _ in self.db.rows():
            if entity not in self.dropped and entity not in self.added:
                yield entity
        yield from self.added

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def items(self) -> ItemsView[str, tuple[str, str]]:  # type: ignore[override]
        """Every row in one pass over the file (not a lookup per entity)."""
        return {e: (qn, kind) for e, qn, kind in self.items_rows()}.items()

    def items_rows(self) -> Iterator[tuple[str, str, str]]:
        """(entity, qualified name, class) of every row, in one pass over the file."""
        for entity, qn, kind in self.db.rows():
            if entity not in self.dropped and entity not in self.added:
                yield entity, qn, kind
        for entity, (qn, kind) in self.added.items():
            yield entity, qn, kind


class _KeptTable(Mapping[str, tuple[NamedNode, str]]):
    """The table of names of kept rows, each name's winner found when it is looked up."""

    def __init__(self, rows: _KeptRows) -> None:
        self._rows = rows
        self._by_name: dict[str, list[tuple[str, str]]] = {}
        for entity, (qn, kind) in rows.added.items():
            self._by_name.setdefault(qn, []).append((entity, kind))
        self._held: dict[str, tuple[str, str] | None] = {}
        self._whole: SymbolTable | None = None
        self._asked = 0  # names looked up in the file, one query each
        self._stored: dict[str, list[tuple[str, str]]] | None = None  # every kept row by name, once read whole
        self._rows_in_file: int | None = None

    def held(self, qn: str) -> tuple[str, str] | None:
        """(entity IRI, class) that holds ``qn``, by the rule of :func:`wins`; None for no entity."""
        if qn in self._held:
            return self._held[qn]
        best: tuple[str, str] | None = None
        for entity, kind in [*self._stored_named(qn), *self._by_name.get(qn, ())]:
            if wins(entity, kind, best):
                best = (entity, kind)
        self._held[qn] = best
        return best

    def _stored_named(self, qn: str) -> list[tuple[str, str]]:
        """The kept rows of the file named ``qn``. One query each, until the queries cost as much as reading
        every row once (a query ~7 µs; the standard library's 71k rows, read and grouped by name, ~0.1 s),
        so a run pays at most about twice the cheaper of the two without knowing ahead how many it asks: a
        300-file branch switch asked ~27k names (0.2 s), one edited file asks a few hundred."""
        rows = self._rows
        if self._stored is None and self._asked >= READ_WHOLE_FROM and self._asked * QUERY_COST >= self._size():
            self._stored = {}
            for entity, name, kind in rows.db.rows():
                if entity not in rows.dropped and entity not in rows.added:
                    self._stored.setdefault(name, []).append((entity, kind))
        if self._stored is not None:
            return self._stored.get(qn, [])
        self._asked += 1
        return [r for r in rows.db.named(qn) if r[0] not in rows.dropped and r[0] not in rows.added]

    def _size(self) -> int:
        if self._rows_in_file is None:
            self._rows_in_file = self._rows.db.count()
        return self._rows_in_file

    def best(self, qn: str) -> tuple[str, str]:
        held = self.held(qn)
        if held is None:
            raise KeyError(qn)
        return held

    def __getitem__(self, qn: str) -> tuple[NamedNode, str]:
        entity, kind = self.best(qn)
        return NamedNode(entity), kind

    def __contains__(self, qn: object) -> bool:
        return isinstance(qn, str) and self.held(qn) is not None

    def whole(self) -> SymbolTable:
        """Every name's winner at once (iterating: a tree-sitter resolver lists the methods)."""
        if self._whole is None:
            self._whole = choose(self._rows.items_rows())
        return self._whole

    def __iter__(self) -> Iterator[str]:
        return iter(self.whole())

    def __len__(self) -> int:
        return len(self.whole())

    def kinds(self) -> Mapping[str, str]:
        return _Kinds(self)


@dataclass
class SymbolRows:
    """Entity IRI -> (qualified name, class local name), for graph state ``run``: a dict, or the rows
    of the table a run left, as ``load`` gives them (read as they are asked for)."""

    run: str
    rows: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def from_store(cls, store: GraphStore, run: str) -> SymbolRows:
        rows = store.select(catalog.text("ingest/qualified-names"))
        return cls(run, entity_rows((r["entity"].value, str(r["qn"].value), r["kind"].value.rsplit("#", 1)[-1])
                                    for r in rows if isinstance(r["entity"], NamedNode)))

    @classmethod
    def load(cls, cache: Path, run: str) -> SymbolRows | None:
        """The table a run left for graph state ``run``; None when there is none, or it is of another."""
        db = _Db.open(cache / FILE, run)
        if db is not None:
            return cls(run, _KeptRows(db))
        return cls._load_older(cache, run)

    @classmethod
    def _load_older(cls, cache: Path, run: str) -> SymbolRows | None:
        """The file older versions left (fields joined by control characters), read whole."""
        try:
            head, _, body = (cache / OLDER[0]).read_bytes().decode("utf-8").partition(RECORD)
            if head != f"{TSV_FORMAT}{FIELD}{run}" or not run:
                return None
            fields = body.replace(RECORD, FIELD).split(FIELD) if body else []
            if len(fields) % 3:
                return None
            return cls(run, dict(zip(fields[0::3], zip(fields[1::3], fields[2::3], strict=True), strict=True)))
        except (OSError, ValueError):
            return None

    def save(self, cache: Path) -> None:
        """Whole or not at all; where it cannot be written the next run reads the store instead. Rows
        loaded from the table of the state before (``load``, then ``replaced``) change only the rows
        they dropped and added, in one transaction."""
        target = cache / FILE
        rows = self.rows
        try:
            for older in OLDER:
                (cache / older).unlink(missing_ok=True)
            if isinstance(rows, _KeptRows) and rows.db.path == target and self._update(rows):
                return
            self._write_whole(target)
        except (OSError, sqlite3.Error, UnicodeEncodeError):
            try:
                target.unlink(missing_ok=True)
            except OSError:
                pass

    def _update(self, rows: _KeptRows) -> bool:
        """Apply what changed to the table the rows were loaded from, if it is still of their state."""
        conn = sqlite3.connect(rows.db.path, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            (held,) = conn.execute("SELECT value FROM meta WHERE key = 'run'").fetchone() or ("",)
            if held != rows.db.run:
                conn.execute("ROLLBACK")
                return False
            # The dropped rows not added again go; an added row is written only where it differs from the
            # stored one: a branch switch drops and adds back ~12k entities, most of them as they were
            # (deleting and inserting each, its name index too, cost ~0.2 s)
            gone = [(e,) for e in rows.dropped if e not in rows.added]
            conn.executemany("DELETE FROM symbols WHERE entity = ?", gone)
            conn.executemany("INSERT INTO symbols (entity, qn, kind) VALUES (?, ?, ?) ON CONFLICT (entity) DO UPDATE"
                             " SET qn = excluded.qn, kind = excluded.kind"
                             " WHERE qn != excluded.qn OR kind != excluded.kind",
                             ((e, qn, kind) for e, (qn, kind) in rows.added.items()))
            conn.execute("UPDATE meta SET value = ? WHERE key = 'run'", (self.run,))
            conn.execute("COMMIT")
            rows.db.conn.close()  # of the state before: done with
            return True
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            conn.close()

    def _write_whole(self, target: Path) -> None:
        """A new file beside the old one, then put in its place (a reader sees the old table or the new)."""
        rows = self.rows
        # in key order: the table's B-tree is filled from left to right (~2x faster for 71k rows)
        triples = sorted(rows.items_rows() if isinstance(rows, _KeptRows) else ((e, qn, k) for e, (qn, k) in rows.items()))
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("PRAGMA journal_mode = OFF")
            conn.execute("PRAGMA synchronous = OFF")  # a new file, put in place only once complete
            conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            conn.execute("CREATE TABLE symbols (entity TEXT PRIMARY KEY, qn TEXT NOT NULL, kind TEXT NOT NULL)"
                         " WITHOUT ROWID")
            conn.executemany("INSERT INTO symbols (entity, qn, kind) VALUES (?, ?, ?)", triples)
            conn.execute("CREATE INDEX symbols_qn ON symbols (qn)")
            conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", [("format", FORMAT), ("run", self.run)])
            conn.commit()
        except BaseException:
            conn.close()
            tmp.unlink(missing_ok=True)
            raise
        conn.close()
        os.replace(tmp, target)

    def replaced(self, dropped: Iterable[str], added: Mapping[str, tuple[str, str]]) -> SymbolRows:
        """These rows without the ``dropped`` entities, with the ``added`` ones (a run's files)."""
        gone = set(dropped)
        rows = self.rows
        if isinstance(rows, _KeptRows):
            kept = {e: v for e, v in rows.added.items() if e not in gone}
            kept.update(added)
            return SymbolRows(self.run, _KeptRows(rows.db, rows.dropped | gone, kept))
        copied = dict(rows)
        for entity in gone:
            copied.pop(entity, None)
        copied.update(added)
        return SymbolRows(self.run, copied)

    def table(self) -> SymbolTable | _KeptTable:
        if isinstance(self.rows, _KeptRows):
            return _KeptTable(self.rows)
        return choose((e, qn, kind) for e, (qn, kind) in self.rows.items())
