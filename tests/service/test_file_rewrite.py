"""A refresh writes a file's triples as a diff (the embedded store's ``rewrite_files``): only the old
quads the new batch lacks go, only the new ones not already there come in, and the graph is the one the
SPARQL deletes and a full load made, quad for quad, history and run records included."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import pytest
from pyoxigraph import NamedNode, Quad

from acms.api import Index
from acms.service.indexing import batch as batch_module
from acms.sparql import catalog
from acms.store.oxigraph import OxigraphStore
from acms.store.protocol import Rewrite
from acms.vocab import GRAPH_META, TIER_COLD, UKO

from ..conftest import copy_of_indexed
from .indexes import edit, every_quad, indexed_project

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SETTINGS: dict[str, Any] = {"record_use": False, "embed_on_index": False}
_TIME = re.compile(r'"[0-9]{4}-[0-9]{2}-[0-9]{2}T[^"]*"\^\^<http://www.w3.org/2001/XMLSchema#dateTime>')
_ONE_LINE = ("pkg/util.py", "return text.strip().lower()", "return text.strip().casefold()")


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One first index that each test copies (same folder name: same IRIs)."""
    root = indexed_project(tmp_path_factory.mktemp("first") / "proj", **SETTINGS)
    return root


def _current(root: Path) -> set[str]:
    """The current triples (hot and warm as one), times and the root folder blanked."""
    with Index.open(root, mode="read", refresh="off", wait=10) as idx, idx.reading() as store:
        return {_TIME.sub('"T"', f"{q.subject} {q.predicate} {q.object}").replace(str(root), "ROOT")
                for q in store.quads() if q.graph_name not in (GRAPH_META, TIER_COLD)}


def _file_triples(root: Path, path: str) -> set[tuple[object, object, object]]:
    """The triples the files' deletes would take: the file node's and those of all that is in the file."""
    with Index.open(root, mode="read", refresh="off", wait=10) as idx, idx.reading() as store:
        quads = [q for q in store.quads() if q.graph_name not in (GRAPH_META, TIER_COLD)]
        file = next(q.subject for q in quads if q.predicate == UKO.path and q.object.value == path)
        inside = {q.subject for q in quads if q.predicate == UKO.inFile and q.object == file} | {file}
        return {(q.subject, q.predicate, q.object) for q in quads if q.subject in inside}


def _history(root: Path) -> set[str]:
    """The cold tier's and the meta graph's quads (versions, run records)."""
    with Index.open(root, mode="read", refresh="off", wait=10) as idx, idx.reading() as store:
        return {str(q) for q in store.quads() if q.graph_name in (GRAPH_META, TIER_COLD)}


def _fresh(root: Path, where: Path) -> set[str]:
    """A first index of a copy of ``root``'s files."""
    copy = where / root.name
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".acms"))
    with Index.open(copy, **SETTINGS) as idx:
        idx.index()
    return {line.replace(str(copy), "ROOT") for line in _current(copy)}


class _Rewrites:
    """What each ``rewrite_files`` call returned (passed through: the real write happens)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.results: list[Rewrite | None] = []
        real = OxigraphStore.rewrite_files

        def counted(store: OxigraphStore, *args: Any, **kwargs: Any) -> Rewrite | None:
            result = real(store, *args, **kwargs)
            self.results.append(result)
            return result

        monkeypatch.setattr(OxigraphStore, "rewrite_files", counted)


def test_a_one_line_change_writes_only_the_quads_that_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Indexed where it is refreshed: a copy moved elsewhere would write its directory tree again."""
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "sample_project", root)
    shutil.copytree(FIXTURES / "polyglot_project", root / "poly")
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
    before, history = _file_triples(root, _ONE_LINE[0]), _history(root)
    rewrites = _Rewrites(monkeypatch)
    asked: list[str] = []
    text = catalog.text
    monkeypatch.setattr(catalog, "text", lambda name: asked.append(name) or text(name))
    edit(root / _ONE_LINE[0], *_ONE_LINE[1:])
    with Index.open(root, **SETTINGS) as idx:
        report = idx.index()
    assert report.files_indexed == 1 and report.versions_archived == 1
    assert "rules/entity-fragment-texts" not in asked  # the old texts come from the quads the diff reads
    after = _file_triples(root, _ONE_LINE[0])
    [done] = rewrites.results
    assert done is not None
    assert done.removed == len(before - after) and done.kept == len(before & after)
    # the file's changed triples, the edited function's old version (cold) and the run's record; not the
    # file's other triples again
    assert len(after - before) <= done.inserted <= len(after - before) + len(_history(root) - history)
    assert done.removed + done.inserted < done.kept
    assert 0 < done.removed < len(before) / 4
    assert _current(root) == _fresh(root, tmp_path / "fresh")


@runtime_checkable
class _Never(Protocol):
    """A capability no store has."""

    def never(self) -> None: ...


