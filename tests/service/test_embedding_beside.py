"""An incremental run embeds its new fragments in a thread beside the caches' update: the index it
leaves is the one the same run made one phase after the other, the progress hears the embedding's
phase after the caches', and a failure in the thread fails the run as any phase's does."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from acms.api import Index
from acms.service.indexing import after_files
from acms.sparql import catalog

from ..conftest import copy_of_indexed
from .indexes import edit, every_quad, indexed_project

SETTINGS: dict[str, Any] = {"record_use": False}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_project(tmp_path_factory.mktemp("beside") / "proj", **SETTINGS)


@pytest.fixture
def project(indexed: Path, tmp_path: Path) -> Path:
    return copy_of_indexed(indexed, tmp_path)


class _Phases:
    def __init__(self) -> None:
        self.started: list[str] = []
        self.updates: list[tuple[str, int]] = []

    def start(self, phase: str, total: int | None = None) -> None:
        self.started.append(phase)

    def update(self, done: int, total: int | None = None) -> None:
        if self.started:
            self.updates.append((self.started[-1], done))

    def finish(self, phase: str) -> None:
        pass


def _vectors_complete(idx: Index) -> bool:
    with idx.reading() as store:
        counts = [int(store.select(catalog.text(f"embeddings/count-{what}"))[0]["n"].value)
                  for what in ("fragments", "vectors")]
    return counts[0] == counts[1] > 0


def test_the_embedding_runs_in_a_thread_and_its_phase_is_told_after_the_caches(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[str] = []
    real = after_files.embed_missing

    def recorded(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(after_files, "embed_missing", recorded)
    edit(project / "pkg" / "util.py", "return text.strip()", "return text.strip() or text")
    heard = _Phases()
    with Index.open(project, **SETTINGS) as idx:
        report = idx.index(progress=heard)
        assert report.files_indexed == 1 and report.embedded > 0
        assert _vectors_complete(idx)
    assert threads == ["acms-embedding"]
    assert heard.started.index("embeddings") > heard.started.index("caches")
    assert heard.started.index("vectors") > heard.started.index("embeddings")
    assert ("embeddings", report.embedded) in heard.updates  # told with the count it reached
    assert report.timings["embeddings"] > 0


def test_a_failure_in_the_thread_fails_the_run_and_leaves_the_previous_index(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = every_quad(project)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the embedding broke")

    monkeypatch.setattr(after_files, "embed_missing", broken)
    edit(project / "pkg" / "util.py", "return text.strip()", "return text.strip() or text")
    with Index.open(project, **SETTINGS) as idx, pytest.raises(RuntimeError, match="the embedding broke"):
        idx.index()
    assert every_quad(project) == before
    monkeypatch.undo()
    with Index.open(project, **SETTINGS) as idx:  # and the next run lands the change whole
        assert idx.index().files_indexed == 1
        assert _vectors_complete(idx)


def test_the_same_index_as_one_phase_after_the_other(project: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The run with the thread and the run without it (a store that cannot be used from two threads)
    leave the same graph."""
    other = copy_of_indexed(project, tmp_path / "other")
    for root in (project, other):
        edit(root / "pkg" / "util.py", "return text.strip()", "return text.strip() or text")
    with Index.open(project, **SETTINGS) as idx:
        assert idx.index().files_indexed == 1
    monkeypatch.setattr(after_files.AfterFiles, "_embedding_beside", lambda self, layout: None)
    with Index.open(other, **SETTINGS) as idx:
        assert idx.index().files_indexed == 1
    assert every_quad(project) == every_quad(other)
