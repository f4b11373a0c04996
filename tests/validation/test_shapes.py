"""The SHACL shapes against paired valid/invalid fixtures, and the compiled SPARQL checks against pyshacl.

Each fixture under ``tests/fixtures/shapes/`` is loaded together with ``_context.ttl`` (valid nodes of
every class it may link to) and names the results it must produce in ``# expect:`` lines:
``focus sourceShape path constraint``. An invalid case must fire exactly those, so a shape cannot pass
for the wrong reason; the compiled checks must give pyshacl's results on every fixture.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib

from acms.errors import ConfigError
from acms.validation.reference import pyshacl_validate
from acms.validation.shapes import (
    SH,
    SHAPES_NS,
    Violation,
    compile_shapes,
    shapes_text,
    shipped_checks,
    validate_quads,
    validate_store,
)
from acms.vocab import PREFIXES, RDF_NS

FIXTURES = Path(__file__).parents[1] / "fixtures" / "shapes"
CONTEXT = FIXTURES / "_context.ttl"
CURIES = {"ex": "https://example.org/t/", "ukosh": SHAPES_NS, **PREFIXES}
ALL_FIXTURES = sorted(p for p in FIXTURES.glob("*.ttl") if not p.name.startswith("_"))
VALID = [p for p in ALL_FIXTURES if ".valid" in p.name]
INVALID = [p for p in ALL_FIXTURES if ".invalid-" in p.name]
DATA = ox.NamedNode("urn:test:data")
OTHER = ox.NamedNode("urn:test:context")

Key = tuple[str, str, str, str]


def expand(curie: str) -> str:
    if curie == "-":
        return ""
    prefix, _, local = curie.partition(":")
    return CURIES[prefix] + local


def expected(path: Path) -> set[Key]:
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# expect:"):
            focus, shape, prop, constraint = line.removeprefix("# expect:").split()
            out.add((expand(focus), expand(shape), expand(prop), constraint))
    return out


def keys(violations: list[Violation]) -> set[Key]:
    return {v.key() for v in violations}


@cache
def reference(path: Path) -> frozenset[Violation]:
    """pyshacl's results on context + fixture (cached: several tests compare against them)."""
    g = rdflib.Graph()
    g.parse(CONTEXT, format="turtle")
    g.parse(path, format="turtle")
    return frozenset(pyshacl_validate(g))


def store_with(path: Path, fixture_graph: ox.NamedNode | ox.DefaultGraph = ox.DefaultGraph(),
               context_graph: ox.NamedNode | ox.DefaultGraph = ox.DefaultGraph()) -> ox.Store:
    store = ox.Store()
    store.load(path=CONTEXT, format=ox.RdfFormat.TURTLE, to_graph=context_graph)
    store.load(path=path, format=ox.RdfFormat.TURTLE, to_graph=fixture_graph)
    return store


def fid(path: Path) -> str:
    return path.name.removesuffix(".ttl")


# ---------------------------------------------------------------------------------------- the fixtures
def test_every_node_shape_has_paired_fixtures() -> None:
    shapes = rdflib.Graph().parse(data=shapes_text(), format="turtle")
    node_shapes = {str(s).removeprefix(SHAPES_NS) for s in shapes.subjects(rdflib.RDF.type, rdflib.SH.NodeShape)}
    stems = {s.removesuffix("Shape").lower(): s for s in node_shapes}
    assert len(stems) == 20
    for stem in stems:
        assert any(p.name.startswith(f"{stem}.valid") for p in VALID), f"no valid fixture for {stems[stem]}"
        assert sum(p.name.startswith(f"{stem}.invalid-") for p in INVALID) >= 2, f"< 2 invalid for {stems[stem]}"
    assert {p.name.split(".")[0] for p in ALL_FIXTURES} <= set(stems)


def test_invalid_fixtures_cover_every_constraint_component() -> None:
    fired = {k[3] for p in INVALID for k in expected(p)}
    wanted = {"MinCount", "MaxCount", "Datatype", "Class", "Or", "Pattern", "LessThanOrEquals", "In",
              "MinInclusive", "MaxInclusive", "NodeKind"}
    assert fired == {f"sh:{c}ConstraintComponent" for c in wanted}


