"""Vectors from a real OpenAI-compatible server on 127.0.0.1; when it fails, search keeps the keyword signal."""

from __future__ import annotations

from pathlib import Path

from acms.config import Settings
from acms.retrieval.embedding_store import active_model, migrate
from acms.retrieval.search import Mode, Searcher
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore
from tests.embeddings.test_http import Server, server  # noqa: F401 - the real local server fixture

from .test_search import project  # noqa: F401 - an indexed fixture project


def test_migrate_to_http_provider_then_survive_its_outage(project: Path, server: Server) -> None:  # noqa: F811
    settings = Settings(embedding_provider="openai", embedding_base_url=server.url, embedding_model="test-embed")
    layout = IndexLayout(project / ".acms")
    store = OxigraphStore(layout.graph)
    try:
        report = migrate(store, layout, settings, "openai")
        assert report.embedded > 0 and "test-embed" in report.model_id
        model = active_model(store)
        assert model is not None and model.model_id == report.model_id and model.dimensions == 4
        searcher = Searcher(store, layout, settings)
        ok = searcher.search("parse http header", Mode.HYBRID, 3)
        assert not ok.warnings and any(h.vector > 0 for h in ok.hits)
        server.script = [503] * 1000  # the endpoint goes down
        degraded = Searcher(store, layout, settings).search("parse http header", Mode.HYBRID, 3)
    finally:
        store.close()
    assert degraded.hits and degraded.hits[0].name == "net.headers.parseHttpHeader"
    assert all(h.vector == 0 for h in degraded.hits)
    assert any("vector signal unavailable" in w for w in degraded.warnings)


def test_a_first_index_streams_its_vectors_from_an_http_provider(tmp_path: Path, server: Server) -> None:  # noqa: F811
    """No LSA sample to read the texts (and count them) first: the stream counts them itself."""
    import shutil

    from acms.api import Index

    root, empty = tmp_path / "proj", tmp_path / "empty"
    shutil.copytree(Path(__file__).parent.parent / "fixtures" / "sample_project", root)
    empty.mkdir()
    (empty / "data.bin").write_bytes(b"\0\1\2")  # nothing with text: no fragment
    http = {"embedding_provider": "openai", "embedding_base_url": server.url, "embedding_model": "test-embed"}
    with Index.open(root, **http) as idx:
        report = idx.index()
    assert report.embedded > 5 and "test-embed" in report.embedding_model and not report.warnings
    with Index.open(empty, **http) as idx:
        nothing = idx.index()
    assert nothing.embedded == 0 and any("nothing to embed" in w for w in nothing.warnings)
