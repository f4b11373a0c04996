from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent.parent / "fixtures"


@pytest.fixture
def webapi_project(tmp_path: Path) -> Path:
    """A fresh copy of the Flask + FastAPI + Django fixture; vectors off to keep tests fast."""
    dest = tmp_path / "webapi"
    shutil.copytree(FIXTURES / "webapi_project", dest)
    (dest / "acms.toml").write_text("# acms settings of the fixture\nembed_on_index = false\n", encoding="utf-8")
    return dest


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
