"""UKO versioning: the version is read from uko.ttl; older indexes migrate, newer ones are refused;
an extension configured or dropped by hand migrates the same way."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest
from click.testing import CliRunner

from acms.cli.main import cli
from acms.config import load_settings
from acms.service.indexing import IndexReport, index_project
from acms.ontology.versioning import stored_versions, uko_version
from acms.store.oxigraph import OxigraphStore
from acms import resources

SET_VERSION = """
DELETE { GRAPH <https://w3id.org/acms/graph/ontology> { <https://w3id.org/acms/uko> owl:versionInfo ?v } }
INSERT { GRAPH <https://w3id.org/acms/graph/ontology> { <https://w3id.org/acms/uko> owl:versionInfo "VERSION" } }
WHERE { GRAPH <https://w3id.org/acms/graph/ontology> { <https://w3id.org/acms/uko> owl:versionInfo ?v } } ;
DELETE { GRAPH <https://w3id.org/acms/graph/meta> { ?r uko:ukoVersion ?v } }
INSERT { GRAPH <https://w3id.org/acms/graph/meta> { ?r uko:ukoVersion "VERSION" } }
WHERE { GRAPH <https://w3id.org/acms/graph/meta> { ?r uko:ukoVersion ?v } }
"""


def index(root: Path) -> IndexReport:
    store = OxigraphStore(root / ".acms" / "graph")
    try:
        return index_project(root, store, load_settings(root))
    finally:
        store.close()


def with_store(root: Path, fn):  # type: ignore[no-untyped-def]
    store = OxigraphStore(root / ".acms" / "graph")
    try:
        return fn(store)
    finally:
        store.close()


def test_uko_version_is_read_from_the_ontology_file(webapi_project: Path) -> None:
    text = resources.read_text("ontology", "uko.ttl")
    infos = [t.object.value for t in ox.parse(text, format=ox.RdfFormat.TURTLE)
             if t.predicate.value.endswith("#versionInfo") and t.subject.value == "https://w3id.org/acms/uko"]
    assert infos == [uko_version()]
    index(webapi_project)
    assert with_store(webapi_project, stored_versions) == (uko_version(), uko_version())


def test_an_older_index_is_migrated_not_mixed(webapi_project: Path) -> None:
    first = index(webapi_project)
    with_store(webapi_project, lambda s: s.update(SET_VERSION.replace("VERSION", "1.0.0")))
    assert with_store(webapi_project, stored_versions) == ("1.0.0", "1.0.0")
    report = index(webapi_project)
    assert report.ontology == [f"UKO 1.0.0 → {uko_version()} (ontology graph): ontology graph reloaded, every file re-indexed"]
    assert report.files_indexed == first.files_indexed and report.files_unchanged == 0
    assert with_store(webapi_project, stored_versions) == (uko_version(), uko_version())
    assert index(webapi_project).up_to_date


def test_a_newer_index_is_refused(webapi_project: Path) -> None:
    index(webapi_project)
    with_store(webapi_project, lambda s: s.update(SET_VERSION.replace("VERSION", "99.0.0")))
    result = CliRunner().invoke(cli, ["index", str(webapi_project)])
    assert result.exit_code == 4
    assert f"built with UKO 99.0.0 (ontology graph), newer than this acms knows ({uko_version()})" in result.stderr


def footprint_size(root: Path) -> int:
    rows = with_store(root, lambda s: s.select(
        "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } FILTER(?g != <https://w3id.org/acms/graph/ontology>)"
        " FILTER(STRSTARTS(STR(?p), 'https://w3id.org/acms/ext/web-api#') ||"
        " STRSTARTS(STR(?o), 'https://w3id.org/acms/ext/web-api#')) }"))
    return int(rows[0]["n"].value)


def test_configuring_an_extension_by_hand_migrates(webapi_project: Path) -> None:
    index(webapi_project)
    cfg = webapi_project / "acms.toml"
    original = cfg.read_text(encoding="utf-8")
    cfg.write_text(original + 'extensions = ["web-api"]\n', encoding="utf-8")
    report = index(webapi_project)
    assert report.ontology == ["extension web-api configured: its rules run over every file"]
    assert report.files_unchanged == 0 and report.derived == 117
    assert footprint_size(webapi_project) > 0
    assert index(webapi_project).up_to_date
    cfg.write_text(original, encoding="utf-8")
    report = index(webapi_project)
    assert report.ontology == ["extension web-api no longer configured: its triples are dropped"]
    assert footprint_size(webapi_project) == 0
