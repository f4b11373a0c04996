"""A reader that finds the caches stale builds them, and when it cannot save them (a full disk, a cache
directory not its to write) it answers from what it built: an index run that failed on a full disk
left its own caches beside the state it rolled back, and the reader of that state answered nothing.
A writer's failure to save is the run's, and fails it whole."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

import pytest

from acms.api import Index
from acms.index.keyword import KeywordIndex
from acms.index.vectors import VectorMatrix
from acms.ranking.index import RankingIndex
from acms.retrieval.segment import Segment

from ..conftest import copy_of_indexed

CACHES = ("keyword", "ranking", "tokens", "vectors")
SAVES = (KeywordIndex, RankingIndex, Segment, VectorMatrix)


@pytest.fixture
def project(_fully_indexed_sample_template: Path, tmp_path: Path) -> Path:
    return copy_of_indexed(_fully_indexed_sample_template, tmp_path)


def _answers(root: Path) -> list[tuple[str, float, float]]:
    with Index.open(root, mode="read", refresh="off") as idx:
        return [(h.fragment, round(h.keyword, 6), round(h.vector, 6)) for h in idx.search("normalize a string", k=8).hits]


def _full_disk(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every cache's save fails as on a full disk; the names of those tried."""
    tried: list[str] = []
    for kind in SAVES:
        def full(self: object, *args: object, _name: str = kind.__name__, **kwargs: object) -> object:
            tried.append(_name)
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(kind, "save", full)
    return tried


def test_a_reader_that_cannot_save_the_caches_answers_from_what_it_built(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    want = _answers(project)
    assert want and any(vector for _, _, vector in want)  # both signals
    for name in CACHES:
        shutil.rmtree(project / ".acms" / "cache" / name)  # stale: built again by the next reader
    with monkeypatch.context() as patch:
        tried = _full_disk(patch)
        assert _answers(project) == want
    assert {"KeywordIndex", "RankingIndex", "VectorMatrix"} <= set(tried)
    assert not [p for p in (project / ".acms" / "cache").iterdir() if p.name in CACHES]  # nothing half-written
    assert _answers(project) == want  # a reader that can save: saved, and the same answers


def test_a_writer_that_cannot_save_the_caches_fails_whole(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    util = project / "pkg" / "util.py"
    util.write_text(util.read_text() + "\n\ndef added_here() -> int:\n    return 1\n")
    with monkeypatch.context() as patch:
        _full_disk(patch)
        with Index.open(project) as idx, pytest.raises(OSError, match="No space left"):
            idx.index()
    with Index.open(project, mode="read", refresh="off") as idx:
        assert not [h for h in idx.search("added_here", k=3).hits if "added_here" in h.name]  # the old state
