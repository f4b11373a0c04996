"""UKO versioning: the version is read from uko.ttl; older indexes migrate, newer ones are refused;
an extension configured or dropped by hand migrates the same way."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
from click.testing import CliRunner

from acms import resources
from acms.cli.main import cli
from acms.ontology.versioning import stored_versions, uko_version
from acms.service.indexing import IndexReport
from acms.store.oxigraph import OxigraphStore

from .conftest import index_webapi

SET_VERSION = """
DELETE { GRAPH <https://w3id.org/acms/graph/ontology> { <https://w3id.org/acms/uko> owl:versionInfo ?v } }
INSERT { GRAPH <https://w3id.org/acms/graph/ontology> { <https://w3id.org/acms/uko> owl:versionInfo "VERSION" } }
WHERE { GRAPH <https://w3id.org/acms/graph/ontology> { <https://w3id.org/acms/uko> owl:versionInfo ?v } } ;
DELETE { GRAPH <https://w3id.org/acms/graph/meta> { ?r uko:ukoVersion ?v } }
INSERT { GRAPH <https://w3id.org/acms/graph/meta> { ?r uko:ukoVersion "VERSION" } }
WHERE { GRAPH <https://w3id.org/acms/graph/meta> { ?r uko:ukoVersion ?v } }
"""


def with_store(root: Path, fn):  # type: ignore[no-untyped-def]
    store = OxigraphStore(root / ".acms" / "graph")
    try:
        return fn(store)
    finally:
        store.close()


def test_uko_version_is_read_from_the_ontology_file(indexed_webapi: Path) -> None:
    text = resources.read_text("ontology", "uko.ttl")
    infos = [t.object.value for t in ox.parse(text, format=ox.RdfFormat.TURTLE)
             if t.predicate.value.endswith("#versionInfo") and t.subject.value == "https://w3id.org/acms/uko"]
    assert infos == [uko_version()]
    assert with_store(indexed_webapi, stored_versions) == (uko_version(), uko_version())


def test_an_older_index_is_migrated_not_mixed(indexed_webapi: Path, indexed_webapi_report: IndexReport) -> None:
    first = indexed_webapi_report
    with_store(indexed_webapi, lambda s: s.update(SET_VERSION.replace("VERSION", "1.0.0")))
    assert with_store(indexed_webapi, stored_versions) == ("1.0.0", "1.0.0")
    report = index_webapi(indexed_webapi)
    assert report.ontology == [f"UKO 1.0.0 → {uko_version()} (ontology graph): ontology graph reloaded, every file re-indexed"]
    assert report.files_indexed == first.files_indexed and report.files_unchanged == 0
    assert with_store(indexed_webapi, stored_versions) == (uko_version(), uko_version())
    assert index_webapi(indexed_webapi).up_to_date


def test_a_newer_index_is_refused(indexed_webapi: Path) -> None:
    with_store(indexed_webapi, lambda s: s.update(SET_VERSION.replace("VERSION", "99.0.0")))
    result = CliRunner().invoke(cli, ["index", str(indexed_webapi)])
    assert result.exit_code == 4
    assert f"built with UKO 99.0.0 (ontology graph), newer than this acms knows ({uko_version()})" in result.stderr


def footprint_size(root: Path) -> int:
    rows = with_store(root, lambda s: s.select(
        "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } FILTER(?g != <https://w3id.org/acms/graph/ontology>)"
        " FILTER(STRSTARTS(STR(?p), 'https://w3id.org/acms/ext/web-api#') ||"
        " STRSTARTS(STR(?o), 'https://w3id.org/acms/ext/web-api#')) }"))
    return int(rows[0]["n"].value)


def test_configuring_an_extension_by_hand_migrates(indexed_webapi: Path) -> None:
    cfg = indexed_webapi / "acms.toml"
    original = cfg.read_text(encoding="utf-8")
    cfg.write_text(original + 'extensions = ["web-api"]\n', encoding="utf-8")
    report = index_webapi(indexed_webapi)
    assert report.ontology == ["extension web-api configured: its rules run over every file"]
    assert report.files_unchanged == 0 and report.derived == 117
    assert footprint_size(indexed_webapi) > 0
    assert index_webapi(indexed_webapi).up_to_date
    cfg.write_text(original, encoding="utf-8")
    report = index_webapi(indexed_webapi)
    assert report.ontology == ["extension web-api no longer configured: its triples are dropped"]
    assert footprint_size(indexed_webapi) == 0
