"""An index run that says what it changed (``CacheDelta``) updates the derived caches from the tokenised
corpus saved with them (``retrieval/segment.py``), the keyword and ranking indexes of the state before
(spliced: ``index/splice.py``, ``ranking/splice.py``) and its vector matrix: after every kind of edit
the keyword and ranking caches hold what a full build of the same graph holds (every term's documents
and scores, bit for bit, every query's scores, every window, file and fragment place; the terms'
numbering aside) and the vector cache is byte for byte a full build's; without a usable segment or
matrix the caches are built in full."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from acms.api import Index
from acms.config import Settings
from acms.index.keyword import KeywordIndex
from acms.index.vectors import VectorMatrix
from acms.ranking.index import RankingIndex
from acms.retrieval import caches as caches_module
from acms.retrieval import segment as segment_module
from acms.retrieval.cache_delta import CacheDelta
from acms.retrieval.caches import DerivedCaches
from acms.retrieval.corpus_read import CorpusReader
from acms.retrieval.embedding_store import active_model
from acms.retrieval.segment import Segment
from acms.service.indexing import IndexRun
from acms.service.indexing.after_files import AfterFiles
from acms.sparql import catalog
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore
from acms.store.protocol import GraphStore
from acms.temporal import tiers

from ..conftest import copy_of_indexed

FIXTURES = Path(__file__).parent.parent / "fixtures"
CACHES = ("keyword", "ranking", "vectors")
DECO = "def retried(times):\n    \"\"\"Retry a call.\"\"\"\n    def wrap(fn):\n        return fn\n    return wrap\n"


def _project(root: Path) -> None:
    """Classes, methods, a repeated class, nested functions, Markdown, ADRs, several languages."""
    shutil.copytree(FIXTURES / "sample_project", root)
    shutil.copytree(FIXTURES / "adr_project" / "docs", root / "more")
    for part in ("rs", "web", "shapes", "js"):
        shutil.copytree(FIXTURES / "polyglot_project" / part, root / part)
    (root / "pkg" / "twice.py").write_text("class A:\n    def f(self):\n        return 1\n\n\nclass A:\n    pass\n")
    (root / "pkg" / "deco.py").write_text(DECO)
    (root / "pkg" / "long.py").write_text("".join(f"def f{i}(x_{i}):\n    return HTTPServer{i}(x_{i})\n\n\n"
                                                  for i in range(40)))


def _stored(store: GraphStore) -> dict[str, str]:
    """File IRI -> content hash of every current file."""
    return {r["file"].value: r["hash"].value for r in store.select(catalog.text("ingest/stored-files"))}


def _files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


class _Spy:
    """Which caches the runs updated from their delta rather than built in full."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.updated: list[str] = []
        self.spliced: list[str] = []  # the text caches spliced from the state before, not built from the segment
        self.runs = 0
        built = DerivedCaches._built
        vectors = DerivedCaches._updated_vectors
        keyword, ranking = DerivedCaches._spliced_keyword, DerivedCaches._spliced_ranking

        def spy_keyword(caches: DerivedCaches, *args: object) -> object:
            index = keyword(caches, *args)  # type: ignore[arg-type]
            self.spliced += [] if index is None else ["keyword"]
            return index

        def spy_ranking(caches: DerivedCaches, *args: object) -> object:
            index = ranking(caches, *args)  # type: ignore[arg-type]
            self.spliced += [] if index is None else ["ranking"]
            return index

        def spy_built(caches: DerivedCaches, name: str, updated: bool) -> None:
            self.updated += [name] if updated else []
            built(caches, name, updated)

        def spy_vectors(caches: DerivedCaches, *args: object) -> object:
            matrix = vectors(caches, *args)  # type: ignore[arg-type]
            self.updated += [] if matrix is None else ["vectors"]
            return matrix

        monkeypatch.setattr(DerivedCaches, "_built", spy_built)
        monkeypatch.setattr(DerivedCaches, "_updated_vectors", spy_vectors)
        monkeypatch.setattr(DerivedCaches, "_spliced_keyword", spy_keyword)
        monkeypatch.setattr(DerivedCaches, "_spliced_ranking", spy_ranking)

    def take(self) -> list[str]:
        """What was updated since the last take; an update of the text caches is a splice."""
        taken, self.updated = self.updated, []
        spliced, self.spliced = self.spliced, []
        assert spliced == [name for name in taken if name in ("keyword", "ranking")]
        return taken


