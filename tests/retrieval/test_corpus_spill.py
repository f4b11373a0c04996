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
from acms.retrieval.corpus_spill import SpillWriter, read_spill, read_texts
from acms.service import index_child, index_stream
from acms.service.index_run import IndexRun
from acms.sparql import catalog
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


def _rows(solutions: object) -> Counter[tuple]:
    return Counter((r["frag"].value, r["text"].value, r["name"].value, r["qn"].value, int(r["start"].value),
                    int(r["end"].value), r["file"].value) for r in solutions)  # type: ignore[attr-defined]


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
        joined = _rows(store.select(catalog.text("search/corpus-full")))
        texts = Counter(read_texts(run.corpus_spill))
        stored = Counter((r["frag"].value, r["text"].value) for r in store.select(catalog.text("embeddings/texts")))
        decisions = {r["frag"].value for r in store.select(
            "SELECT ?frag WHERE { GRAPH ?g { ?d a uko:Decision ; uko:hasFragment ?frag } }")}
    finally:
        store.close()
    assert spilled == joined
    assert texts == stored  # what a first embedding samples: every searchable fragment, files', sections', ADRs' too
    assert len(stored) > len({row[0] for row in spilled})
    assert decisions and decisions <= {frag for frag, _ in texts}  # the ADRs' decisions, from their own batch
    names = {row[3] for row in spilled}
    assert {"pkg.twice.A", "pkg.deco.retried.wrap", "pkg.old.Old.run"} <= names
    assert "adapter" in {row[2] for row in spilled}
    assert not list(tmp_path.glob("*.partial"))


def test_a_failed_stream_leaves_no_spill(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    root = _project(tmp_path)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(index_stream, "_load_nquads", broken)  # the store refuses the first group
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
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("child", [False, True], ids=["one-process", "files-in-a-child"])
def test_an_index_run_builds_its_caches_from_its_spill_as_from_the_store(tmp_path: Path, monkeypatch,  # noqa: ANN001
                                                                         child: bool) -> None:
    monkeypatch.setattr(index_stream, "GROUP_FILES", 3)
    if child:  # the files written by a child process (as for a large project), the caches built here
        monkeypatch.setattr(index_child, "SEPARATE_BYTES", 0)
    root = _project(tmp_path)
    with Index.open(root, embed_on_index=False) as idx:
        cache = idx.layout.cache
        cache.mkdir(parents=True, exist_ok=True)
        (cache / ".corpus-20200101T000000000000Z.spill.partial").write_bytes(b"left by a killed run")
        seen = _SeesSpill(cache)
        idx.index(progress=seen)
        assert len(seen.at["caches"]) == 1 and seen.at["caches"][0].endswith(".spill")  # complete, this run's
        assert list(cache.glob(".corpus-*")) == []  # gone after the run, the stale one too
        built = {name: _files(idx.layout.cache_dir(name)) for name in ("keyword", "ranking")}
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


def test_any_index_run_removes_a_spill_a_killed_run_left(tmp_path: Path) -> None:
    root = _project(tmp_path)
    with Index.open(root, embed_on_index=False) as idx:
        idx.index()
        stale = idx.layout.cache / ".corpus-20200101T000000000000Z.spill"
        stale.write_bytes(b"texts of a run killed before its end")
        (root / "pkg" / "deco.py").write_text("def retried(times):\n    return times\n")
        report = idx.index()  # an incremental run: nothing streamed, nothing spilled
        assert report.files_indexed == 1 and not report.first_run
        assert not stale.exists()


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
            monkeypatch.setattr(IndexRun, "_spilled_texts", lambda self: None)
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
