from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from acms.config import Settings
from acms.service.indexing import IndexReport, index_project
from acms.store.oxigraph import OxigraphStore

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def sample_project(tmp_path: Path) -> Path:
    """A fresh copy of the sample project (a plain directory, no git)."""
    dest = tmp_path / "sample"
    shutil.copytree(FIXTURES / "sample_project", dest)
    return dest


def run_index(root: Path, settings: Settings | None = None) -> IndexReport:
    store = OxigraphStore(root / ".acms" / "graph")
    try:
        return index_project(root, store, settings or Settings())
    finally:
        store.close()


@pytest.fixture(scope="session")
def _indexed_sample_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample project indexed once per session (0.7 s an index; about a hundred tests want one)."""
    root = tmp_path_factory.mktemp("indexed-template") / "sample"
    shutil.copytree(FIXTURES / "sample_project", root)
    run_index(root)
    return root


@pytest.fixture
def indexed_sample(sample_project: Path, _indexed_sample_template: Path) -> Path:
    """A fresh copy of the sample project with its own index: the session's template copied whole
    (files with their times, so a look finds nothing changed; the store closed, so a plain copy)."""
    shutil.rmtree(sample_project)
    shutil.copytree(_indexed_sample_template, sample_project)
    return sample_project
