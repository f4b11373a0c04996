"""Every operation the CLI offers is a call of the façade: the operation groups (ontology, tiers,
plans, embeddings, export) and the whole-index operations answer what the commands print, on one
indexed copy of the sample project shared by the module."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest

import acms.results
from acms.api import Index
from acms.errors import UsageError
from acms.results import ExportScope

from .conftest import copy_of_indexed


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, _fully_indexed_sample_template: Path) -> Path:
    """The whole run (files, tiers, vectors, caches): a copy of the session's."""
    return copy_of_indexed(_fully_indexed_sample_template, tmp_path_factory.mktemp("ops"))


@pytest.fixture
def reader(project: Path) -> Iterator[Index]:
    with Index.open(project, mode="read", create=False, refresh="off") as idx:
        yield idx


def cli_json(project: Path, *args: str) -> object:
    done = subprocess.run([sys.executable, "-m", "acms", *args, "-C", str(project), "--json"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_every_result_type_resolves() -> None:
    for name in acms.results.__all__:
        assert getattr(acms.results, name) is not None, name
    with pytest.raises(AttributeError):
        importlib.import_module("acms.results").NoSuchThing  # noqa: B018


def test_stats_and_tiers_are_what_the_commands_print(project: Path, reader: Index) -> None:
    stats = reader.stats().as_dict()
    assert stats["classes"]["Class"] == 2 and stats["languages"]["python"]["files"] >= 3
    assert json.loads(json.dumps(stats)) == cli_json(project, "stats")
    tiers = reader.tiers.counts().as_dict()
    assert set(tiers["tiers"]) == {"hot", "warm", "cold"} and json.loads(json.dumps(tiers)) == cli_json(project, "tiers")
    assert reader.tiers.check().ok and reader.tiers.check().as_dict() == {"ok": True, "violations": []}


def test_project_identity_is_the_index_s(project: Path, reader: Index) -> None:
    assert reader.project_name == "sample" and reader.location == project / ".acms"
    with Index.open(project, mode="read", create=False, project_name="renamed") as other:
        assert other.project_name == "renamed"


def test_formatted_answers_and_their_refusals(reader: Index) -> None:
    table = reader.answer("SELECT ?c WHERE { ?c a uko:Class } ORDER BY ?c")
    assert table.form == "select" and table.variables == ["c"] and len(table.rows) == 2
    assert table.rows[0][0].endswith("pkg.mod.Base")
    as_json = json.loads(reader.answer("SELECT ?c WHERE { ?c a uko:Class }", fmt="json").text)
    assert len(as_json["results"]["bindings"]) == 2
    assert reader.answer("ASK { ?c a uko:Class }").text == "true"
    triples = reader.answer("CONSTRUCT { ?c a uko:Class } WHERE { ?c a uko:Class }", fmt="ntriples").text
    assert len(list(ox.parse(triples.encode(), format=ox.RdfFormat.N_TRIPLES))) == 2
    with pytest.raises(UsageError, match="is for CONSTRUCT/DESCRIBE"):
        reader.answer("SELECT ?c WHERE { ?c a uko:Class }", fmt="turtle")
    with pytest.raises(UsageError, match="is for SELECT/ASK"):
        reader.answer("CONSTRUCT { ?c a uko:Class } WHERE { ?c a uko:Class }", fmt="csv")
    bound = reader.answer("SELECT ?n WHERE { ?c uko:qualifiedName ?n FILTER(?n = ?want) }",
                          Index.bindings({"want": "pkg.mod.Parser"}))
    assert bound.rows == [["pkg.mod.Parser"]]


def test_export_of_a_neighbourhood_and_its_scope_checks(reader: Index) -> None:
    text = reader.export.text("nquads", ExportScope(entity="pkg.mod.Parser", depth=1))
    subjects = {q.subject.value for q in ox.parse(text.encode(), format=ox.RdfFormat.N_QUADS)}
    assert any(s.endswith("#pkg.mod.Parser") for s in subjects)
    assert any(s.endswith("#pkg.mod.Parser.parse_header") for s in subjects)
    dot = reader.export.text("dot", ExportScope(modules=True))
    assert dot.startswith("digraph")
    with pytest.raises(UsageError, match="choose one scope"):
        ExportScope(tier="hot", modules=True)
    with pytest.raises(UsageError, match="no entity matches"):
        reader.export.text("turtle", ExportScope(entity="no_such_thing_anywhere"))


def test_embeddings_status(reader: Index) -> None:
    status = reader.embeddings.status()
    assert status.model and status.coverage == 1.0 and not status.stale and not status.mismatch
    assert status.configured_model == status.model


def test_ontology_operations(project: Path, reader: Index) -> None:
    assert [o.name for o in reader.ontology.list()][0] == "uko"
    term = reader.ontology.describe("uko:Function")
    assert term.label and term.instances >= 1
    checked = Index.check_extension("web-api", project, reasoner=False)
    assert checked.ok and checked.name == "web-api"
    with pytest.raises(UsageError, match="shipped: web-api"):
        Index.check_extension("no-such-extension", project, reasoner=False)


def test_plans_and_decisions_through_the_facade(project: Path) -> None:
    with Index.open(project, create=False, refresh="off") as writer:
        iri = writer.plans.create("speed-up")
        assert iri.startswith("https://w3id.org/acms/id/sample/")  # named by the project's identity
        recorded = writer.plans.record("Parse headers lazily", plan="speed-up", about=["pkg.mod.Parser"])
        assert not isinstance(recorded, str) and recorded.plan == "speed-up"
        tree = writer.plans.show("speed-up")
        assert [p.name for p in tree.plans] == ["speed-up"] and tree.plans[0].decisions[0].id == recorded.id
        about = writer.plans.decisions("pkg.mod.Parser")
        assert [d.id for d in about] == [recorded.id]
    assert cli_json(project, "decision", "list") == [d.as_dict() for d in about]


def test_validate_conforms(reader: Index) -> None:
    result = reader.validate()
    assert result.conforms and result.as_dict() == {"conforms": True, "violations": []}
