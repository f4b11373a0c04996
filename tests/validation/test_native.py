"""The Python batch validator (``validation.native``) against the compiled checks' SPARQL.

Ingestion validates every batch in Python; the SPARQL checks are what the compiled shapes mean (and
they agree with pyshacl, ``test_shapes``). So the two must report the same violations: on every
fixture, read as quads and as a streamed group's N-Quads lines, and on generated batches full of the
values the Python side hands back to Oxigraph (odd lexical forms, escapes, language tags, blank nodes).
"""

from __future__ import annotations

import re
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from acms.validation.native import BatchTriples, validate
from acms.validation.shapes import SH, Violation, compile_shapes, validate_store
from acms.vocab import RDF, RDF_NS, RDFS_NS, XSD_NS

FIXTURES = Path(__file__).parents[1] / "fixtures" / "shapes"
CONTEXT = FIXTURES / "_context.ttl"
ALL_FIXTURES = sorted(p for p in FIXTURES.glob("*.ttl") if not p.name.startswith("_"))
DATA = ox.NamedNode("urn:test:data")
BLANK = re.compile(r"_:[A-Za-z0-9]+")


def same(violations: list[Violation]) -> set[tuple[str | bool, ...]]:
    """What both validators must agree on: focus, shape, path, constraint, message and whether a value
    is named, with blank-node labels blanked (each side names blank nodes its own way). The value's
    text is left out: Oxigraph reports numbers in canonical form ("2.0" as "2"), Python as written."""
    return {(*(BLANK.sub("_:", x) for x in (*v.key(), v.message)), v.value is None) for v in violations}


def parse(path: Path) -> list[ox.Quad]:
    return [ox.Quad(t.subject, t.predicate, t.object, DATA) for t in ox.parse(path=path, format=ox.RdfFormat.TURTLE)]


def staged(data: list[ox.Quad], context: list[ox.Quad] = ()) -> ox.Store:  # type: ignore[assignment]
    store = ox.Store()
    store.extend(data)
    store.extend(ox.Quad(q.subject, q.predicate, q.object) for q in context)
    return store


def context_types(context: list[ox.Quad]) -> list[tuple[str, str]]:
    return [(str(q.subject), str(q.object)) for q in context if q.predicate == RDF.type]


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name.removesuffix(".ttl"))
def test_fixtures_give_what_the_sparql_checks_give(path: Path) -> None:
    data, context = parse(path), parse(CONTEXT)
    expected = same(validate_store(staged(data, context), DATA))
    from_quads = BatchTriples.from_quads(data)
    from_quads.add_types(context_types(context))
    assert same(validate(from_quads)) == expected
    lines = BatchTriples.from_lines([f"{q} .\n" for q in data], DATA)
    assert lines is not None
    lines.add_types(context_types(context))
    assert same(validate(lines)) == expected


def test_lines_in_another_graph_are_refused() -> None:
    q = ox.Quad(ox.NamedNode("urn:s"), ox.NamedNode("urn:p"), ox.Literal("x"), ox.NamedNode("urn:elsewhere"))
    assert BatchTriples.from_lines([f"{q} .\n"], DATA) is None


def test_linked_nodes_are_the_targets_the_batch_does_not_type() -> None:
    # u: described (an edge from an unchanged file's entity) but not typed: its class is the store's
    s, p, o, t, u = (ox.NamedNode(f"urn:{x}") for x in "spotu")
    batch = BatchTriples.from_quads([ox.Quad(s, p, o), ox.Quad(s, RDF.type, t), ox.Quad(s, p, s),
                                     ox.Quad(s, p, u), ox.Quad(u, p, o)])
    assert batch.linked() == ["<urn:o>", "<urn:u>"]


