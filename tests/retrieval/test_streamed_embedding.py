"""A first index embeds as a stream (issue 14): the vector cache it writes is the one a rebuild from the
graph gives, with the model fitted on every fragment or (past FIT_SAMPLE) on a hash sample of them."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from acms.api import Index
from acms.index.vectors import VectorMatrix
from acms.retrieval import embedding_store
from acms.retrieval.caches import DerivedCaches


@pytest.mark.parametrize("sample", [None, 5])
def test_streamed_vectors_match_a_rebuild_from_the_graph(sample_project: Path, monkeypatch: pytest.MonkeyPatch,
                                                          sample: int | None) -> None:
    if sample is not None:
        monkeypatch.setattr(embedding_store, "FIT_SAMPLE", sample)
        monkeypatch.setattr(embedding_store, "STREAM_BATCH", 3)
    with Index.open(sample_project, embedding_dims=4) as idx:
        report = idx.index()
        assert report.embedded > 5
        layout = idx.layout
        written = VectorMatrix.load(layout.cache_dir("vectors"))
        assert written is not None and len(written.ids) == report.embedded
        shutil.rmtree(layout.cache_dir("vectors"))
        caches = DerivedCaches(idx.store, layout)
        rebuilt = caches.vectors(written.model_id)
        assert caches.rebuilt == ["vectors"]
        assert written.key == caches.state_key
        assert rebuilt.ids == written.ids == sorted(written.ids)
        np.testing.assert_array_equal(np.asarray(rebuilt.matrix), np.asarray(written.matrix))


def test_a_query_stream_reads_the_store_as_it_began(tmp_path: Path) -> None:
    """What the streamed embedding relies on: bulk loads into the store while a query's rows are read
    (rows the query would match among them) neither show up in nor disturb the rows (pyoxigraph 0.5)."""
    import pyoxigraph as ox

    store = ox.Store(str(tmp_path / "s"))
    p, g = ox.NamedNode("urn:p"), ox.NamedNode("urn:g")
    store.bulk_extend([ox.Quad(ox.NamedNode(f"urn:s{i}"), p, ox.Literal(f"t{i}"), g) for i in range(3000)])
    seen = []
    for k, row in enumerate(store.query("SELECT ?s ?o WHERE { GRAPH ?g { ?s <urn:p> ?o } }")):
        seen.append(row[0].value)
        if k % 500 == 0:
            store.bulk_extend([ox.Quad(ox.NamedNode(f"urn:n{k}-{i}"), p, ox.Literal("n"), g) for i in range(500)])
            store.bulk_extend([ox.Quad(row[0], ox.NamedNode("urn:v"), ox.Literal("v"), g)])
    assert sorted(seen) == sorted(f"urn:s{i}" for i in range(3000))
    assert len(store) == 3000 + 6 * 501


def test_vectors_folded_in_a_worker_are_those_folded_here(tmp_path: Path, sample_project: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from acms.retrieval import embedding_fold

    monkeypatch.setattr(embedding_store, "STREAM_BATCH", 3)  # many batches, each written while the next folds
    made = []
    real = embedding_fold.Folder.__enter__
    for worker_from in (10**9, 1):
        monkeypatch.setattr(embedding_fold, "WORKER_FROM", worker_from)
        root = tmp_path / f"copy-{worker_from}"
        shutil.copytree(sample_project, root, ignore=shutil.ignore_patterns(".acms"))
        seen: list[bool] = []

        def noting(self: embedding_fold.Folder, seen: list[bool] = seen) -> embedding_fold.Folder:
            seen.append(self.in_worker)
            return real(self)

        monkeypatch.setattr(embedding_fold.Folder, "__enter__", noting)
        with Index.open(root, embedding_dims=4, project_name="proj") as idx:  # the same IRIs in both
            report = idx.index()
            written = VectorMatrix.load(idx.layout.cache_dir("vectors"))
        assert written is not None and len(written.ids) == report.embedded > 6
        assert seen == [worker_from == 1]
        made.append(written)
    assert made[0].model_id == made[1].model_id
    assert made[0].ids == made[1].ids
    np.testing.assert_array_equal(np.asarray(made[0].matrix), np.asarray(made[1].matrix))


def test_a_re_index_embeds_only_the_new_fragments_with_the_index_model(sample_project: Path, tmp_path: Path) -> None:
    from acms.index.vectors import decode
    from acms.sparql import catalog

    root = tmp_path / "proj"
    shutil.copytree(sample_project, root, ignore=shutil.ignore_patterns(".acms"))
    with Index.open(root, embedding_dims=4) as idx:
        first = idx.index()
        assert idx.index().embedded == 0  # unchanged: nothing to embed
        before = {r["frag"].value for r in idx.store.select(
            'SELECT ?frag WHERE { GRAPH ?g { ?frag uko:lod "micro" ; uko:inFile ?file } '
            'FILTER(STRENDS(STR(?file), "/pkg/util.py")) }')}
        util = root / "pkg" / "util.py"
        util.write_text(util.read_text() + "\n\ndef shout(text: str) -> str:\n    return text.upper() + '!'\n")
        again = idx.index()
        store = idx.store
        rows = store.select("SELECT ?frag ?text ?v ?file WHERE { GRAPH ?g { ?frag uko:lod \"micro\" ; uko:text ?text ; "
                            "uko:vector ?v ; uko:inFile ?file } FILTER(?g != <https://w3id.org/acms/tier/cold>) }")
        assert store.select(catalog.text("embeddings/unembedded")) == []  # every searchable fragment has one
        provider = embedding_store.make_provider("lsa", idx.settings, idx.layout)
        assert again.embedding_model == first.embedding_model == provider.model_id
        new = [r for r in rows if "shout" in r["text"].value]
        redone = [r for r in rows if r["file"].value.endswith("/pkg/util.py")]
        # the changed file's fragments under new IRIs only: those it kept (same text, same start) keep their
        # vector; not the whole index, nor the whole file
        renamed = [r for r in redone if r["frag"].value not in before]
        assert again.embedded == len(renamed) < len(redone) < first.embedded and new
        for r in redone:  # kept or new, each is the vector its text gets from the index's model now
            np.testing.assert_allclose(decode(r["v"].value), np.asarray(provider.embed([r["text"].value])[0]),
                                       rtol=1e-5, atol=1e-6)
