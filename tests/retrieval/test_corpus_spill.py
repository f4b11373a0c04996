"""A first index spills its corpus rows as it writes its groups, and the caches' build reads them in place
of the store's join (issue 14). The spilled rows must be exactly the solutions of
``search/corpus-full.rq`` over what was written, and the caches built from them byte for byte those
built from the store; the spill never outlives its run."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from acms.api import Index
from acms.config import Settings
from acms.ingest.walker import list_files
from acms.retrieval.caches import DerivedCaches
from acms.retrieval.corpus_read import CorpusRow
from acms.retrieval.corpus_spill import SpillWriter, beside, read_others, read_spill, read_texts
from acms.service.indexing import child as index_child
from acms.service.indexing import stream as index_stream
from acms.service.indexing import IndexRun
from acms.service.indexing.after_files import AfterFiles
from acms.sparql import catalog
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _project(tmp_path: Path) -> Path:
    """Code of every kind of owner: classes, methods, a repeated class, nested functions, JavaScript, a
    Python 2 module (tree-sitter), Markdown sections and ADRs (no qualified name), plain text (the file's)."""
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "sample_project", root)
    shutil.copytree(FIXTURES / "adr_project" / "docs", root / "more")
    (root / "pkg" / "twice.py").write_text("class A:\n    def f(self):\n        return 1\n\n\nclass A:\n    pass\n")
    (root / "pkg" / "deco.py").write_text(
        "def retried(times):\n    \"\"\"Retry a call.\"\"\"\n    def wrap(fn):\n        return fn\n    return wrap\n")
    (root / "pkg" / "old.py").write_text("def shout(x):\n    print x\n\n\nclass Old:\n    def run(self):\n        print 'r'\n")
    (root / "web").mkdir()
    (root / "web" / "adapter.js").write_text(
        "function adapter(config) {\n  return new Promise(function dispatch(resolve) {\n    resolve(config);\n  });\n}\n")
    return root


def _value(row: dict, name: str) -> str | None:
    return row[name].value if name in row else None