def test_the_shipped_shapes_run_without_oxigraph_on_ingested_values() -> None:
    """A fragment as the emitter writes it is decided in Python for every shipped check."""
    uko = "https://w3id.org/acms/uko#"
    frag, file = "<urn:f>", "<urn:file>"
    integer = f"<{XSD_NS}integer>"
    lines = [
        (frag, f"<{RDF_NS}type>", f"<{uko}Fragment>"),
        (frag, f"<{uko}text>", '"def f():\\n    return \\"x\\"\\n"'),
        (frag, f"<{uko}tokenCount>", f'"7"^^{integer}'),
        (frag, f"<{uko}startLine>", f'"3"^^{integer}'),
        (frag, f"<{uko}endLine>", f'"4"^^{integer}'),
        (frag, f"<{uko}contentHash>", '"' + "a" * 64 + '"'),
        (frag, f"<{uko}lod>", '"micro"'),
        (frag, f"<{uko}sourceRef>", '"a.py:3-4"'),
        (frag, f"<{uko}inFile>", file),
        (frag, f"<{uko}language>", '"python"'),
    ]
    batch = BatchTriples.from_lines([f"{s} {p} {o} {DATA} .\n" for s, p, o in lines], DATA)
    assert batch is not None
    batch.add_types([(file, f"<{uko}File>")])
    import acms.validation.native as native

    asked: list[str] = []
    real = native._in_oxigraph
    native._in_oxigraph = lambda b, check, nodes: asked.append(check.shape) or real(b, check, nodes)  # type: ignore[assignment]
    try:
        assert validate(batch) == []
    finally:
        native._in_oxigraph = real  # type: ignore[assignment]
    assert asked == []


# ---------------------------------------------------------------------------------------- generated
EX = "https://example.org/t/"
SHAPES = f"""
@prefix sh: <{SH}> . @prefix ex: <{EX}> . @prefix xsd: <{XSD_NS}> .
ex:S a sh:NodeShape ; sh:targetClass ex:C ;
  sh:property ex:Pi , ex:Pj , ex:Ps , ex:Pt , ex:Pl , ex:Pr , ex:Po , ex:Pk , ex:Pm , ex:Pb , ex:Pd , ex:Pq , ex:Pf .
ex:Pi sh:path ex:i ; sh:minCount 1 ; sh:maxCount 2 ; sh:datatype xsd:integer ; sh:minInclusive 0 ;
  sh:maxInclusive 100 ; sh:lessThanOrEquals ex:j ; sh:message "i" .
ex:Pj sh:path ex:j ; sh:datatype xsd:integer ; sh:message "j" .
ex:Ps sh:path ex:s ; sh:maxCount 1 ; sh:datatype xsd:string ; sh:pattern "^[0-9a-f]{{4}}$" ; sh:message "s" .
ex:Pt sh:path ex:t ; sh:datatype xsd:dateTime ; sh:message "t" .
ex:Pl sh:path ex:l ; sh:in ( "a" "b" ) ; sh:message "l" .
ex:Pr sh:path ex:r ; sh:class ex:D ; sh:message "r" .
ex:Po sh:path ex:o ; sh:or ( [ sh:class ex:D ] [ sh:class ex:E ] ) ; sh:message "o" .
ex:Pk sh:path ex:k ; sh:nodeKind sh:IRI ; sh:message "k" .
ex:Pm sh:path ex:m ; sh:minCount 2 ; sh:message "m" .
ex:Pb sh:path ex:b ; sh:datatype xsd:boolean ; sh:message "b" .
ex:Pd sh:path ex:d ; sh:datatype xsd:decimal ; sh:minInclusive 0.5 ; sh:message "d" .
ex:Pq sh:path ex:q ; sh:pattern "a.c$" ; sh:message "q" .
ex:Pf sh:path ex:q ; sh:pattern "ABC" ; sh:flags "i" ; sh:message "f" .
ex:T a sh:NodeShape ; sh:targetClass ex:D ; sh:nodeKind sh:IRI ; sh:pattern "/n[0-2]$" ; sh:message "T" .
"""
INT, STR = f"<{XSD_NS}integer>", f"<{XSD_NS}string>"
VALUES = [
    *(f'"{x}"^^{INT}' for x in ("0", "5", "-3", "007", "+4", " 5", "101", "99999999999999999999", "1.0", "x", "")),
    *(f'"{x}"' for x in ("a", "b", "abcd", "0f9e", "0f9e\\n", "abc", "xabc", "ABC", "a\\nc", "a\\u0062", "")),
    '"a"@en', '"a"@EN', f'"a"^^{STR}', f'"abcd"^^{STR}',
    *(f'"{x}"^^<{XSD_NS}dateTime>' for x in ("2026-11-27T16:11:04.123456Z", "2026-11-27T16:11:04", "2026-02-30T00:00:00Z",
                                            "2026-11-27", "2026-11-27T24:00:00Z", "2026-01-31T10:00:00+14:00")),
    *(f'"{x}"^^<{XSD_NS}boolean>' for x in ("true", "1", "yes")),
    *(f'"{x}"^^<{XSD_NS}decimal>' for x in ("0.5", "0.25", "1", "abc")),
    *(f"<{EX}n{i}>" for i in range(5)), "_:b0", "_:b1",
]
PREDICATES = [f"<{EX}{p}>" for p in "ijstlrokmbdq"]
CLASSES = [f"<{EX}{c}>" for c in ("C", "C2", "D", "E")]
NODES = [f"<{EX}n{i}>" for i in range(5)] + ["_:b0", "_:b1"]
# Each predicate with the values that probe its constraints (any value may still go anywhere).
PROBES = {
    "i": VALUES[:11] + ['"5"', f"<{EX}n1>"], "j": VALUES[:11], "s": [*VALUES[11:26], '"a\\u0062cd"'], "t": VALUES[26:32],
    "l": ['"a"', '"b"', '"c"', '"a"@en', f'"a"^^{STR}', '"a\\u0062"', f'"a"^^{INT}'],
    "r": NODES + ['"a"'], "o": NODES + ['"a"'], "k": NODES + ['"a"'], "m": ['"a"', f'"a"^^{STR}', '"b"', '"a"@en'],
    "b": VALUES[32:35] + ['"true"'], "d": VALUES[35:39] + [f'"1"^^{INT}'], "q": ['"abc"', '"a\\nc"', '"xabc"', '"ABC"', '"abc\\n"', f"<{EX}abc>"],
}
TRIPLE = st.one_of(
    st.tuples(st.sampled_from(NODES), st.just(f"<{RDF_NS}type>"), st.sampled_from(CLASSES)),
    st.tuples(st.sampled_from(NODES), st.sampled_from(PREDICATES), st.sampled_from(VALUES)),
    st.sampled_from(sorted(PROBES)).flatmap(lambda p: st.tuples(
        st.sampled_from(NODES[:2]), st.just(f"<{EX}{p}>"), st.sampled_from(PROBES[p]))),
)
FOCUS = [(n, f"<{RDF_NS}type>", f"<{EX}C>") for n in NODES[:2]]


