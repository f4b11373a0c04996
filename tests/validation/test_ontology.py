"""Ontology hygiene (failing, never warning), and UKO as OWL: owlready2 loads it, HermiT finds it consistent.

owlready2 reads N-Triples, not Turtle, so the ontology is converted with rdflib into a temporary file
and loaded in a fresh ``World`` (never owlready2's global default world).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import rdflib
from rdflib.namespace import OWL, RDF, RDFS, SH

from acms import resources
from acms.validation.shapes import shapes_text
from acms.vocab import UKO_NS

owlready2 = pytest.importorskip("owlready2")

DESIGN_CLASSES = ["Project", "Resource", "File", "Directory", "CodeElement", "Module", "Class", "Function",
                  "Method", "DocSection", "Fragment", "Change", "Plan", "Decision", "EmbeddingModel", "IndexRun"]
DESIGN_OBJECT_PROPERTIES = ["contains", "defines", "imports", "calls", "inherits", "references", "documents",
                            "mentions", "hasFragment"]
DESIGN_DATA_PROPERTIES = ["path", "name", "qualifiedName", "language", "text", "tokenCount", "startLine",
                          "endLine", "contentHash", "lod", "sourceRef"]
TERM_TYPES = (OWL.Class, OWL.ObjectProperty, OWL.DatatypeProperty, OWL.AnnotationProperty)
no_java = shutil.which("java") is None


@pytest.fixture(scope="module")
def uko() -> rdflib.Graph:
    return rdflib.Graph().parse(data=resources.read_text("ontology", "uko.ttl"), format="turtle")


def declared(g: rdflib.Graph) -> set[rdflib.URIRef]:
    return {s for t in TERM_TYPES for s in g.subjects(RDF.type, t) if isinstance(s, rdflib.URIRef)}


# ---------------------------------------------------------------------------------------- hygiene
def test_exactly_one_versioned_ontology(uko: rdflib.Graph) -> None:
    ontologies = list(uko.subjects(RDF.type, OWL.Ontology))
    assert len(ontologies) == 1
    onto = ontologies[0]
    assert len(list(uko.objects(onto, OWL.versionIRI))) == 1
    assert len(list(uko.objects(onto, OWL.versionInfo))) == 1
    version_iri = str(uko.value(onto, OWL.versionIRI))
    assert version_iri.endswith(str(uko.value(onto, OWL.versionInfo)))


def test_every_term_has_label_and_comment(uko: rdflib.Graph) -> None:
    terms = declared(uko)
    assert len([t for t in terms if str(t).startswith(UKO_NS)]) > 60
    missing = sorted(f"{t} lacks {p.n3(uko.namespace_manager)}" for t in terms for p in (RDFS.label, RDFS.comment)
                     if uko.value(t, p) is None)
    assert not missing, "\n".join(missing)


def test_every_uko_iri_in_the_ontology_is_declared(uko: rdflib.Graph) -> None:
    used = {t for triple in uko for t in triple if isinstance(t, rdflib.URIRef) and str(t).startswith(UKO_NS)}
    assert used <= declared(uko), sorted(used - declared(uko))


def test_shapes_use_only_declared_terms(uko: rdflib.Graph) -> None:
    shapes = rdflib.Graph().parse(data=shapes_text(), format="turtle")
    used = {t for triple in shapes for t in triple if isinstance(t, rdflib.URIRef) and str(t).startswith(UKO_NS)}
    assert used, "the shapes use no uko: term?"
    assert used <= declared(uko), sorted(used - declared(uko))
    # the non-uko paths and classes (prov:, dcterms:) must be declared in uko.ttl too
    targets = set(shapes.objects(None, SH.path)) | set(shapes.objects(None, SH.targetClass))
    targets |= set(shapes.objects(None, SH["class"]))
    assert targets <= declared(uko), sorted(targets - declared(uko))


UKO_CURIE = re.compile(r"(?<![\w:/#])uko:([A-Za-z_][\w.-]*)")
UKO_FULL = re.compile(re.escape("<" + UKO_NS) + r"([^>\s]*)>")


def query_files() -> list[tuple[str, str]]:
    files = resources.iter_files("queries", suffix=".rq") + resources.iter_files("queries", suffix=".ru")
    return [(f.name, f.read_text(encoding="utf-8")) for f in files]


def test_queries_use_only_declared_terms(uko: rdflib.Graph) -> None:
    known = {str(t) for t in declared(uko)}
    unknown = []
    for name, text in query_files():
        if re.search(r"PREFIX\s+uko:\s*<(?!" + re.escape(UKO_NS) + ")", text, re.I):
            unknown.append(f"{name}: binds the uko: prefix to another namespace")
        locals_ = [m.rstrip(".") for m in UKO_CURIE.findall(text)] + UKO_FULL.findall(text)
        unknown += [f"{name}: uko:{local}" for local in locals_ if UKO_NS + local not in known]
    assert query_files(), "no queries found"
    assert not unknown, "\n".join(unknown)


# ---------------------------------------------------------------------------------------- OWL
def owl_world(tmp_path: Path, extra: str = "") -> object:
    """A fresh owlready2 World holding UKO (plus ``extra`` Turtle), loaded from N-Triples."""
    g = rdflib.Graph().parse(data=resources.read_text("ontology", "uko.ttl"), format="turtle")
    if extra:
        g.parse(data=extra, format="turtle")
    path = tmp_path / "uko.nt"
    g.serialize(destination=path, format="nt", encoding="utf-8")
    world = owlready2.World()
    world.get_ontology(path.as_uri()).load()
    return world


def test_owlready2_loads_the_design_classes(tmp_path: Path) -> None:
    world = owl_world(tmp_path)
    for name in DESIGN_CLASSES:
        cls = world[UKO_NS + name]
        assert isinstance(cls, owlready2.ThingClass), name
    for name in DESIGN_OBJECT_PROPERTIES:
        assert isinstance(world[UKO_NS + name], owlready2.ObjectPropertyClass), name
    for name in DESIGN_DATA_PROPERTIES:
        assert isinstance(world[UKO_NS + name], owlready2.DataPropertyClass), name
    assert world[UKO_NS + "Function"] in world[UKO_NS + "CodeElement"].descendants()
    file, directory = world[UKO_NS + "File"], world[UKO_NS + "Directory"]
    assert any(directory in axiom.entities for axiom in file.disjoints())


@pytest.mark.java
@pytest.mark.skipif(no_java, reason="HermiT needs a Java runtime (`java` is not on PATH)")
def test_hermit_finds_uko_consistent(tmp_path: Path) -> None:
    world = owl_world(tmp_path)
    owlready2.sync_reasoner_hermit(world, infer_property_values=False, debug=0)
    inconsistent = list(world.inconsistent_classes())
    assert inconsistent == [], inconsistent


@pytest.mark.java
@pytest.mark.skipif(no_java, reason="HermiT needs a Java runtime (`java` is not on PATH)")
def test_hermit_detects_a_file_that_is_a_directory(tmp_path: Path) -> None:
    extra = f"""@prefix uko: <{UKO_NS}> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
    <https://example.org/t/both> a owl:NamedIndividual , uko:File , uko:Directory ."""
    world = owl_world(tmp_path, extra)
    with pytest.raises(owlready2.OwlReadyInconsistentOntologyError):
        owlready2.sync_reasoner_hermit(world, infer_property_values=False, debug=0)
