from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from acms.config import Settings
from acms.service.index_run import IndexReport, index_project
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


@pytest.fixture
def indexed_sample(sample_project: Path) -> Path:
    run_index(sample_project)
    return sample_project
