"""What linking reads of each Python module version, kept beside the caches (``cache/link-outlines.db``).

A run that extracts only the changed files resolves their imports, calls and bases through modules it
did not extract (:mod:`acms.ingest.unchanged_modules`): their names, nesting, bases and imports. Those
were parsed again by every such run: a 300-file branch switch of the standard library passed through
315 modules (5.9 MB, ~3.5 s of CPU in two more worker processes), and a one-file refresh in a new
process through the modules that file imports. An outline depends only on the module's text, its
name and whether it is a package's ``__init__``, so each run keeps those of the modules it extracted or
parsed, keyed by the text's content hash (the one the graph and the manifest hold), and the next runs
read them from here.

An SQLite file (the standard library's), one row per module version, written by the index's one
writer; a run that fails leaves rows that are still true of their texts. An outline of another
extractor version is not trusted (the table is emptied), and rows of versions no file has any more are dropped
once they outnumber the live ones.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from os.path import basename
from pathlib import Path

from acms.ingest.model import CodeSymbol, Extraction, ImportRef, SymbolKind
from acms.ingest.python_extractor import INIT_FILES
from acms.ingest.version import extractor_version

__all__ = ["LinkOutlines", "link_outline", "link_outline_key"]

FILE = "link-outlines.db"
FORMAT = "acms.link-outlines/1"  # and the extractor version: an outline of another one is not trusted
PRUNE_FROM = 1000  # rows beyond twice the live ones before the dead are dropped


def link_outline_key(digest: str, module: str, path: str) -> str:
    """The key of a module version: its text's hash, its name, and whether its file is an ``__init__``
    (relative imports resolve from it)."""
    return f"{digest} {module} {int(basename(path) in INIT_FILES)}"


def link_outline(ext: Extraction) -> Extraction:
    """What resolution reads of a module (names, nesting, bases; imports)."""
    return Extraction(language=ext.language, module=ext.module, imports=list(ext.imports), parse_error=ext.parse_error,
                      symbols=[CodeSymbol(kind=s.kind, name=s.name, qualname=s.qualname, start_line=s.start_line,
                                          end_line=s.end_line, signature="", parent=s.parent, bases=list(s.bases))
                               for s in ext.symbols])


def _encoded(ext: Extraction) -> str:
    return json.dumps([ext.language, ext.module, ext.parse_error,
                       [[s.kind.value, s.name, s.qualname, s.start_line, s.end_line, s.parent, s.bases] for s in ext.symbols],
                       [[i.module, i.name, i.alias, i.line] for i in ext.imports]], separators=(",", ":"))


def _decoded(text: str) -> Extraction:
    language, module, error, symbols, imports = json.loads(text)
    return Extraction(language=language, module=module, parse_error=error,
                      symbols=[CodeSymbol(kind=SymbolKind(k), name=n, qualname=q, start_line=a, end_line=b,
                                          signature="", parent=p, bases=bs) for k, n, q, a, b, p, bs in symbols],
                      imports=[ImportRef(m, n, a, line) for m, n, a, line in imports])


class LinkOutlines:
    """The kept outlines of one index; every method is quiet on a file it cannot read or write (the
    modules are then parsed, as without it)."""

    def __init__(self, cache: Path) -> None:
        self._path = cache / FILE
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection | None:
        if self._conn is None:
            try:
                conn = sqlite3.connect(self._path, check_same_thread=False)
                conn.execute("CREATE TABLE IF NOT EXISTS meta (format TEXT NOT NULL)")
                conn.execute("CREATE TABLE IF NOT EXISTS outline (key TEXT PRIMARY KEY, digest TEXT NOT NULL, "
                             "data TEXT NOT NULL) WITHOUT ROWID")
                conn.execute("CREATE INDEX IF NOT EXISTS outline_digest ON outline (digest)")
                held, made = conn.execute("SELECT format FROM meta").fetchone(), f"{FORMAT} {extractor_version()}"
                if held is None or held[0] != made:
                    with conn:
                        conn.execute("DELETE FROM outline")
                        conn.execute("DELETE FROM meta")
                        conn.execute("INSERT INTO meta VALUES (?)", (made,))
                self._conn = conn
            except (sqlite3.Error, OSError):
                return None
        return self._conn

    def get(self, keys: Iterable[str]) -> dict[str, Extraction]:
        """The outlines held of ``keys`` (a key not held is left out)."""
        wanted = list(dict.fromkeys(keys))
        db = self._db() if wanted else None
        if db is None:
            return {}
        out: dict[str, Extraction] = {}
        try:
            for start in range(0, len(wanted), 500):  # SQLite's bound parameters per statement
                part = wanted[start:start + 500]
                marks = ",".join("?" * len(part))
                for key, data in db.execute(f"SELECT key, data FROM outline WHERE key IN ({marks})", part):
                    out[key] = _decoded(data)
        except (sqlite3.Error, ValueError, TypeError):
            return {}
        return out

    def put(self, outlines: Mapping[str, Extraction]) -> None:
        """Keep ``outlines`` (key -> an outline, see ``link_outline``)."""
        db = self._db() if outlines else None
        if db is None:
            return
        try:
            with db:
                db.executemany("INSERT OR REPLACE INTO outline VALUES (?, ?, ?)",
                               [(key, key.split(" ", 1)[0], _encoded(ext)) for key, ext in outlines.items()])
        except sqlite3.Error:
            pass

    def prune(self, live: Iterable[str]) -> None:
        """Drop the rows of texts no file has (``live``: every file's content hash), once they outnumber
        the live ones by ``PRUNE_FROM``."""
        db = self._db()
        if db is None:
            return
        keep = set(live)
        try:
            rows = db.execute("SELECT COUNT(*) FROM outline").fetchone()[0]
            if rows <= 2 * len(keep) + PRUNE_FROM:
                return
            dead = [(d,) for (d,) in db.execute("SELECT DISTINCT digest FROM outline") if d not in keep]
            with db:
                db.executemany("DELETE FROM outline WHERE digest = ?", dead)
        except sqlite3.Error:
            pass

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
