"""A one-file refresh does what the change needs and no more, and leaves what a first index leaves:
each test undoes nothing by timing, it counts what the refresh read, compiled or wrote."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import Literal

from acms.api import Index
from acms.ingest import copies as copies_module
from acms.ingest import emit
from acms.ingest import symbols as symbols_module
from acms.ingest.symbols import SymbolRows
from acms.retrieval.segment import Segment
from acms.service.freshness import Manifest, last_run
from acms.service.indexing.batch import OneBatch
from acms.sparql import catalog
from acms.store.oxigraph import OxigraphStore
from acms.vocab import UKO, IriMinter

from ..conftest import copy_of_indexed
from .indexes import edit, indexed_project

SETTINGS: dict[str, Any] = {"record_use": False}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One first index (caches, segment, vectors, symbol table) that each test copies."""
    root = indexed_project(tmp_path_factory.mktemp("first") / "proj", **SETTINGS)
    return root


@pytest.fixture
def project(indexed: Path, tmp_path: Path) -> Path:
    return copy_of_indexed(indexed, tmp_path)


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
    edit(project / "pkg" / "util.py", "return text.strip().lower()", "return text.strip().casefold()")
    with Index.open(project, **SETTINGS) as idx:
        report = idx.index()
    assert report.files_indexed == 1 and report.embedded
    assert len(loads) == 1  # the segment of the state before, updated; the vectors' update does not load it again


