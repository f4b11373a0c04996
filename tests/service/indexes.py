"""Helpers the index-run tests share: index a project in this process, edit a file in place, read its
graph back in a form two runs can be compared in, and ask whether a reader sees any file."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from acms.config import Settings
from acms.errors import StoreMissing
from acms.service.indexing import IndexReport, index_project
from acms.service.progress import Progress
from acms.store.oxigraph import OxigraphStore
from acms.vocab import GRAPH_META

_TIME = re.compile(r'"[0-9]{4}-[0-9]{2}-[0-9]{2}T[^"]*"\^\^<http://www.w3.org/2001/XMLSchema#dateTime>')
_STAMP = re.compile(r"[0-9]{8}T[0-9]{12}Z")  # a run's stamp (its IRIs' suffix)


def index(root: Path, settings: Settings | None = None, progress: Progress | None = None) -> IndexReport:
    """``index_project`` on ``root``'s own store (no caches: no layout)."""
    store = OxigraphStore(root / ".acms" / "graph")
    try:
        return index_project(root, store, settings or Settings(), progress=progress)
    finally:
        store.close()


def graph(root: Path) -> set[str]:
    """Every quad but the run record, times and the root folder blanked (two runs differ in them only)."""
    store = OxigraphStore(root / ".acms" / "graph", read_only=True)
    try:
        return {_TIME.sub('"T"', str(q)).replace(str(root), "ROOT") for q in store.quads() if q.graph_name != GRAPH_META}
    finally:
        store.close()


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def indexed_project(root: Path, **settings: Any) -> Path:
    """The sample project with the polyglot one inside it (``poly/``) at ``root``, indexed once."""
    from acms.api import Index

    shutil.copytree(FIXTURES / "sample_project", root)
    shutil.copytree(FIXTURES / "polyglot_project", root / "poly")
    with Index.open(root, **settings) as idx:
        idx.index()
    return root


def edit(path: Path, old: str, new: str) -> None:
    """Replace the first ``old`` in the file (which must hold it) by ``new``."""
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def every_quad(root: Path) -> set[str]:
    """Every quad a reader sees, times, run stamps and the root folder blanked (two runs differ only there)."""
    from acms.api import Index

    with Index.open(root, mode="read", refresh="off", wait=10) as idx, idx.reading() as store:
        return {_STAMP.sub("STAMP", _TIME.sub('"T"', str(q))).replace(str(root), "ROOT") for q in store.quads()}


def reader_sees_files(root: Path) -> bool:
    """Whether a reader opening the index now sees any file (it reads a pending run's checkpoint); a
    first index that never finished is no index to it (``StoreMissing``)."""
    try:
        store = OxigraphStore(root / ".acms" / "graph", read_only=True)
    except StoreMissing:
        return False
    try:
        return store.ask("ASK { GRAPH ?g { ?f a uko:File } }")
    finally:
        store.close()