def test_fixture_expectations_are_declared() -> None:
    for p in VALID:
        assert not expected(p), f"{p.name} is valid but declares expected results"
    for p in INVALID:
        assert expected(p), f"{p.name} declares no '# expect:' line"


def test_context_conforms() -> None:
    g = rdflib.Graph().parse(CONTEXT, format="turtle")
    assert pyshacl_validate(g) == []
    store = ox.Store()
    store.load(path=CONTEXT, format=ox.RdfFormat.TURTLE)
    assert validate_store(store) == []


# ---------------------------------------------------------------------------------------- pyshacl
@pytest.mark.parametrize("path", VALID, ids=fid)
def test_valid_fixture_conforms(path: Path) -> None:
    assert reference(path) == frozenset(), "\n".join(map(str, reference(path)))


@pytest.mark.parametrize("path", INVALID, ids=fid)
def test_invalid_fixture_fires_exactly_the_expected_shape_and_path(path: Path) -> None:
    got = keys(list(reference(path)))
    assert got == expected(path), "\n".join(map(str, sorted(reference(path), key=Violation.key)))


# ---------------------------------------------------------------------------------------- compiled
@pytest.mark.parametrize("path", ALL_FIXTURES, ids=fid)
def test_compiled_checks_agree_with_pyshacl(path: Path) -> None:
    ref = reference(path)
    got = validate_store(store_with(path))
    assert keys(got) == keys(list(ref))
    assert {(v.key(), v.message) for v in got} == {(v.key(), v.message) for v in ref}
    assert {(v.key(), v.value is None) for v in got} == {(v.key(), v.value is None) for v in ref}


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=fid)
def test_scoped_validation_sees_classes_in_other_graphs(path: Path) -> None:
    """One graph validated, its links' classes looked up in another: the batch/context layout."""
    store = store_with(path, fixture_graph=DATA, context_graph=OTHER)
    assert keys(validate_store(store, DATA)) == expected(path)
    assert keys(validate_store(store)) == expected(path)  # the union: what pyshacl saw


def test_scoped_validation_ignores_focus_nodes_of_other_graphs() -> None:
    store = store_with(FIXTURES / "file.invalid-missing-hash.ttl", fixture_graph=OTHER, context_graph=DATA)
    assert validate_store(store, DATA) == []
    assert validate_store(store, ox.DefaultGraph()) == []
    assert keys(validate_store(store, OTHER)) == expected(FIXTURES / "file.invalid-missing-hash.ttl")


def test_default_graph_only() -> None:
    path = FIXTURES / "fragment.invalid-lod.ttl"
    assert keys(validate_store(store_with(path), ox.DefaultGraph())) == expected(path)


def test_validate_quads_ignores_graph_names() -> None:
    path = FIXTURES / "docsection.invalid-heading-seven.ttl"
    quads = list(store_with(path, fixture_graph=DATA, context_graph=OTHER))
    assert keys(validate_quads(quads)) == expected(path)


# ---------------------------------------------------------------------------------------- the shapes file
def test_shapes_are_named_with_messages() -> None:
    g = rdflib.Graph().parse(data=shapes_text(), format="turtle")
    for node in g.subjects(rdflib.RDF.type, rdflib.SH.NodeShape):
        assert str(node).startswith(SHAPES_NS)
        assert len(list(g.objects(node, rdflib.SH.targetClass))) == 1, node
        for prop in g.objects(node, rdflib.SH.property):
            assert isinstance(prop, rdflib.URIRef) and str(prop).startswith(SHAPES_NS), prop
            assert str(prop).split("#")[1].split("-")[0].endswith("Shape"), prop
            assert g.value(prop, rdflib.SH.message) is not None, f"{prop} has no sh:message"
            assert (prop, rdflib.RDF.type, rdflib.SH.PropertyShape) in g


def test_compiled_queries_parse_and_run_on_an_empty_store() -> None:
    store = ox.Store()
    checks = shipped_checks()
    assert len(checks) > 150
    assert validate_store(store, None, checks) == []
    assert validate_store(store, DATA, checks) == []


