"""Search through the graph: BM25 + LSA vectors, model versioning, migration, provider fallback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from acms.config import Settings
from acms.errors import ModelMismatch, ProviderError
from acms.embeddings.lsa import LsaModel
from acms.service.indexing import index_project
from acms.retrieval import embedding_store
from acms.retrieval.embedding_store import active_model, migrate
from acms.retrieval.search import Mode, Searcher
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore

CORPUS = {
    "net/headers.py": '''
def parseHttpHeader(line):
    """Split a raw header line."""
    name, _, value = line.partition(":")
    return name.strip(), value.strip()
''',
    "net/cookies.py": '''
def read_cookie_jar(path):
    """Load the cookie jar from disk."""
    with open(path) as handle:
        return handle.read().splitlines()
''',
    "docs/vehicles.md": "# Vehicles\n\nThe automobile engine turns fuel into motion; a car needs an engine and wheels.\n",
    "docs/garden.md": "# Garden\n\nTomatoes and basil grow well in sunny soil; water the plants daily.\n",
    "docs/engines.md": "# Motors\n\nA car engine and an automobile gearbox; the engine drives the wheels of the car.\n",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    for rel, text in CORPUS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "net" / "__init__.py").write_text("")
    layout = IndexLayout(root / ".acms")
    store = OxigraphStore(layout.graph)
    index_project(root, store, Settings(), layout=layout)
    store.close()
    return root


def _searcher(root: Path, settings: Settings | None = None) -> tuple[OxigraphStore, Searcher]:
    layout = IndexLayout(root / ".acms")
    store = OxigraphStore(layout.graph)
    return store, Searcher(store, layout, settings or Settings())


def test_identifier_splitting_finds_camel_case(project: Path) -> None:
    store, s = _searcher(project)
    hits = s.search("parse http header", Mode.KEYWORD, 3).hits
    store.close()
    assert hits[0].name == "net.headers.parseHttpHeader"
    assert hits[0].source_ref == "net/headers.py:2-5" and hits[0].keyword == 1.0


def test_rare_identifier_ranks_first(project: Path) -> None:
    store, s = _searcher(project)
    hits = s.search("read_cookie_jar", Mode.KEYWORD, 5).hits
    store.close()
    assert hits[0].name == "net.cookies.read_cookie_jar"
    assert all(h.score < hits[0].score for h in hits[1:])


def test_hybrid_uses_both_signals_and_vector_mode_works(project: Path) -> None:
    store, s = _searcher(project)
    result = s.search("automobile engine", Mode.HYBRID, 5)
    vec = s.search("car motor", Mode.VECTOR, 5)
    store.close()
    assert not result.warnings
    assert result.hits[0].path.startswith("docs/") and result.hits[0].vector > 0 and result.hits[0].keyword > 0
    assert vec.hits and all(h.vector > 0 for h in vec.hits)
    assert "garden" not in vec.hits[0].path


def test_model_mismatch_is_refused(project: Path) -> None:
    layout = IndexLayout(project / ".acms")
    other = LsaModel.fit(["completely different corpus text"] * 3 + ["another document here"], dimensions=2)
    shutil.rmtree(layout.cache_dir("lsa"))
    other.save(layout.cache_dir("lsa"))
    store, s = _searcher(project)
    with pytest.raises(ModelMismatch) as info:
        s.search("engine", Mode.VECTOR, 3)
    store.close()
    assert other.model_id in info.value.message and "reindex --embeddings" in info.value.message


def test_migration_replaces_vectors_and_interruption_keeps_old(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = IndexLayout(project / ".acms")
    store = OxigraphStore(layout.graph)
    before = active_model(store)
    assert before is not None
    vectors_before = sorted(str(q) for q in store.raw.quads_for_pattern(None, None, None, None) if "vector" in str(q.predicate))
    real = embedding_store._embed_rows

    def interrupted(provider, rows, progress=None):  # the provider dies halfway through the corpus
        real(provider, rows[: len(rows) // 2], progress)
        raise ProviderError("connection reset by peer")

    monkeypatch.setattr(embedding_store, "_embed_rows", interrupted)
    with pytest.raises(ProviderError):
        migrate(store, layout, Settings(embedding_dims=1), "lsa")
    assert active_model(store) == before
    assert sorted(str(q) for q in store.raw.quads_for_pattern(None, None, None, None) if "vector" in str(q.predicate)) == vectors_before
    monkeypatch.setattr(embedding_store, "_embed_rows", real)
    report = migrate(store, layout, Settings(embedding_dims=1), "lsa")
    after = active_model(store)
    assert after is not None and after.model_id == report.model_id != before.model_id and after.dimensions == 1
    store.close()
    store, s = _searcher(project, Settings(embedding_dims=1))
    assert s.search("engine", Mode.VECTOR, 3).hits  # queries use the migrated model
    store.close()