def test_the_spilled_rows_are_the_join_over_what_was_written(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(index_stream, "GROUP_FILES", 3)  # several groups, several appends
    root = _project(tmp_path)
    store = OxigraphStore(tmp_path / "graph")
    try:
        run = IndexRun(root, store, Settings())
        run.corpus_spill = tmp_path / "rows.spill"
        store.ensure_ontology([])
        index_stream.stream_first_index(run, list_files(root))
        spilled = Counter(tuple(r) for r in read_spill(run.corpus_spill))
        others = list(read_others(run.corpus_spill))
        joined = Counter((r["frag"].value, r["text"].value, *(_value(r, v) for v in ("name", "qn")),
                          *(None if _value(r, v) is None else int(_value(r, v)) for v in ("start", "end")),  # type: ignore[arg-type]
                          _value(r, "file")) for r in store.select(catalog.text("search/corpus")))
        texts = Counter(read_texts(run.corpus_spill))
        stored = Counter((r["frag"].value, r["text"].value) for r in store.select(catalog.text("embeddings/texts")))
        decisions = {r["frag"].value for r in store.select(
            "SELECT ?frag WHERE { GRAPH ?g { ?d a uko:Decision ; uko:hasFragment ?frag } }")}
        layout = IndexLayout(tmp_path / "index")
        caches = DerivedCaches(store, layout, spill=run.corpus_spill, complete=True)
        spilled_places = caches._spilled_places()
        queried = DerivedCaches(store, layout)
        queried_places = [{r["file"].value: r["path"].value for r in queried._solutions("search/file-paths")},
                          {r["frag"].value: r["kind"].value.rsplit("#", 1)[-1]
                           for r in queried._solutions("search/class-fragments")},
                          {r["frag"].value: r["outline"].value for r in queried._solutions("search/class-outlines")},
                          {r["frag"].value: r["outline"].value for r in queried._solutions("search/function-outlines")}]
    finally:
        store.close()
    # every fragment's rows (search/corpus.rq, bar the vector): those of one row spilled, the others named
    assert spilled + Counter({row: n for row, n in joined.items() if row[0] in others}) == joined
    assert all(sum(1 for row in joined if row[0] == frag) > 1 or frag in decisions for frag in others)
    assert decisions and decisions <= set(others)  # the ADRs' decisions, from their own batch
    assert texts == stored  # what a first embedding samples: every searchable fragment, files', sections', ADRs' too
    names = {row[3] for row in spilled}
    assert {"pkg.twice.A", "pkg.deco.retried.wrap", "pkg.old.Old.run", None} <= names  # files', sections' too
    assert "adapter" in {row[2] for row in spilled}
    # the places, as the four place queries give them for the searchable fragments' files and fragments
    assert spilled_places is not None
    micro = {row[0] for row in joined}
    files = {row[6] for row in joined}
    for got, want, keys in zip(spilled_places[:4], queried_places, (files, micro, micro, micro), strict=True):
        assert {k: v for k, v in got.items() if k in keys} == {k: v for k, v in want.items() if k in keys}
    assert all(spilled_places[1:4]) and spilled_places[3]  # kinds, class outlines, nested functions: each met
    assert not list(tmp_path.glob("*.partial"))


def test_a_failed_stream_leaves_no_spill(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    root = _project(tmp_path)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(index_stream, "load_nquads", broken)  # the store refuses the first group
    store = OxigraphStore(tmp_path / "graph")
    try:
        run = IndexRun(root, store, Settings())
        run.corpus_spill = tmp_path / "rows.spill"
        store.ensure_ontology([])
        try:
            index_stream.stream_first_index(run, list_files(root))
        except RuntimeError:
            pass
    finally:
        store.close()
    assert list(tmp_path.glob("rows.spill*")) == []


class _SeesSpill:
    """A progress listener noting the spills in the cache directory as each phase starts."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache
        self.at: dict[str, list[str]] = {}

    def start(self, phase: str, total: int | None = None) -> None:
        self.at[phase] = sorted(p.name for p in self.cache.glob(".corpus-*"))

    def update(self, done: int, total: int | None = None) -> None: ...

    def finish(self, phase: str) -> None: ...


def _files(directory: Path) -> dict[str, bytes]:
    """Every file, but the names of the token numbering each build made for itself (a random name)."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file() and p.name not in ("numbers.npy", "numbering.txt")}


PLACE_QUERIES = {"search/corpus-keys", "search/file-paths", "search/class-fragments", "search/class-outlines",
                 "search/function-outlines"}


@pytest.mark.parametrize("case", ["one-process", "files-in-a-child", "tiers-moved", "fragments-before"])
def test_an_index_run_builds_its_caches_from_its_spill_as_from_the_store(tmp_path: Path, monkeypatch,  # noqa: ANN001
                                                                         case: str) -> None:
    """The caches a first index builds from its spill are those a rebuild from the store gives. The spill
    stands for every searchable fragment and place (no store query for them) unless the store held some
    before the run, or the tier policy moved entities since their files were written."""
    from acms.sparql import catalog as catalog_module

    from ..temporal.gitrepo import commit, git

    monkeypatch.setattr(index_stream, "GROUP_FILES", 3)
    if case == "files-in-a-child":  # the files written by a child process (as for a large project), the caches built here
        monkeypatch.setattr(index_child, "SEPARATE_BYTES", 0)
    root = _project(tmp_path)
    history = 0
    if case == "tiers-moved":  # a checkout whose last commit changed a function: it goes to the hot tier
        git(root, "init", "-q", "-b", "main")
        commit(root, "Add the project", "Ada", "2025-01-01T10:00:00+00:00")
        util = root / "pkg" / "util.py"
        util.write_text(util.read_text().replace("text.strip().lower()", "text.strip().casefold()"))
        commit(root, "Fold case", "Ada", "2025-01-02T10:00:00+00:00")
        history = 1
    asked: list[str] = []
    real_text = catalog_module.text

    def noting(key: str) -> str:
        asked.append(key)
        return real_text(key)

    with Index.open(root, embed_on_index=case == "fragments-before", embedding_dims=4, hot_commits=1) as idx:
        cache = idx.layout.cache
        cache.mkdir(parents=True, exist_ok=True)
        (cache / ".corpus-20200101T000000000000Z.spill.partial").write_bytes(b"left by a killed run")
        if case == "fragments-before":  # a note with a searchable fragment, there before the first index
            from pyoxigraph import Literal, NamedNode, Quad

            from acms.vocab import TIER_WARM, UKO

            note, frag = NamedNode("urn:test:note"), NamedNode("urn:test:note/frag")
            idx.store.load([Quad(note, UKO.hasFragment, frag, TIER_WARM), Quad(note, UKO.name, Literal("note"), TIER_WARM),
                            Quad(frag, UKO.lod, Literal("micro"), TIER_WARM),
                            Quad(frag, UKO.text, Literal("zanzibar quokka"), TIER_WARM)])
        seen = _SeesSpill(cache)
        monkeypatch.setattr(catalog_module, "text", noting)
        report = idx.index(progress=seen, history=history)
        monkeypatch.setattr(catalog_module, "text", real_text)
        assert len(seen.at["caches"]) == 1 and seen.at["caches"][0].endswith(".spill")  # complete, this run's
        assert list(cache.glob(".corpus-*")) == []  # gone after the run, the stale one too
        if case in ("one-process", "files-in-a-child"):
            assert not PLACE_QUERIES & set(asked) and "search/kind-closure" in asked
        else:
            assert PLACE_QUERIES <= set(asked)
        assert (report.hot_entities > 0) == (case == "tiers-moved")
        built = {name: _files(idx.layout.cache_dir(name)) for name in ("keyword", "ranking")}
        if case == "fragments-before":
            assert "urn:test:note/frag" in DerivedCaches(idx.store, idx.layout).keyword().ids
            assert report.embedded and idx.store.ask(  # the texts come from the store: the spill lacks the note's
                "ASK { GRAPH ?g { <urn:test:note/frag> <https://w3id.org/acms/uko#vector> ?v } }")
        shutil.rmtree(idx.layout.cache_dir("keyword"))
        shutil.rmtree(idx.layout.cache_dir("ranking"))
        again = DerivedCaches(idx.store, idx.layout)
        again.keyword(), again.ranking()
        assert again.rebuilt == ["keyword", "ranking"]
        assert {name: _files(idx.layout.cache_dir(name)) for name in ("keyword", "ranking")} == built
        assert len(built["ranking"]) > 1


def test_spill_rows_read_back_in_order(tmp_path: Path) -> None:
    writer = SpillWriter(tmp_path / "s.spill")
    writer.add([("f1", "a\nb", "n", "m.n", 1, 2, "file")])
    writer.add([])
    writer.add([("f0", "é \\ \"", "k", "m.k", 3, 3, "file")])
    assert not (tmp_path / "s.spill").exists()  # not complete before close
    writer.close()
    assert list(read_spill(tmp_path / "s.spill")) == [CorpusRow("f1", "a\nb", "n", "m.n", 1, 2, "file"),
                                                       CorpusRow("f0", "é \\ \"", "k", "m.k", 3, 3, "file")]


def test_a_first_embedding_samples_the_spill_as_it_would_the_store(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    import time

    from acms.retrieval import embedding_store

    monkeypatch.setattr(embedding_store, "FIT_SAMPLE", 7)  # the sample decides the model
    root = _project(tmp_path)
    with Index.open(root, embedding_dims=3) as idx:
        seen = _SeesSpill(idx.layout.cache)
        report = idx.index(progress=seen)
        assert len(seen.at["fitting"]) == 1  # the run's spill, still there for the sample
        assert list(idx.layout.cache.glob(".corpus-*")) == []
        from_store = embedding_store._stream_first(idx.store, idx.layout, idx.settings, "lsa",
                                                   embedding_store._Silent(), time.perf_counter())
    assert report.embedding_model == from_store.model_id
    assert report.embedded == from_store.embedded


def test_any_index_run_removes_what_a_killed_run_left(tmp_path: Path) -> None:
    root = _project(tmp_path)
    with Index.open(root, embed_on_index=False) as idx:
        idx.index()
        stale = idx.layout.cache / ".corpus-20200101T000000000000Z.spill"
        stale.write_bytes(b"texts of a run killed before its end")
        ahead = beside(stale, "embedding") / "model"  # and what its embedding workers had made
        ahead.mkdir(parents=True)
        (ahead / "arrays.npz").write_bytes(b"half a model")
        staged = idx.layout.cache / ".lsa-k1ll3d"  # and a model it had staged
        staged.mkdir()
        (staged / "arrays.npz").write_bytes(b"a model never landed")
        (root / "pkg" / "deco.py").write_text("def retried(times):\n    return times\n")
        report = idx.index()  # an incremental run: nothing streamed, nothing spilled
        assert report.files_indexed == 1 and not report.first_run
        assert not stale.exists() and not ahead.parent.exists() and not staged.exists()


def test_a_spill_that_cannot_be_written_is_dropped_and_the_run_goes_on(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    root = _project(tmp_path)
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the spill's directory would be")
    store = OxigraphStore(tmp_path / "graph")
    try:
        run = IndexRun(root, store, Settings())
        run.corpus_spill = blocker / "rows.spill"  # its parent cannot be made
        store.ensure_ontology([])
        index_stream.stream_first_index(run, list_files(root))
        assert run.report.files_indexed > 5 and not run.corpus_spill.exists()
    finally:
        store.close()
    writer = SpillWriter(tmp_path / "full.spill")

    class Full:
        def write(self, data: bytes) -> int:
            raise OSError(28, "No space left on device")

        def close(self) -> None: ...

    assert writer._out is not None
    writer._out.close()
    writer._out = Full()  # type: ignore[assignment]  (the disk fills up mid-run)
    writer.add([("f", "t", "n", "m.n", 1, 1, "file")])
    writer.close()
    assert list(tmp_path.glob("full.spill*")) == []


def test_a_first_embedding_streams_the_spill_into_the_graphs_the_store_holds(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """The texts come from the spill, each vector goes to its fragment's graph: the tier policy moved a
    git checkout's recently changed entities (with their fragments) to hot before the embeddings. This
    process folds every other batch beside the worker; the vectors are those of a run reading the store."""
    from acms.retrieval import embedding_fold, embedding_store

    from ..temporal.gitrepo import build, commit

    monkeypatch.setattr(embedding_store, "STREAM_BATCH", 3)
    monkeypatch.setattr(embedding_fold, "WORKER_FROM", 1)
    made = {}
    real = embedding_fold.Folder.__init__
    for spilled in (True, False):
        root = tmp_path / f"repo-{spilled}"
        shutil.copytree(FIXTURES / "sample_project", root)
        build(root)  # the sample's files come with the first commit
        util = root / "pkg" / "util.py"
        util.write_text(util.read_text().replace("text.strip().lower()", "text.strip().casefold()"))
        commit(root, "Fold case", "Ada", "2025-01-07T10:00:00+00:00")  # normalize: hot
        if not spilled:
            monkeypatch.setattr(AfterFiles, "spilled_texts", lambda self: None)
        shares = []

        def noting(self, provider, total, *, share=False, shares=shares) -> None:  # noqa: ANN001
            shares.append(share)
            real(self, provider, total, share=share)

        monkeypatch.setattr(embedding_fold.Folder, "__init__", noting)
        with Index.open(root, embedding_dims=3, project_name="repo", hot_commits=1) as idx:
            report = idx.index(history=10)
            assert report.hot_entities > 0
            rows = idx.store.select(
                "SELECT ?frag ?g ?v WHERE { GRAPH ?g { ?frag <https://w3id.org/acms/uko#vector> ?v } }")
            texts = idx.store.select(catalog.text("embeddings/texts"))
        assert shares == [spilled]
        made[spilled] = Counter((r["frag"].value, r["g"].value, r["v"].value) for r in rows)
        assert sorted((f, g) for f, g, _ in made[spilled]) == sorted({(r["frag"].value, r["g"].value) for r in texts})
        assert {g for _, g, _ in made[spilled]} == {"https://w3id.org/acms/tier/hot", "https://w3id.org/acms/tier/warm"}
    assert made[True] == made[False]
