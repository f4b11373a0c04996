from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from acms.cli.main import cli
from acms.config import Settings
from acms.service.indexing import IndexReport, index_project
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore

from ..conftest import copy_of_indexed

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "adr_project"


def index(root: Path) -> IndexReport:
    layout = IndexLayout(root / ".acms")
    store = OxigraphStore(layout.graph)
    try:
        return index_project(root, store, Settings(embed_on_index=False), layout=layout)
    finally:
        store.close()


def open_store(root: Path) -> OxigraphStore:
    return OxigraphStore(IndexLayout(root / ".acms").graph)


def acms(root: Path, *args: str) -> tuple[int, str, str]:
    """One CLI call against the project at ``root``: (exit code, stdout, stderr)."""
    result = CliRunner().invoke(cli, [*args, "-C", str(root)], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="session")
def _indexed_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ADR project indexed once per session: most tests here write plans and decisions into a copy."""
    root = tmp_path_factory.mktemp("adr-template") / "adr_project"
    shutil.copytree(FIXTURE, root)
    index(root)
    return root


@pytest.fixture
def project(tmp_path: Path, _indexed_template: Path) -> Path:
    """A fresh indexed copy of the ADR project."""
    return copy_of_indexed(_indexed_template, tmp_path)
