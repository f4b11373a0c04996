"""A one-file refresh does what the change needs and no more, and leaves what a first index leaves:
each test undoes nothing by timing, it counts what the refresh read, compiled or wrote."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from acms.api import Index
from acms.ingest import symbols as symbols_module
from acms.ingest.symbols import SymbolRows
from acms.retrieval.segment import Segment
from acms.service.freshness import last_run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SETTINGS: dict[str, Any] = {"record_use": False}


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One first index (caches, segment, vectors, symbol table) that each test copies."""
    root = tmp_path_factory.mktemp("first") / "proj"
    shutil.copytree(FIXTURES / "sample_project", root)
    shutil.copytree(FIXTURES / "polyglot_project", root / "poly")
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
    return root


@pytest.fixture
def project(indexed: Path, tmp_path: Path) -> Path:
    root = tmp_path / indexed.name  # the same name: the same IRIs
    shutil.copytree(indexed, root)
    return root


class _Calls:
    """Calls of one function, passed through to it (the real work still happens)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> None:
        self.args: list[tuple[Any, ...]] = []
        real: Callable[..., Any] = getattr(owner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.args.append(args)
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)

    def __len__(self) -> int:
        return len(self.args)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.args)


def test_the_vectors_update_takes_the_segment_the_text_caches_built(project: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    loads = _Calls(monkeypatch, Segment, "load")
    _edit(project / "pkg" / "util.py", "return text.strip().lower()", "return text.strip().casefold()")
    with Index.open(project, **SETTINGS) as idx:
        report = idx.index()
    assert report.files_indexed == 1 and report.embedded
    assert len(loads) == 1  # the segment of the state before, updated; the vectors' update does not load it again


def test_linking_one_file_reads_only_the_names_it_looks_up(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The symbol table the last run left is asked for names, not read whole, and the run leaves the
    next one by changing the edited file's rows in place; it is then the store's table."""
    tables = _Calls(monkeypatch, symbols_module, "choose")
    _edit(project / "pkg" / "util.py", "def join_parts(", "def join_all(")
    _edit(project / "pkg" / "mod.py", "util.join_parts(", "util.join_all(")
    saved = project / ".acms" / "cache" / symbols_module.FILE
    inode = saved.stat().st_ino
    with Index.open(project, **SETTINGS) as idx:
        report = idx.index()
        assert report.files_indexed == 2
        assert len(tables) == 0  # no table of every name made
        assert saved.stat().st_ino == inode  # updated in place, not written whole
        with idx.reading() as store:
            run = last_run(store)
            kept = SymbolRows.load(idx.layout.cache, run)
            assert kept is not None and dict(kept.rows) == SymbolRows.from_store(store, run).rows
