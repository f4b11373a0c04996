from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from acms.config import Settings
from acms.removal import removals_settled
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


def copy_of_indexed(template: Path, parent: Path) -> Path:
    """A copy of an indexed project under ``parent``, far cheaper than indexing it again: the same folder
    name (the same IRIs), the files with their times (a look finds nothing changed), the store closed (a
    plain copy is a whole store; what this process moved aside is gone first, ``acms.removal``)."""
    removals_settled()
    return Path(shutil.copytree(template, parent / template.name))


@pytest.fixture(scope="session")
def _indexed_sample_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample project indexed once per session by ``run_index`` (about a hundred tests want one)."""
    root = tmp_path_factory.mktemp("indexed-template") / "sample"
    shutil.copytree(FIXTURES / "sample_project", root)
    run_index(root)
    return root


@pytest.fixture(scope="session")
def _fully_indexed_sample_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample project indexed once per session as ``acms index`` does it (``Index.index``: the files,
    tiers, vectors and the derived caches beside the store)."""
    from acms.api import Index

    root = tmp_path_factory.mktemp("fully-indexed-template") / "sample"
    shutil.copytree(FIXTURES / "sample_project", root)
    with Index.open(root) as idx:
        idx.index()
    return root


@pytest.fixture
def indexed_sample(sample_project: Path, _indexed_sample_template: Path) -> Path:
    """A fresh copy of the sample project with its own index: the session's template copied whole, in
    place of ``sample_project`` (a test may ask for both)."""
    shutil.rmtree(sample_project)
    return copy_of_indexed(_indexed_sample_template, sample_project.parent)
