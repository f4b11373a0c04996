"""Validate a batch before it is written; validate the whole store on demand.

A batch is staged in an in-memory pyoxigraph store (≈450k quads/s) and checked by the SHACL shapes
compiled to SPARQL (``validation.shapes``), which a test proves agree with pyshacl on every fixture.
Nodes the batch links to but does not describe (a callee in an unchanged file) get their ``rdf:type``
copied into a separate context graph so ``sh:class`` can see them without making them focus nodes.

``validate_batch`` is all-or-nothing. Ingestion isolates failures per file instead: ``check_batch``
returns the violations, ``split_by_file`` names the file each one came from (the focus node's
``uko:inFile``, or the File itself), and the caller drops those files and checks the rest again. A
violation no file can be blamed for (a directory, the project, an archived version) still rejects the
whole batch (``rejection``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyoxigraph as ox
from pyoxigraph import NamedNode, Quad

from acms.errors import ValidationFailed
from acms.sparql import catalog
from acms.store.protocol import GraphStore
from acms.validation.shapes import CompiledCheck, Violation, validate_store
from acms.vocab import GRAPH_ONTOLOGY, RDF, UKO

if TYPE_CHECKING:  # rdflib is for the pyshacl reference (``validate_whole_store``), not for every batch
    import rdflib

BATCH = NamedNode("urn:acms:validation:batch")
CONTEXT = NamedNode("urn:acms:validation:context")


def stage(store: GraphStore, quads: Sequence[Quad], promised: Iterable[tuple[NamedNode, NamedNode]] = ()
          ) -> tuple[ox.Store, NamedNode]:
    """The batch in memory plus the classes of what it links to (graph ``CONTEXT``): from the store, and
    ``promised`` (node, class) pairs of nodes a streamed run writes later; and the batch's graph.

    A batch whose quads share one named graph is staged as it is and that graph is the data graph
    (re-creating every quad into ``BATCH`` cost more than loading it: 0.45 s against 0.25 s for 58k);
    a mixed one is staged into ``BATCH``."""
    mem = ox.Store()
    graph = quads[0].graph_name if quads else BATCH
    if isinstance(graph, NamedNode) and graph != CONTEXT and all(q.graph_name == graph for q in quads):
        mem.extend(quads)
    else:
        graph = BATCH
        mem.extend([Quad(q.subject, q.predicate, q.object, BATCH) for q in quads])
    described = {q.subject for q in quads}
    linked = sorted(
        {q.object for q in quads if isinstance(q.object, NamedNode) and q.predicate != RDF.type} - described,
        key=lambda n: n.value,
    )
    _add_context(store, mem, linked, list(promised))
    return mem, graph


def _add_context(store: GraphStore, mem: ox.Store, linked: list[NamedNode],
                 promised: list[tuple[NamedNode, NamedNode]]) -> None:
    """The classes of the linked nodes (from the store) and of the promised ones, into ``CONTEXT``.
    A promised node is not looked up: its class is the promise (a streamed run writes it at the end),
    so a group that links to nothing else asks the store nothing."""
    known = {node for node, _ in promised}
    linked = [n for n in linked if n not in known]
    if linked:
        rows = store.select(catalog.text("validation/types-of"), {"node": linked})
        mem.extend([Quad(r["node"], RDF.type, r["type"], CONTEXT) for r in rows])  # type: ignore[arg-type]
    mem.extend([Quad(node, RDF.type, cls, CONTEXT) for node, cls in promised])


def stage_nquads(store: GraphStore, data: bytes, graph: NamedNode,
                 promised: Iterable[tuple[NamedNode, NamedNode]] = ()) -> ox.Store | None:
    """``stage`` for a batch given as N-Quads text whose quads are all in ``graph`` (a streamed first
    index's group): parsed by Oxigraph, with no Python object per quad; the linked nodes found by a
    query on the staged batch. None when the text holds another graph too (stage the quads instead)."""
    mem = ox.Store()
    mem.load(data, format=ox.RdfFormat.N_QUADS, lenient=True)  # our own emission: terms already checked
    if list(mem.named_graphs()) not in ([graph], []):
        return None
    linked = sorted((r["node"] for r in mem.query(catalog.text("validation/linked-in-batch"))),  # type: ignore[union-attr]
                    key=lambda n: n.value)
    _add_context(store, mem, linked, list(promised))
    return mem


def check_nquads(store: GraphStore, data: bytes, graph: NamedNode, checks: Iterable[CompiledCheck] | None = None,
                 promised: Iterable[tuple[NamedNode, NamedNode]] = ()) -> list[Violation] | None:
    """``check_batch`` of a batch given as N-Quads text in one graph (None: not one graph, use ``check_batch``)."""
    mem = stage_nquads(store, data, graph, promised)
    return None if mem is None else validate_store(mem, graph, checks)


def check_batch(store: GraphStore, quads: Sequence[Quad], checks: Iterable[CompiledCheck] | None = None,
                promised: Iterable[tuple[NamedNode, NamedNode]] = ()) -> list[Violation]:
    """The batch's violations (empty: it conforms); ``checks`` as for ``validate_batch``; ``promised``
    as for ``stage``."""
    mem, graph = stage(store, quads, promised)
    return validate_store(mem, graph, checks)


def check_links(store: GraphStore, quads: Sequence[Quad], checks: Iterable[CompiledCheck] | None = None
                ) -> list[Violation]:
    """Violations of links added to nodes the store already holds (a streamed run's cross-file edges).

    The links' subjects become focus nodes with their stored classes; only the constraints on the
    links' own predicates run, since nothing else about those nodes changes. For a first index, where
    every link of a node is in ``quads``, that is what validating the whole batch would say of them.
    """
    from acms.validation.shapes import shipped_checks

    predicates = {q.predicate.value for q in quads}
    subjects = sorted({q.subject for q in quads if isinstance(q.subject, NamedNode)}, key=lambda n: n.value)
    if not subjects:
        return []
    mem, graph = stage(store, quads)
    rows = store.select(catalog.text("validation/types-of"), {"node": subjects})
    mem.extend([Quad(r["node"], RDF.type, r["type"], graph) for r in rows])  # type: ignore[arg-type]
    selected = [c for c in (shipped_checks() if checks is None else checks) if c.path in predicates]
    return validate_store(mem, graph, selected) if selected else []


def validate_batch(store: GraphStore, quads: Sequence[Quad], checks: Iterable[CompiledCheck] | None = None) -> None:
    """Raise ValidationFailed naming file, focus node and shape; nothing is written by the caller then.

    ``checks``: the compiled shapes to run (default: the shipped ones; extensions add theirs).
    """
    violations = check_batch(store, quads, checks)
    if violations:
        raise rejection(violations, quads)


def rejection(violations: Sequence[Violation], quads: Sequence[Quad]) -> ValidationFailed:
    """The all-or-nothing error: one line per violation, each prefixed with its file when known."""
    files = _files_of(quads)
    lines = [f"{files.get(v.focus, '?')}: {v}" for v in violations]
    first = violations[0]
    return ValidationFailed(
        f"batch rejected, nothing written: {len(violations)} SHACL violation(s); first in "
        f"{files.get(first.focus, '?')}: {first.focus} violates {first.shape} ({first.message})",
        lines,
    )


@dataclass
class FileSplit:
    """Violations grouped by the file whose triples caused them, and those no file can be blamed for."""

    by_file: dict[str, list[Violation]] = field(default_factory=dict)  # uko:path -> its violations
    unattributed: list[Violation] = field(default_factory=list)


def split_by_file(violations: Iterable[Violation], quads: Sequence[Quad], files: Collection[str]) -> FileSplit:
    """Blame each violation on one of ``files`` (uko:path values of Files in the batch) when its focus
    node is that File or is ``uko:inFile`` it; anything else is unattributed."""
    owner = _owned_by(quads)
    out = FileSplit()
    for v in violations:
        path = owner.get(v.focus)
        if path is not None and path in files:
            out.by_file.setdefault(path, []).append(v)
        else:
            out.unattributed.append(v)
    return out


def describe(violations: Sequence[Violation]) -> str:
    """One line for a quarantined file: the first violation's focus, shape and message, and how many more."""
    first = violations[0]
    more = f" (+{len(violations) - 1} more)" if len(violations) > 1 else ""
    message = " ".join(first.message.split())
    return f"{first.focus} violates {first.shape} ({message}){more}"


def _owned_by(quads: Sequence[Quad]) -> dict[str, str]:
    """focus IRI -> uko:path of the File (typed uko:File in the batch) it is, or is uko:inFile."""
    files: set[NamedNode] = set()
    paths: dict[NamedNode, str] = {}
    in_file: dict[str, NamedNode] = {}
    for q in quads:
        if not isinstance(q.subject, NamedNode):
            continue
        if q.predicate == RDF.type and q.object == UKO.File:
            files.add(q.subject)
        elif q.predicate == UKO.path:
            paths[q.subject] = q.object.value
        elif q.predicate == UKO.inFile and isinstance(q.object, NamedNode):
            in_file[q.subject.value] = q.object
    out = {f.value: paths[f] for f in files if f in paths}
    for focus, f in in_file.items():
        if f in files and f in paths:
            out.setdefault(focus, paths[f])
    return out


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


def validate_whole_store(store: GraphStore, extra_shapes: Sequence[str] = ()) -> list[Violation]:
    """The reference check: pyshacl over every instance graph (not the ontology graph).

    ``extra_shapes``: Turtle shapes of the configured extensions, checked with the shipped ones.
    """
    import rdflib

    from acms.validation.reference import pyshacl_validate, shapes_graph

    data = rdflib.Graph()
    for q in store.quads():
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
    import rdflib

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
