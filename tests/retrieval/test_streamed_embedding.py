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