def test_linking_one_file_reads_only_the_names_it_looks_up(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The symbol table the last run left is asked for names, not read whole, and the run leaves the
    next one by changing the edited file's rows in place; it is then the store's table."""
    tables = _Calls(monkeypatch, symbols_module, "choose")
    edit(project / "pkg" / "util.py", "def join_parts(", "def join_all(")
    edit(project / "pkg" / "mod.py", "util.join_parts(", "util.join_all(")
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


def test_a_refresh_reads_only_the_touched_files_rows(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The files the look found unchanged are taken with its hashes; the graph is asked about the edited,
    added and removed files only, and what it holds after is what a full read would find."""
    asked = _Calls(monkeypatch, catalog, "text")
    edit(project / "pkg" / "util.py", "def join_parts(", "def join_all(")  # its callers are relinked
    (project / "pkg" / "fresh.py").write_text("def fresh():\n    return 1\n")
    (project / "notes.txt").unlink()
    with Index.open(project, **SETTINGS) as idx:
        report = idx.index()
        assert report.files_removed == 1 and report.files_relinked >= 1
        names = [args[0] for args in asked]
        assert "ingest/stored-files" not in names and "ingest/stored-files-of" in names
        with idx.reading() as store:
            held = {r["path"].value: r["hash"].value for r in store.select(catalog.text("ingest/stored-files"))}
        manifest = Manifest.load(idx.layout.cache)
        assert manifest is not None and {p: h for p, (_, _, h) in manifest.files.items() if h} == held
        assert "notes.txt" not in held and "pkg/fresh.py" in held
        assert not idx.look().stale


def test_a_quarantined_file_is_no_hash_of_the_manifest(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest's hashes are those the graph holds (a look's unchanged files are taken with them):
    a file left out for its shapes is recorded as not indexed."""
    real = emit.emit_file

    def drop_hash(*args: Any, **kwargs: Any) -> Any:
        batch = real(*args, **kwargs)
        if any(q.object.value == "pkg/util.py" for q in batch.quads if q.predicate == UKO.path):
            batch.quads = [q for q in batch.quads if q.predicate != UKO.contentHash]
        return batch

    monkeypatch.setattr(emit, "emit_file", drop_hash)
    edit(project / "pkg" / "util.py", "return text.strip().lower()", "return text.strip().casefold()")
    with Index.open(project, **SETTINGS) as idx:
        report = idx.index()
        assert list(report.quarantined) == ["pkg/util.py"]
        manifest = Manifest.load(idx.layout.cache)
        assert manifest is not None and manifest.files["pkg/util.py"][2] == ""


def test_the_tree_is_written_again_only_where_it_moves(project: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A body edit leaves the project and directory nodes as they are; a file added writes again only the
    directory it is in, and the tree is then the one a first index writes; the project moved to another
    folder writes every node again (the root path is the new one)."""
    trees: list[emit.TreeWrite | None] = []
    real = OneBatch._tree

    def kept(*args: Any) -> emit.TreeWrite | None:
        trees.append(real(*args))
        return trees[-1]

    monkeypatch.setattr(OneBatch, "_tree", staticmethod(kept))
    tree = "SELECT ?s ?p ?o WHERE { GRAPH ?g { ?s a ?k ; ?p ?o VALUES ?k { uko:Directory uko:Project } } }"
    edit(project / "pkg" / "util.py", "return text.strip().lower()", "return text.strip().casefold()")
    with Index.open(project, **SETTINGS) as idx:
        assert idx.index().files_indexed == 1 and trees[-1] is not None and trees[-1].nodes is None  # a copy: moved
        edit(project / "pkg" / "util.py", "casefold()", "casefold().lower()")
        assert idx.index().files_indexed == 1 and trees[-1] is None
        with idx.reading() as store:
            before = {tuple(r[v] for v in "spo") for r in store.select(tree)}
        (project / "pkg" / "deeper").mkdir()
        (project / "pkg" / "deeper" / "fresh.py").write_text("def fresh():\n    return 1\n")
        assert idx.index().files_indexed == 1
        written = trees[-1]
        assert written is not None and written.quads
        minter = IriMinter.of_iri(written.quads[0].subject.value)
        pkg, deeper = minter.directory("pkg"), minter.directory("pkg/deeper")
        assert written.nodes == [pkg] and {q.subject for q in written.quads} == {pkg, deeper}
        with idx.reading() as store:
            after = {tuple(r[v] for v in "spo") for r in store.select(tree)}
    first = tmp_path / "first"
    shutil.copytree(project, first / project.name, ignore=shutil.ignore_patterns(".acms"))
    with Index.open(first / project.name, **SETTINGS) as idx:
        idx.index()
        with idx.reading() as store:
            fresh = {tuple(r[v] for v in "spo") for r in store.select(tree)}
    root = {(s, p, o) for s, p, o in fresh if p == UKO.rootPath}
    assert after == (fresh - root) | {(s, p, Literal(str(project))) for s, p, _ in root}
    shutil.rmtree(project / "pkg" / "deeper")  # the directory goes with its only file
    with Index.open(project, **SETTINGS) as idx:
        assert idx.index().files_removed == 1
        assert trees[-1] is not None and trees[-1].nodes == [pkg, deeper]
        with idx.reading() as store:
            assert {tuple(r[v] for v in "spo") for r in store.select(tree)} == before
    moved = tmp_path / "elsewhere" / project.name
    moved.parent.mkdir()
    shutil.move(project, moved)
    edit(moved / "pkg" / "util.py", "casefold().lower()", "casefold().strip()")
    with Index.open(moved, **SETTINGS) as idx:
        assert idx.index().files_indexed == 1 and trees[-1] is not None and trees[-1].nodes is None
        with idx.reading() as store:
            roots = {r["root"].value for r in store.select(
                "SELECT ?root WHERE { GRAPH ?g { ?p a uko:Project ; uko:rootPath ?root } }")}
        assert roots == {str(moved)}


def test_copies_are_looked_for_among_the_touched_files_stems_only(project: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Copies are found among files of one stem: a refresh reads the sketches of the stems it touched,
    and finds what a look at every file finds."""
    found = _Calls(monkeypatch, copies_module, "find_copies")
    (project / "other").mkdir()
    shutil.copy(project / "pkg" / "mod.py", project / "other" / "mod.py")  # a copy, elsewhere
    with Index.open(project, **SETTINGS) as idx:
        first = idx.index()
        edit(project / "pkg" / "util.py", "return text.strip().lower()", "return text.strip().casefold()")
        again = idx.index()
        assert again.files_indexed == 1 and again.copies == first.copies >= 1
        assert {copies_module._stem(f.path) for f in found.args[-1][0]} <= {"util"}
        assert idx.index().copies == first.copies  # nothing changed: no sketch read
        assert found.args[-1][0] == []
        with idx.reading() as store:
            listed = {r["path"].value: r["file"] for r in store.select(catalog.text("ingest/stored-files"))}
            whole = copies_module.mark_copies(store, listed, {})  # every file looked at: nothing to change
        assert whole.changed == 0 and whole.copies == first.copies


def test_a_refresh_flushes_the_store_once_when_it_lands(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's bracket flushes what it wrote as it lands (``run_marker.commit``): no phase flushes before."""
    flushes = _Calls(monkeypatch, OxigraphStore, "flush")
    edit(project / "pkg" / "util.py", "return text.strip().lower()", "return text.strip().casefold()")
    with Index.open(project, **SETTINGS) as idx:
        assert idx.index().files_indexed == 1
        assert len(flushes) == 0
        assert not idx.look().stale


def test_a_process_loads_its_lsa_model_once_while_its_files_stay(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server refreshes and answers many times: the LSA model (~25 MB read and checked for a standard
    library) is loaded again only when its files change."""
    from acms.embeddings.lsa import LsaModel

    loads = _Calls(monkeypatch, LsaModel, "load")
    with Index.open(project, **SETTINGS) as idx:
        for i in range(3):
            edit(project / "pkg" / "util.py", "return text.strip()", f"return text.strip() or {i!r} and text.strip()")
            report = idx.index()
            assert report.files_indexed == 1 and report.embedded
        assert len(loads) <= 1
        model = idx.layout.cache_dir("lsa") / "vocabulary.json"
        model.write_text(model.read_text() + "\n")  # the same model in another file: loaded (and checked) again
        edit(project / "pkg" / "util.py", "return text.strip()", "return text.strip() and text.strip()")
        assert idx.index().embedded
        assert len(loads) == 2


def test_the_embedding_takes_the_fragments_the_caches_counted(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole-store count of the searchable fragments (~20 ms a standard library) is made once a
    refresh: the caches' update counts them, and the embedding after it (nothing written between)
    takes that count; the new fragments are still embedded, and none is left without a vector."""
    asked = _Calls(monkeypatch, catalog, "text")
    edit(project / "pkg" / "util.py", "return text.strip().lower()", "return text.strip().casefold()")
    with Index.open(project, **SETTINGS) as idx:
        report = idx.index()
        assert report.files_indexed == 1 and report.embedded
        assert [args[0] for args in asked].count("embeddings/count-fragments") == 1
        with idx.reading() as store:
            fragments = int(store.select(catalog.text("embeddings/count-fragments"))[0]["n"].value)
            vectors = int(store.select(catalog.text("embeddings/count-vectors"))[0]["n"].value)
        assert fragments == vectors