def _reindex(root: Path, settings: Settings | None = None,
             delta: Callable[[CacheDelta], CacheDelta] = lambda d: d) -> list[str]:
    """An index run, checked to tell the caches at least the files whose stored content hash changed,
    appeared or went (``delta`` may then alter what it tells)."""
    layout = IndexLayout(root / ".acms")
    store = OxigraphStore(layout.graph)
    try:
        before = DerivedCaches(store, layout)
        keys, hashes = (before.text_key, before.state_key), _stored(store)

        real = AfterFiles.warm_caches

        def warm_caches(self: AfterFiles, layout: IndexLayout) -> None:
            after = _stored(self.run.store)
            changed = frozenset(f for f in hashes.keys() | after.keys() if hashes.get(f) != after.get(f))
            told = self.run.cache_delta  # what the run says it changed: at least the files whose hash moved
            assert told is not None and (told.text_key, told.state_key) == keys and changed <= told.files
            self.run.cache_delta = delta(told)
            real(self, layout)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(AfterFiles, "warm_caches", warm_caches)
            report = IndexRun(root, store, settings or Settings(), layout).run()
        assert not report.up_to_date
        return report.warnings
    finally:
        store.close()


def _assert_full_build(root: Path, tmp_path: Path) -> None:
    """The caches in the index are those a full build of its graph makes, file for file."""
    layout = IndexLayout(root / ".acms")
    full = IndexLayout(tmp_path / "full")
    shutil.rmtree(full.root, ignore_errors=True)
    store = OxigraphStore(layout.graph, read_only=True)
    try:
        caches = DerivedCaches(store, full)
        caches.keyword(), caches.ranking()
        model = active_model(store)
        assert model is not None
        caches.vectors(model.model_id)
        assert caches.text_key == Segment.load(layout.cache_dir("tokens")).key  # the update's segment is this state's
    finally:
        store.close()
    _same_vectors(VectorMatrix.load(layout.cache_dir("vectors")), VectorMatrix.load(full.cache_dir("vectors")))
    _same_keyword(KeywordIndex.load(layout.cache_dir("keyword")), KeywordIndex.load(full.cache_dir("keyword")))
    _same_ranking(RankingIndex.load(layout.cache_dir("ranking")), RankingIndex.load(full.cache_dir("ranking")))
    for built in (layout, full):
        _aligned_as_by_ids(RankingIndex.load(built.cache_dir("ranking")), KeywordIndex.load(built.cache_dir("keyword")))


def _aligned_as_by_ids(ranking: RankingIndex, keyword: KeywordIndex) -> None:
    """The positions the caches saved with the ranking index align it with the keyword index as
    comparing their ids does."""
    assert ranking.keyword_rows is not None and keyword.key == ranking.key
    saved = ranking.aligned(keyword).copy()
    ranking.keyword_rows, ranking._aligned = None, None
    assert np.array_equal(saved, ranking.aligned(keyword))