def _sparql_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The write as a store without the diff makes it: the files' SPARQL deletes and a load of every new
    quad (``isinstance`` caches a class's answer, so the store's method stays and the check changes)."""
    monkeypatch.setattr(batch_module, "SupportsFileRewrite", _Never)


def _edits(root: Path) -> None:
    """A moved body, a renamed class (every IRI of it and its methods changes), a new and a deleted file."""
    edit(root / "pkg" / "util.py", *_ONE_LINE[1:])
    edit(root / "pkg" / "util.py", "def normalize(", "# a line above moves what follows\n\ndef normalize(")
    mod = root / "pkg" / "mod.py"
    mod.write_text(mod.read_text().replace("Parser", "HeaderParser"))
    (root / "pkg" / "fresh.py").write_text("def fresh():\n    return 1\n")
    (root / "notes.txt").unlink()


def test_renames_moves_additions_and_deletions_give_the_graph_the_sparql_deletes_gave(
        indexed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two copies, the same edits in two runs each: by the diff and by the SPARQL path. Every graph (the
    cold tier's versions, the run records) is the same, and the current one is a first index's."""
    ours, theirs = copy_of_indexed(indexed, tmp_path / "diff"), copy_of_indexed(indexed, tmp_path / "sparql")
    rewrites = _Rewrites(monkeypatch)
    for root in (ours, theirs):
        with monkeypatch.context() as patch:
            if root == theirs:
                _sparql_path(patch)
            _edits(root)
            with Index.open(root, **SETTINGS) as idx:
                idx.index()
            edit(root / "pkg" / "mod.py", "class HeaderParser(Base):", "class HeaderParser(Base):\n    kind = 1\n")
            with Index.open(root, **SETTINGS) as idx:
                idx.index()
    assert len(rewrites.results) == 2 and all(r is not None and r.removed for r in rewrites.results)
    renamed = rewrites.results[0]
    assert renamed is not None and renamed.inserted > renamed.kept  # the renamed class: most of mod.py is new
    assert every_quad(ours) == every_quad(theirs)
    assert _current(ours) == _fresh(ours, tmp_path / "fresh")


class _Failing:
    """The files' old quads, failing after ``after`` of them were taken (removals under way)."""

    def __init__(self, quads: list[Quad], after: int) -> None:
        self.quads, self.after = quads, after

    def __iter__(self) -> Iterator[Quad]:
        for i, q in enumerate(self.quads):
            if i == self.after:
                raise RuntimeError("failed midway through the rewrite")
            yield q


def test_an_error_midway_through_the_rewrite_leaves_the_old_index(indexed: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_of_indexed(indexed, tmp_path)
    old = every_quad(root)
    real = OxigraphStore.rewrite_files

    def failing(store: OxigraphStore, *args: Any, old: list[Quad] | None = None) -> Rewrite | None:
        quads = list(old) if old is not None else store.file_quads(args[1])
        return real(store, *args, old=_Failing(quads, len(quads) // 2))

    monkeypatch.setattr(OxigraphStore, "rewrite_files", failing)
    _edits(root)
    with Index.open(root, **SETTINGS) as idx, pytest.raises(RuntimeError, match="midway"):
        idx.index()
    assert every_quad(root) == old
    assert not (root / ".acms" / "run-pending").exists()
    monkeypatch.undo()
    with Index.open(root, **SETTINGS) as idx:
        assert idx.index().files_indexed >= 2
    assert _current(root) == _fresh(root, tmp_path / "fresh")


KILLER = """
import os, signal, sys
from acms.api import Index
from acms.store.oxigraph import OxigraphStore

real = OxigraphStore.rewrite_files

def killing(store, *args, old=None):
    quads = list(old) if old is not None else store.file_quads(args[1])
    def taken():
        for i, q in enumerate(quads):
            if i == len(quads) // 2:
                os.kill(os.getpid(), signal.SIGKILL)
            yield q
    return real(store, *args, old=taken())

OxigraphStore.rewrite_files = killing
with Index.open(sys.argv[1], record_use=False, embed_on_index=False, wait=10) as idx:
    idx.index()
print("finished")
"""


def test_kill_9_midway_through_the_rewrite_leaves_the_old_index(indexed: Path, tmp_path: Path) -> None:
    """A real process killed with half the old quads removed: readers see the old index, and the
    next run rolls back and lands the change."""
    root = copy_of_indexed(indexed, tmp_path)
    old = every_quad(root)
    _edits(root)
    proc = subprocess.run([sys.executable, "-c", KILLER, str(root)], check=False, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL, (proc.stdout, proc.stderr)
    assert (root / ".acms" / "run-pending").exists()
    assert every_quad(root) == old
    with Index.open(root, **SETTINGS) as idx:
        assert idx.index().files_indexed >= 2
    assert not (root / ".acms" / "run-pending").exists()
    assert _current(root) == _fresh(root, tmp_path / "fresh")


def test_outside_an_index_run_the_files_go_in_one_update(tmp_path: Path) -> None:
    """Without the run's bracket (a store in memory) the diff is not taken: the one-update replace."""
    store = OxigraphStore(None)
    file, other = NamedNode("https://w3id.org/acms/id/p/file/a.py"), NamedNode("https://w3id.org/acms/id/p/code/a.py#f")
    graph = NamedNode("https://w3id.org/acms/tier/warm")
    store.load([Quad(file, UKO.path, UKO.x, graph), Quad(other, UKO.inFile, file, graph), Quad(other, UKO.name, UKO.y, graph)])
    new = [Quad(file, UKO.path, UKO.x, graph)]
    assert store.rewrite_files([], [file], [], new) is None
    assert set(store.quads()) == set(new)