def test_violation_str_is_one_line() -> None:
    v = Violation("https://example.org/t/x", SHAPES_NS + "FileShape-name", PREFIXES["uko"] + "name",
                  "sh:MinCountConstraintComponent", "a file has\nexactly one name", '"a\\nb"')
    text = str(v)
    assert "\n" not in text
    assert text.startswith("https://example.org/t/x: ukosh:FileShape-name uko:name [sh:MinCount")


UNSUPPORTED = {
    "closed": "ex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:closed true .",
    "sequence path": "ex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:property ex:P . "
                     "ex:P sh:path ( ex:a ex:b ) ; sh:minCount 1 .",
    "or of datatypes": "ex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:property ex:P . "
                       "ex:P sh:path ex:a ; sh:or ( [ sh:datatype xsd:string ] ) .",
    "minCount on a node shape": "ex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:minCount 1 .",
    "sh:node": "ex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:property ex:P . ex:P sh:path ex:a ; sh:node ex:S .",
    "two datatypes": "ex:S sh:targetClass ex:C ; sh:property ex:P . ex:P sh:path ex:a ; "
                     "sh:datatype xsd:string , xsd:integer .",
}


@pytest.mark.parametrize("body", UNSUPPORTED.values(), ids=UNSUPPORTED.keys())
def test_compiler_refuses_what_it_does_not_support(body: str) -> None:
    head = f"@prefix sh: <{SH}> . @prefix ex: <https://example.org/t/> . @prefix xsd: <{PREFIXES['xsd']}> .\n"
    with pytest.raises(ConfigError):
        compile_shapes(head + body)


def test_node_level_constraints_and_pattern_flags() -> None:
    """Constraints on a node shape apply to the focus itself; sh:flags reach REGEX."""
    shapes = (f"@prefix sh: <{SH}> . @prefix ex: <https://example.org/t/> .\n"
              "ex:S a sh:NodeShape ; sh:targetClass ex:C ; sh:nodeKind sh:IRI ; sh:pattern \"/T/OK\" ; "
              "sh:flags \"i\" ; sh:message \"m\" .")
    data = "@prefix ex: <https://example.org/t/> . ex:ok a ex:C . ex:bad a ex:C . _:b a ex:C ."
    store = ox.Store()
    store.load(data, format=ox.RdfFormat.TURTLE)
    def simple(vs: list[Violation]) -> set[tuple[str, str]]:
        return {("_" if v.focus.startswith("_:") else v.focus.rsplit("/", 1)[-1], v.constraint) for v in vs}

    got = simple(validate_store(store, None, compile_shapes(shapes)))
    ref = simple(pyshacl_validate(rdflib.Graph().parse(data=data, format="turtle"),
                                  rdflib.Graph().parse(data=shapes, format="turtle")))
    assert got == ref == {("bad", "sh:PatternConstraintComponent"), ("_", "sh:PatternConstraintComponent"),
                          ("_", "sh:NodeKindConstraintComponent")}


# ---------------------------------------------------------------------------------------- ingestion
def test_ingested_sample_project_conforms(sample_project: Path) -> None:
    """What ingestion really writes passes both validators (every graph but the ontology's)."""
    from acms.config import Settings
    from acms.service.indexing import index_project
    from acms.store.oxigraph import OxigraphStore
    from acms.vocab import GRAPH_ONTOLOGY

    store = OxigraphStore(None)
    try:
        index_project(sample_project, store, Settings())
        raw = store.raw
        quads = [q for q in raw.quads_for_pattern(None, None, None, None) if q.graph_name != GRAPH_ONTOLOGY]
        assert len(quads) > 100
        data = rdflib.Graph()
        data.parse(data=ox.serialize([q.triple for q in quads], format=ox.RdfFormat.N_TRIPLES), format="nt")
        assert validate_store(raw) == [], "\n".join(map(str, validate_store(raw)))
        assert pyshacl_validate(data) == [], "\n".join(map(str, pyshacl_validate(data)))
        classes = {o.value.rsplit("#", 1)[-1] for q in quads if q.predicate.value == RDF_NS + "type"
                   for o in [q.object]}
        assert {"Project", "Directory", "File", "Module", "Function", "Fragment", "IndexRun"} <= classes
    finally:
        store.close()
