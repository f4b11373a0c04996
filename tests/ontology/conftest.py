from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from acms.config import load_settings
from acms.service.indexing import IndexReport, index_project
from acms.store.oxigraph import OxigraphStore

from ..conftest import copy_of_indexed

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _fresh_webapi(dest: Path) -> Path:
    shutil.copytree(FIXTURES / "webapi_project", dest)
    (dest / "acms.toml").write_text("# acms settings of the fixture\nembed_on_index = false\n", encoding="utf-8")
    return dest


@pytest.fixture
def webapi_project(tmp_path: Path) -> Path:
    """A fresh copy of the Flask + FastAPI + Django fixture; vectors off to keep tests fast."""
    return _fresh_webapi(tmp_path / "webapi")


def index_webapi(root: Path) -> IndexReport:
    """``index_project`` with the project's own settings (its acms.toml), as ``acms index`` reads them."""
    store = OxigraphStore(root / ".acms" / "graph")
    try:
        return index_project(root, store, load_settings(root))
    finally:
        store.close()


def configure_web_api(root: Path) -> None:
    """Turn the web-api extension on in the project's acms.toml, as a user does by hand."""
    cfg = root / "acms.toml"
    cfg.write_text(cfg.read_text(encoding="utf-8") + 'extensions = ["web-api"]\n', encoding="utf-8")


def _indexed_template(tmp_path_factory: pytest.TempPathFactory, with_extension: bool) -> tuple[Path, IndexReport]:
    root = _fresh_webapi(tmp_path_factory.mktemp(f"webapi-template-{int(with_extension)}") / "webapi")
    if with_extension:
        configure_web_api(root)
    return root, index_webapi(root)


@pytest.fixture(scope="session")
def _plain_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, IndexReport]:
    """The fixture indexed once per session, and its report (the tests start from a copy)."""
    return _indexed_template(tmp_path_factory, with_extension=False)


@pytest.fixture(scope="session")
def _web_api_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, IndexReport]:
    """The fixture indexed once per session with the web-api extension configured."""
    return _indexed_template(tmp_path_factory, with_extension=True)


@pytest.fixture
def indexed_webapi(tmp_path: Path, _plain_template: tuple[Path, IndexReport]) -> Path:
    """``webapi_project`` as ``index_webapi`` leaves it."""
    return copy_of_indexed(_plain_template[0], tmp_path)


@pytest.fixture
def indexed_webapi_report(_plain_template: tuple[Path, IndexReport]) -> IndexReport:
    """The report of the index run ``indexed_webapi`` is a copy of."""
    return _plain_template[1]


@pytest.fixture
def indexed_with_api(tmp_path: Path, _web_api_template: tuple[Path, IndexReport]) -> Path:
    """``webapi_project`` as ``configure_web_api`` then ``index_webapi`` leave it."""
    return copy_of_indexed(_web_api_template[0], tmp_path)


def write_extension(root: Path, name: str, ontology: str, shapes: str | None = None,
                    rules: dict[str, str] | None = None) -> Path:
    """A minimal extension folder under ``root`` (prefixes for ex:, uko:, owl:, rdfs: predeclared)."""
    folder = root / name
    (folder / "rules").mkdir(parents=True)
    header = (
        "@prefix ex: <https://example.org/ext/" + name + "#> .\n"
        "@prefix uko: <https://w3id.org/acms/uko#> .\n"
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        "@prefix sh: <http://www.w3.org/ns/shacl#> .\n"
        "@prefix vann: <http://purl.org/vocab/vann/> .\n"
        f"<https://example.org/ext/{name}> a owl:Ontology ; owl:versionInfo \"0.1.0\" ;\n"
        f"  vann:preferredNamespaceUri \"https://example.org/ext/{name}#\" ; vann:preferredNamespacePrefix \"ex\" .\n"
    )
    (folder / "ontology.ttl").write_text(header + ontology, encoding="utf-8")
    if shapes is not None:
        (folder / "shapes.ttl").write_text(header + shapes, encoding="utf-8")
    for fname, text in (rules or {}).items():
        (folder / "rules" / fname).write_text(text, encoding="utf-8")
    return folder