def _on_n0(*pairs: tuple[str, str]) -> list[tuple[str, str, str]]:
    return [(NODES[0], f"<{EX}{p}>", o) for p, o in pairs]


@example(triples=_on_n0(("m", '"a"'), ("m", f'"a"^^{STR}')), subclass=False, context=[])  # one term, two texts
@example(triples=_on_n0(("s", '"a\\u0062cd"')), subclass=False, context=[])  # "abcd" once unescaped
@example(triples=_on_n0(("l", f'"a"^^{STR}'), ("l", '"a"@EN')), subclass=False, context=[])
@example(triples=_on_n0(("i", f'"2"^^{INT}'), ("j", f'"1"^^{INT}'), ("j", f'"x"^^{INT}')), subclass=True, context=[])
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(triples=st.lists(TRIPLE, min_size=1, max_size=40), subclass=st.booleans(), context=st.lists(
    st.tuples(st.sampled_from(NODES[:5]), st.sampled_from(CLASSES)), max_size=3))
def test_generated_batches_give_what_the_sparql_checks_give(
        triples: list[tuple[str, str, str]], subclass: bool, context: list[tuple[str, str]]) -> None:
    checks = compile_shapes(SHAPES)
    triples = [*FOCUS, *triples]
    if subclass:
        triples = [*triples, (CLASSES[1], f"<{RDFS_NS}subClassOf>", CLASSES[0])]
    lines = [f"{s} {p} {o} {DATA} .\n" for s, p, o in triples]
    store = ox.Store()
    store.load("".join(lines).encode(), format=ox.RdfFormat.N_QUADS)
    described = {s for s, _, _ in triples}
    extra = [(n, c) for n, c in context if n not in described]
    store.extend(ox.Quad(ox.NamedNode(n[1:-1]), RDF.type, ox.NamedNode(c[1:-1])) for n, c in extra)
    batch = BatchTriples.from_lines(lines, DATA)
    assert batch is not None
    batch.add_types(extra)
    assert same(validate(batch, checks)) == same(validate_store(store, DATA, checks))
