"""Validate a batch before it is written; validate the whole store on demand.

A batch is staged in an in-memory pyoxigraph store (≈450k quads/s) and checked by the SHACL shapes
compiled to SPARQL (``validation.shapes``), which a test proves agree with pyshacl on every fixture.
Nodes the batch links to but does not describe (a callee in an unchanged file) get their ``rdf:type``
copied into a separate context graph so ``sh:class`` can see them without making them focus nodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pyoxigraph as ox
import rdflib
from pyoxigraph import NamedNode, Quad

from acms.errors import ValidationFailed
from acms.sparql import catalog
from acms.store.oxigraph import OxigraphStore
from acms.validation.shapes import CompiledCheck, Violation, validate_store
from acms.vocab import GRAPH_ONTOLOGY, RDF, UKO

BATCH = NamedNode("urn:acms:validation:batch")
CONTEXT = NamedNode("urn:acms:validation:context")


def stage(store: OxigraphStore, quads: Sequence[Quad]) -> ox.Store:
    mem = ox.Store()
    mem.extend([Quad(q.subject, q.predicate, q.object, BATCH) for q in quads])
    described = {q.subject for q in quads}
    linked = sorted(
        {q.object for q in quads if isinstance(q.object, NamedNode) and q.predicate != RDF.type} - described,
        key=lambda n: n.value,
    )
    if linked:
        rows = store.select(catalog.text("validation/types-of"), {"node": linked})
        mem.extend([Quad(r["node"], RDF.type, r["type"], CONTEXT) for r in rows])  # type: ignore[arg-type]
    return mem


def validate_batch(store: OxigraphStore, quads: Sequence[Quad], checks: Iterable[CompiledCheck] | None = None) -> None:
    """Raise ValidationFailed naming file, focus node and shape; nothing is written by the caller then.

    ``checks``: the compiled shapes to run (default: the shipped ones; extensions add theirs).
    """
    mem = stage(store, quads)
    violations = validate_store(mem, BATCH, checks)
    if violations:
        files = _files_of(quads)
        lines = [f"{files.get(v.focus, '?')}: {v}" for v in violations]
        first = violations[0]
        raise ValidationFailed(
            f"batch rejected, nothing written: {len(violations)} SHACL violation(s); first in "
            f"{files.get(first.focus, '?')}: {first.focus} violates {first.shape} ({first.message})",
            lines,
        )


def _files_of(quads: Sequence[Quad]) -> dict[str, str]:
    """focus IRI -> path of the file it came from, for error messages."""
    paths: dict[NamedNode, str] = {}
    in_file: dict[str, NamedNode] = {}
    for q in quads:
        if q.predicate == UKO.path and isinstance(q.subject, NamedNode):
            paths[q.subject] = q.object.value
        elif q.predicate == UKO.inFile and isinstance(q.object, NamedNode):
            in_file[q.subject.value] = q.object
    out = {iri.value: path for iri, path in paths.items()}
    for focus, f in in_file.items():
        if f in paths:
            out[focus] = paths[f]
    return out


def validate_whole_store(store: OxigraphStore, extra_shapes: Sequence[str] = ()) -> list[Violation]:
    """The reference check: pyshacl over every instance graph (not the ontology graph).

    ``extra_shapes``: Turtle shapes of the configured extensions, checked with the shipped ones.
    """
    from acms.validation.reference import pyshacl_validate, shapes_graph

    data = rdflib.Graph()
    raw = store.raw
    for q in raw.quads_for_pattern(None, None, None, None):
        if q.graph_name == GRAPH_ONTOLOGY:
            continue
        data.add((_to_rdflib(q.subject), _to_rdflib(q.predicate), _to_rdflib(q.object)))
    if not extra_shapes:
        return pyshacl_validate(data)
    shapes = shapes_graph()
    for text in extra_shapes:
        shapes += shapes_graph(text)
    return pyshacl_validate(data, shapes)


def _to_rdflib(term: object) -> rdflib.term.Node:
    if isinstance(term, ox.NamedNode):
        return rdflib.URIRef(term.value)
    if isinstance(term, ox.BlankNode):
        return rdflib.BNode(term.value)
    if isinstance(term, ox.Literal):
        if term.language:
            return rdflib.Literal(term.value, lang=term.language)
        if term.datatype.value == "http://www.w3.org/2001/XMLSchema#string":
            return rdflib.Literal(term.value)  # rdflib keeps plain and xsd:string literals apart
        return rdflib.Literal(term.value, datatype=rdflib.URIRef(term.datatype.value))
    raise TypeError(f"unsupported term {term!r}")
