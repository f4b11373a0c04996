"""An index built by another way of reading files (a changed language capture file, a bumped extractor)
is read again whole: an unchanged file must not keep what an older acms made of it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from acms.api import Index
from acms.ingest import version
from acms.service.indexing import context as index_context
from acms.service.indexing import run as index_run

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sample_project"


def test_a_changed_extractor_rereads_every_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "proj"
    shutil.copytree(FIXTURE, root)
    with Index.open(root, embed_on_index=False) as idx:
        first = idx.index()
        assert first.files_indexed > 3
        again = idx.index()
        assert again.files_indexed == 0 and not again.ontology  # same extractor: nothing to do
        changed_version = version.extractor_version() + "-changed"
        monkeypatch.setattr(index_run, "extractor_version", lambda: changed_version)  # what the run compares
        monkeypatch.setattr(index_context, "extractor_version", lambda: changed_version)  # what it records
        changed = idx.index()
        assert changed.files_indexed == first.files_indexed
        assert any("extraction changed" in reason for reason in changed.ontology)
        assert "deleting" in changed.timings and not changed.first_run  # streamed (indexing.reindex), not one batch
        assert idx.index().files_indexed == 0  # recorded: the next run has nothing to redo
