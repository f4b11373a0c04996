"""`acms ontology check`: the shipped extension passes; each kind of bad extension is rejected, by name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from acms.cli.main import cli
from acms.ontology.check import Level, check_extension
from acms.ontology.extensions import load_extension
from tests.ontology.conftest import write_extension

java = pytest.mark.skipif(shutil.which("java") is None, reason="owlready2's HermiT needs a Java runtime")

GOOD = """
ex:Service a owl:Class ; rdfs:subClassOf uko:Class ; rdfs:label "service"@en ; rdfs:comment "A service class."@en .
ex:owner a owl:DatatypeProperty ; rdfs:label "owner"@en ; rdfs:comment "The owning team."@en ; rdfs:domain ex:Service .
"""


def errors(folder: Path, reasoner: bool = False) -> list[str]:
    report = check_extension(load_extension(str(folder)), reasoner=reasoner)
    return [f"[{f.check}] {f.message}" for f in report.findings if f.level is Level.ERROR]


def test_web_api_passes_every_check() -> None:
    report = check_extension(load_extension("web-api"), reasoner=False)
    assert report.ok, report.findings
    assert report.checks_run == ["parse", "namespace", "no-redefinition", "labels", "owlready-safety", "shapes", "rules"]
    assert load_extension("web-api").prefix == "api"


def test_a_good_minimal_extension_passes(tmp_path: Path) -> None:
    assert errors(write_extension(tmp_path, "good", GOOD)) == []


def test_redefining_a_uko_term_is_rejected_naming_it(tmp_path: Path) -> None:
    bad = write_extension(tmp_path, "redef", GOOD + "uko:Function rdfs:subClassOf ex:Service .\n")
    errs = errors(bad)
    assert len(errs) == 1
    assert errs[0].startswith("[no-redefinition] uko:Function is an existing UKO term")
    assert "uko:Function rdfs:subClassOf ex:Service" in errs[0]


def test_new_domain_on_a_uko_property_is_rejected(tmp_path: Path) -> None:
    errs = errors(write_extension(tmp_path, "dom", GOOD + "uko:calls rdfs:domain ex:Service .\n"))
    assert any("uko:calls is an existing UKO term" in e for e in errs)


def test_missing_label_and_comment(tmp_path: Path) -> None:
    errs = errors(write_extension(tmp_path, "nolabel", GOOD + "ex:Queue a owl:Class ; rdfs:subClassOf uko:Class .\n"))
    assert errs == ["[labels] ex:Queue has no rdfs:label", "[labels] ex:Queue has no rdfs:comment"]


def test_terms_outside_the_own_namespace(tmp_path: Path) -> None:
    other = '<https://elsewhere.org/x#Thing> a owl:Class ; rdfs:label "t" ; rdfs:comment "t" .\n'
    errs = errors(write_extension(tmp_path, "ns", GOOD + other))
    assert errs == ["[namespace] term <https://elsewhere.org/x#Thing> is outside the extension's namespace "
                    "https://example.org/ext/ns#: an extension defines terms only in its own namespace"]


def test_invalid_shapes_fail_shacl_shacl(tmp_path: Path) -> None:
    shapes = 'ex:S a sh:NodeShape ; sh:targetClass ex:Service ; sh:property [ sh:path ex:owner ; sh:minCount "one" ] .\n'
    errs = errors(write_extension(tmp_path, "shapes", GOOD, shapes=shapes))
    assert errs and all(e.startswith("[shapes]") for e in errs)
    assert any("SHACL-SHACL" in e for e in errs)


def test_rules_must_parse_and_only_insert(tmp_path: Path) -> None:
    rules = {
        "a.ru": "INSERT { GRAPH ?g { ?s a ex:Service } } WHERE { GRAPH ?g { ?s a uko:Class } }",
        "b.ru": "DELETE { GRAPH ?g { ?s ?p ?o } } WHERE { GRAPH ?g { ?s ?p ?o } }",
        "c.ru": "INSERT { ?s a ex:Service } WHERE { ?s a uko:Class",
    }
    errs = errors(write_extension(tmp_path, "rules", GOOD, rules=rules))
    assert errs[0] == "[rules] rules/b.ru uses DELETE: rules may only INSERT (removal relies on it)"
    assert errs[1].startswith("[rules] rules/c.ru does not parse:")
    assert len(errs) == 2


def test_owlready_python_module_is_refused(tmp_path: Path) -> None:
    evil = ('<https://example.org/ext/evil> <http://www.lesfleursdunormal.fr/static/_downloads/'
            'owlready_ontology.owl#python_module> "os" .\n')
    errs = errors(write_extension(tmp_path, "evil", GOOD + evil))
    assert any(e.startswith("[owlready-safety] owlready2's python_module annotation is refused") for e in errs)


def test_cli_check_exit_codes(tmp_path: Path) -> None:
    bad = write_extension(tmp_path, "redef", GOOD + "uko:Function rdfs:subClassOf ex:Service .\n")
    result = CliRunner().invoke(cli, ["ontology", "check", str(bad), "--no-reasoner"])
    assert result.exit_code == 6
    assert "error: [no-redefinition] uko:Function is an existing UKO term" in result.stdout
    result = CliRunner().invoke(cli, ["ontology", "check", "web-api", "--no-reasoner", "--json"])
    assert result.exit_code == 0 and '"ok": true' in result.stdout
    result = CliRunner().invoke(cli, ["ontology", "check", "no-such-extension"])
    assert result.exit_code == 2 and "no extension 'no-such-extension'" in result.stderr
    # rejected with --json: the report is the one JSON document (the exit code says rejected), and
    # stderr says so in one line
    result = CliRunner().invoke(cli, ["ontology", "check", str(bad), "--no-reasoner", "--json"])
    assert result.exit_code == 6 and json.loads(result.stdout)["ok"] is False
    assert result.stderr.strip().startswith("acms: error: extension redef rejected: 1 error(s)")


@java
def test_reasoner_rejects_a_class_disjoint_with_its_superclass(tmp_path: Path) -> None:
    axioms = ('ex:Broken a owl:Class ; rdfs:subClassOf ex:Service ; owl:disjointWith ex:Service ;\n'
              '  rdfs:label "broken"@en ; rdfs:comment "Disjoint with its own superclass."@en .\n')
    errs = errors(write_extension(tmp_path, "unsat", GOOD + axioms), reasoner=True)
    assert errs == ["[reasoner] HermiT: ex:Broken is unsatisfiable (no individual can be one; e.g. it is declared "
                    "disjoint with one of its own superclasses)"]


@java
def test_reasoner_rejects_a_class_under_two_disjoint_uko_classes(tmp_path: Path) -> None:
    axioms = ('ex:Both a owl:Class ; rdfs:subClassOf uko:Function , uko:Method ;\n'
              '  rdfs:label "both"@en ; rdfs:comment "A function and a method at once."@en .\n'
              'ex:thing a owl:NamedIndividual , ex:Both .\n')
    report = check_extension(load_extension(str(write_extension(tmp_path, "incons", GOOD + axioms))), reasoner=True)
    assert not report.ok
    assert [f.message for f in report.errors()] == ["HermiT: the extension together with UKO is inconsistent"]


@java
def test_reasoner_accepts_web_api() -> None:
    report = check_extension(load_extension("web-api"), reasoner=True)
    assert report.ok
    assert report.findings[-1].message.startswith("HermiT: consistent with UKO, every class satisfiable")


def test_reasoner_skips_without_java(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    report = check_extension(load_extension("web-api"), reasoner=True)
    assert report.ok
    assert report.findings[-1].level is Level.NOTE and "no Java runtime" in report.findings[-1].message