def _same_vectors(got: VectorMatrix | None, want: VectorMatrix | None) -> None:
    """The same live rows, bit for bit, and the same nearest rows and similarities for queries near
    them (the full build's rows, and blends of two); a matrix without a tail is the full build's file."""
    assert got is not None and want is not None and want.tail is None
    assert (got.key, got.model_id) == (want.key, want.model_id)
    live = {frag: got.row(i).tobytes() for i, frag in got.live()}
    assert len(live) == len(got.live()) and live == {frag: want.row(i).tobytes() for i, frag in want.live()}
    rows = np.asarray(want.matrix)
    for i in range(0, len(rows), max(1, len(rows) // 25)):
        for query in (rows[i], (rows[i] + rows[-1 - i]) / 2):
            assert got.top(query, 8) == want.top(query, 8)
    if got.tail is None:
        assert got.ids == want.ids and np.asarray(got.matrix).tobytes() == rows.tobytes()


def _same_keyword(got: KeywordIndex, want: KeywordIndex) -> None:
    """The same documents, terms and lengths, every term's scores and every query's, bit for bit (what a
    reader sees: an update may be a base and a delta scored at query time, laid out otherwise)."""
    assert got.ids == want.ids
    terms = want.terms()
    assert got.terms() == terms
    got_lengths, want_lengths = got.lengths(), want.lengths()
    assert got_lengths is not None and want_lengths is not None
    assert got_lengths.tolist() == want_lengths.tolist()
    queries = terms + [" ".join(terms[i : i + 3]) for i in range(0, len(terms), 11)] + ["no_such_term_here"]
    for query in queries:
        assert got.scores(query).tobytes() == want.scores(query).tobytes(), query
        assert got.scores(query, unique=True).tobytes() == want.scores(query, unique=True).tobytes(), query
    for query in queries[::7]:
        assert got.top(query, 10) == want.top(query, 10)


def _same_ranking(got: RankingIndex, want: RankingIndex) -> None:
    assert (got.files, got.dense, got.roles) == (want.files, want.dense, want.roles)
    for name in ("window_file", "window_lines", "frag_ids", "locations"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    for name in ("outlines", "qualified"):
        column, expected = getattr(got, name), getattr(want, name)
        assert [column[i] for i in range(len(column))] == [expected[i] for i in range(len(expected))], name
    for name in ("windows", "paths", "names"):
        _same_keyword(getattr(got, name), getattr(want, name))


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One first index (with its caches, segment and vectors) that each test copies."""
    root = tmp_path_factory.mktemp("first") / "proj"
    _project(root)
    layout = IndexLayout(root / ".acms")
    store = OxigraphStore(layout.graph)
    try:
        IndexRun(root, store, Settings(), layout).run()
    finally:
        store.close()
    assert Segment.load(layout.cache_dir("tokens")).key  # a first index saves the segment too
    return root


@pytest.fixture
def project(indexed: Path, tmp_path: Path) -> Path:
    return copy_of_indexed(indexed, tmp_path)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> _Spy:
    return _Spy(monkeypatch)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


EDITS: dict[str, Callable[[Path], None]] = {
    "a function body": lambda root: _edit(root / "pkg" / "util.py", "return text.strip().lower()",
                                          "cleaned = text.strip()\n    return cleaned.casefold()"),
    "lines above a function": lambda root: _edit(root / "pkg" / "mod.py", "class Base:",
                                                 "RETRIES = 3\nTIMEOUT = 30.0\n\n\nclass Base:"),
    "a renamed function": lambda root: _edit(root / "pkg" / "util.py", "def join_parts(", "def joined_path("),
    "a file added": lambda root: (root / "pkg" / "extra.py").write_text(
        "class Retry:\n    \"\"\"Retry policy.\"\"\"\n\n    def delay(self, n):\n        return 2 ** n\n\n\n"
        "def backoff(base):\n    def step(n):\n        return base * n\n    return step\n"),
    "a file deleted": lambda root: (root / "pkg" / "long.py").unlink(),
    "a class moved to another file": lambda root: (
        _edit(root / "pkg" / "mod.py", 'class Base:\n    """A base class."""\n\n    def describe(self) -> str:\n'
              '        return "base"\n\n\n', "from pkg.util import Base\n\n\n"),
        (root / "pkg" / "util.py").write_text((root / "pkg" / "util.py").read_text()
                                              + '\n\nclass Base:\n    """A base class."""\n\n'
                                                '    def describe(self) -> str:\n        return "base"\n')),
    "an ADR edited": lambda root: _edit(root / "more" / "adr" / "0003-use-postgres-for-sessions.md",
                                        "SessionStore moves to Postgres", "SessionStore moves to Postgres 16"),
    "a nested function added": lambda root: _edit(root / "pkg" / "deco.py", "    return wrap\n",
                                                  "    def unwrap(fn):\n        return fn\n    return wrap\n"),
    "a Rust module edited": lambda root: _edit(root / "rs" / "lib.rs", "fn ", "fn renamed_"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edit_updates_the_caches_as_a_full_build_makes_them(edit: str, project: Path, tmp_path: Path,
                                                               spy: _Spy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(caches_module, "GARBAGE_SHARE", 1.0)  # a small project: an edit is a large share of it
    EDITS[edit](project)
    _reindex(project)
    assert spy.take() == ["keyword", "ranking", "vectors"]
    vectors = VectorMatrix.load(project / ".acms" / "cache" / "vectors")
    assert vectors is not None and vectors.tail is not None  # appended to, not written whole
    _assert_full_build(project, tmp_path)


def test_updates_in_a_row_and_a_compacted_segment(project: Path, tmp_path: Path, spy: _Spy,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Each update starts from the last one's segment; the dead lines they leave are dropped once they
    pass their share (here: at once), and the caches stay a full build's either way."""
    compacted: list[float] = []
    compact = Segment.compacted

    def counted(segment: Segment) -> Segment:
        compacted.append(segment.garbage())
        done = compact(segment)
        assert done.garbage() == 0.0 and len(done.text.tokens) <= len(segment.text.tokens)
        return done

    monkeypatch.setattr(Segment, "compacted", counted)
    for i, edit in enumerate(("a function body", "a file added", "a class moved to another file", "a file deleted")):
        monkeypatch.setattr(caches_module, "GARBAGE_SHARE", 0.0 if i % 2 else 1.0)
        EDITS[edit](project)
        _reindex(project)
        assert spy.take() == ["keyword", "ranking", "vectors"], edit
        vectors = VectorMatrix.load(project / ".acms" / "cache" / "vectors")
        assert vectors is not None and (vectors.tail is None) == bool(i % 2), edit  # compacted at once, or not
        _assert_full_build(project, tmp_path)
    assert len(compacted) == 2 and all(share > 0 for share in compacted)


def test_a_process_s_next_update_starts_from_the_segment_it_kept(project: Path, tmp_path: Path, spy: _Spy,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A long-lived process (a server) updates again from the segment and token numbering its last update
    kept, not from the files; one that finds another state on disk (another process indexed) reads it."""
    loads: list[Path] = []
    load = Segment.load

    def counted(directory: Path) -> Segment:
        loads.append(directory)
        return load(directory)

    monkeypatch.setattr(Segment, "load", counted)
    monkeypatch.setattr(caches_module, "GARBAGE_SHARE", 1.0)
    for edit in ("a function body", "a file added"):
        EDITS[edit](project)
        _reindex(project)
        assert spy.take() == ["keyword", "ranking", "vectors"], edit
        _assert_full_build(project, tmp_path)
    assert len(loads) == 1 + 2  # the first update's (and the checks'): the second started from what the first kept
    layout = IndexLayout(project / ".acms")
    store = OxigraphStore(layout.graph, read_only=True)
    try:  # a reader in the same process answers from the indexes the update just made, not from their files
        indexes: list[Path] = []
        for kind in (KeywordIndex, RankingIndex):
            monkeypatch.setattr(kind, "load", lambda directory, **_: indexes.append(directory))
        reader = DerivedCaches(store, layout)
        keyword, ranking = reader.keyword(), reader.ranking()
        assert not indexes
        assert (keyword.key, ranking.key) == (reader.text_key, reader.text_key)
        monkeypatch.undo()
        on_disk = KeywordIndex.load(layout.cache_dir("keyword"))
        for query in ("parse value", "helper join parts", "class"):
            assert keyword.scores(query).tobytes() == on_disk.scores(query).tobytes()
    finally:
        store.close()
    monkeypatch.setattr(Segment, "load", counted)
    monkeypatch.setattr(caches_module, "GARBAGE_SHARE", 1.0)
    caches_module._kept.clear()  # as in another process: the segment on disk is read
    EDITS["a file deleted"](project)
    _reindex(project)
    assert len(loads) == 4
    _assert_full_build(project, tmp_path)


def test_an_update_links_the_saved_text_and_writes_only_what_it_added(project: Path, tmp_path: Path, spy: _Spy,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The token array, its line ends and the vocabulary only grow by an update: the saved ones stay the
    same files (linked), one tail after them holds what every update since added, and what is read
    back builds the caches a full build makes."""
    monkeypatch.setattr(caches_module, "GARBAGE_SHARE", 1.0)
    tokens = project / ".acms" / "cache" / "tokens"
    first = {name: (tokens / name).stat().st_ino for name in ("ids.npy", "line_ends.npy", "tokens.blob.npy",
                                                             "tokens.hashes.npy")}
    for edit in ("a function body", "a file added", "a file deleted"):
        caches_module._kept.clear()  # each update as another process's: from the files
        EDITS[edit](project)
        _reindex(project)
        assert spy.take() == ["keyword", "ranking", "vectors"], edit
        assert {name: (tokens / name).stat().st_ino for name in first} == first, edit
        assert all((tokens / f"{name}.tail.npy").is_file() for name in ("ids", "line_ends")), edit
        assert (tokens / "tokens.tail.txt").is_file(), edit
        _assert_full_build(project, tmp_path)
    saved = Segment.load(tokens)
    assert saved.prefix is not None and saved.prefix[1:] == (len(saved.text.ids), len(saved.text.line_ends),
                                                             len(saved.text.tokens))


def test_the_dead_tokens_an_update_counts_are_never_fewer_than_there_are(project: Path, spy: _Spy,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """An update decides whether to compact from a bound on the dead tokens, without a pass over every
    line: the bound must never fall below the exact count, or a segment could grow past its share."""
    monkeypatch.setattr(caches_module, "GARBAGE_SHARE", 1.0)  # never compact: the dead lines pile up
    for edit in ("a function body", "a class moved to another file", "a file deleted"):
        EDITS[edit](project)
        _reindex(project)
        segment = Segment.load(project / ".acms" / "cache" / "tokens")
        exact = round(segment.garbage() * len(segment.text.ids))
        assert segment.dead_bound is not None and segment.dead_bound >= exact > 0, edit


def test_recorded_decisions_between_runs_are_read_again(project: Path, tmp_path: Path, spy: _Spy) -> None:
    """A plan's decisions have no file: rows no changed file accounts for, written without an index run
    (the write that records one updates the caches, ``acms.retrieval.follow``), and retired to the cold
    tier by a later decision."""
    with Index.open(project, refresh="off") as idx:
        idx.plans.create("root")
        idx.plans.record("Sessions live in SQLite", plan="root")
        assert spy.take() == ["keyword", "ranking", "vectors"]
        idx.plans.record("Every store has a URL", plan="root")
        assert spy.take() == ["keyword", "ranking", "vectors"]
    _assert_full_build(project, tmp_path)
    EDITS["a function body"](project)
    _reindex(project)
    assert spy.take() == ["keyword", "ranking", "vectors"]
    _assert_full_build(project, tmp_path)
    with Index.open(project, refresh="off") as idx:
        idx.plans.record("Sessions live in Postgres", plan="root", supersedes="D-1")  # D-1 retired: cold
    assert spy.take() == ["keyword", "ranking", "vectors"]
    _assert_full_build(project, tmp_path)
    EDITS["lines above a function"](project)
    _reindex(project)
    assert spy.take() == ["keyword", "ranking", "vectors"]
    _assert_full_build(project, tmp_path)


def test_a_function_the_tier_policy_splits_from_its_nested_one(project: Path, tmp_path: Path, spy: _Spy) -> None:
    """A function's nesting outline holds only while it and a function it defines share a tier: the
    tier policy moving the nested one to hot changes a file the run did not touch."""
    layout = IndexLayout(project / ".acms")

    def outline_of(store: GraphStore) -> dict[str, str]:
        return {r["frag"].value: r["outline"].value for r in store.select(catalog.text("search/function-outlines"))}

    store = OxigraphStore(layout.graph)
    try:
        nested = outline_of(store)
        wrap = store.select("SELECT ?e WHERE { GRAPH ?g { ?e uko:qualifiedName \"pkg.deco.retried.wrap\" } }")[0]["e"]
        tiers.record_use(store, [wrap.value])  # hot at the next run's rebalance; retried stays warm
    finally:
        store.close()
    EDITS["a function body"](project)
    _reindex(project)
    assert spy.take() == ["keyword", "ranking", "vectors"]
    store = OxigraphStore(layout.graph, read_only=True)
    try:
        assert outline_of(store) != nested  # the place changed outside the delta's files
    finally:
        store.close()
    _assert_full_build(project, tmp_path)


@pytest.mark.parametrize(("old", "new", "used"), [
    ('"""Retry a call."""', '"""Retry a call, a few times."""', None),  # retried revised (hot), wrap not
    ("    return wrap\n", "    return wrap\n\n\n# the end\n", "pkg.deco.retried.wrap"),  # wrap used (hot), retried not
])
def test_the_tier_policy_splits_a_function_from_its_nested_one_in_a_file_the_run_wrote(
        old: str, new: str, used: str | None, project: Path, tmp_path: Path, spy: _Spy,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The run writes every entity of a file warm, then the tier policy moves some to hot: a function
    and the one it defines no longer share a tier, and the places taken from what the run wrote must say
    so as the store's queries do."""
    layout = IndexLayout(project / ".acms")
    store = OxigraphStore(layout.graph)
    try:
        assert _retried(store) in _function_outlines(store)
        if used is not None:
            entity = store.select(f'SELECT ?e WHERE {{ GRAPH ?g {{ ?e uko:qualifiedName "{used}" }} }}')[0]["e"]
            tiers.record_use(store, [entity.value])
    finally:
        store.close()
    bound: list[int] = []
    real = DerivedCaches._bound_places
    monkeypatch.setattr(DerivedCaches, "_bound_places",
                        lambda caches, files, frags: bound.append(len(files)) or real(caches, files, frags))
    _edit(project / "pkg" / "deco.py", old, new)
    _reindex(project)
    assert spy.take() == ["keyword", "ranking", "vectors"]
    assert bound == []  # the places came from what the run wrote
    store = OxigraphStore(layout.graph, read_only=True)
    try:
        assert _retried(store) not in _function_outlines(store)  # split: the two are in two tiers now
    finally:
        store.close()
    _assert_full_build(project, tmp_path)


def _retried(store: GraphStore) -> str:
    """The micro fragment of ``pkg.deco.retried`` (a function that defines one)."""
    return str(store.select('SELECT ?f WHERE { GRAPH ?g { ?e uko:qualifiedName "pkg.deco.retried" ; '
                            'uko:hasFragment ?f . ?f uko:lod "micro" } }')[0]["f"].value)


def _function_outlines(store: GraphStore) -> dict[str, str]:
    return {r["frag"].value: r["outline"].value for r in store.select(catalog.text("search/function-outlines"))}


def test_an_update_takes_the_written_files_rows_from_the_run_not_the_store(
        project: Path, tmp_path: Path, spy: _Spy, monkeypatch: pytest.MonkeyPatch) -> None:
    """The files the run wrote are not read back: their rows and places are what its writer emitted
    (the store is asked only for fragments of several rows and those without a file)."""
    asked: list[str] = []
    real = CorpusReader.rows_of
    monkeypatch.setattr(CorpusReader, "rows_of", lambda reader, frags: real(reader, asked.extend(frags) or frags))
    for edit in ("a function body", "a file added", "a renamed function"):
        EDITS[edit](project)
        _reindex(project)
        assert spy.take() == ["keyword", "ranking", "vectors"], edit
        _assert_full_build(project, tmp_path)
    store = OxigraphStore(IndexLayout(project / ".acms").graph, read_only=True)
    try:
        placed = store.select("SELECT DISTINCT ?frag WHERE { GRAPH ?g { ?frag uko:inFile ?file } }")
    finally:
        store.close()
    assert not set(asked) & {r["frag"].value for r in placed}  # only fragments without a file were read


def test_without_a_segment_the_caches_are_built_in_full(project: Path, tmp_path: Path, spy: _Spy) -> None:
    shutil.rmtree(project / ".acms" / "cache" / "tokens")
    EDITS["a function body"](project)
    _reindex(project)
    assert spy.take() == ["vectors"]  # the text caches' full build saved this state's segment
    _assert_full_build(project, tmp_path)
    EDITS["a file added"](project)  # the full build saved one: the next run updates again
    _reindex(project)
    assert spy.take() == ["keyword", "ranking", "vectors"]
    _assert_full_build(project, tmp_path)


@pytest.mark.parametrize("broken", ["_spliced_ranking", "_updated_segment", "_updated_vectors"])
def test_an_update_that_fails_is_built_in_full_and_the_run_lands(broken: str, project: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The caches are derived: an error in their update (a bug) is a warning in the run's report and a
    full build, not a run rolled back with a traceback."""
    real = getattr(DerivedCaches, broken)

    def fails(caches: DerivedCaches, *args: object, **kwargs: object) -> object:
        if caches._delta is not None:  # the update; without a delta the same code builds in full
            raise RuntimeError("a bug in the update")
        return real(caches, *args, **kwargs)

    monkeypatch.setattr(DerivedCaches, broken, fails)
    EDITS["a function body"](project)
    warnings = _reindex(project)
    assert [w for w in warnings if "update failed (RuntimeError: a bug in the update); built in full" in w]
    _assert_full_build(project, tmp_path)
    monkeypatch.undo()
    EDITS["a file added"](project)  # the full build left caches of this state: the next run updates them
    assert _reindex(project) == []
    _assert_full_build(project, tmp_path)


@pytest.mark.parametrize("cache", [Segment, KeywordIndex, RankingIndex])
def test_a_save_that_fails_in_an_update_is_built_in_full_and_the_run_lands(
        cache: type, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An update's write refused (a bug, a full disk that frees up): the run builds the caches in full
    and says so, rather than rolling back with a traceback."""
    real = cache.save
    calls: list[int] = []

    def fails_once(self: object, *args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("the disk said no")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cache, "save", fails_once)
    EDITS["a function body"](project)
    warnings = _reindex(project)
    assert [w for w in warnings if "update failed (OSError: the disk said no); built in full" in w]
    monkeypatch.undo()
    _assert_full_build(project, tmp_path)


def test_a_delta_from_another_state_is_ignored(project: Path, tmp_path: Path, spy: _Spy) -> None:
    EDITS["a function body"](project)
    _reindex(project, delta=lambda d: CacheDelta("0" * 16, "0" * 16, d.files))
    assert spy.take() == []
    _assert_full_build(project, tmp_path)


def test_a_stale_segment_is_not_updated(project: Path, tmp_path: Path, spy: _Spy) -> None:
    """A segment of another format (or tokenizer) is built again, whatever its key."""
    manifest = project / ".acms" / "cache" / "tokens" / "manifest.json"
    manifest.write_text(manifest.read_text().replace(segment_module.FORMAT, "acms.token-segment/0"))
    EDITS["a function body"](project)
    _reindex(project)
    assert spy.take() == ["vectors"]  # the full build saved a segment of this state
    _assert_full_build(project, tmp_path)


def test_the_bound_place_queries_are_the_full_ones_for_their_fragments(indexed: Path) -> None:
    store = OxigraphStore(IndexLayout(indexed / ".acms").graph, read_only=True)
    try:
        caches = DerivedCaches(store, IndexLayout(indexed / ".acms"))
        rows = caches.corpus
        frags = sorted({r.frag for r in rows if r.file is not None})[::2]
        files = sorted({r.file for r in rows if r.file is not None})[::2]
        full = caches._place_dicts()
        bound = caches._bound_places(files, frags)
        assert full.single and bound.single
        assert bound.paths == {f: p for f, p in full.paths.items() if f in files}
        for got, want in zip(bound[1:4], full[1:4], strict=True):
            assert got == {f: v for f, v in want.items() if f in set(frags)}
        assert all(bound[1:4])  # kinds, class outlines, nested functions: each met
        in_files = {r["frag"].value for r in caches._bound("search/fragments-in-files", "file", files)}
        assert in_files == {r.frag for r in rows if r.file in set(files)}
        assert not list(caches._solutions("search/fragments-unplaced"))
    finally:
        store.close()


def test_a_segment_saved_and_loaded_builds_the_same_documents(indexed: Path, tmp_path: Path) -> None:
    segment = Segment.load(IndexLayout(indexed / ".acms").cache_dir("tokens"))
    segment.save(tmp_path / "tokens", key="k")
    again = Segment.load(tmp_path / "tokens")
    assert again.key == "k" and again.frags == segment.frags == sorted(segment.frags)
    compacted = again.compacted()

    def words(s: Segment) -> Iterator[list[str]]:
        for tokens, lengths in s.documents():
            yield [s.text.tokens[t] for t in tokens.tolist()] + lengths.tolist()

    def places(s: Segment) -> list[tuple[object, ...]]:
        return [(p.frag, p.path, p.start, p.end, p.container, p.name, p.outline, p.lines, p.qualified)
                for p in s.places()]

    assert list(words(compacted)) == list(words(segment))
    assert places(compacted) == places(segment)
