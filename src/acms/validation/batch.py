"""Validate a batch before it is written; validate the whole store on demand.

A batch is checked by the SHACL shapes compiled to checks (``validation.shapes``; a test proves they
agree with pyshacl on every fixture), run in Python over the batch's N-Triples text
(``validation.native``, which hands Oxigraph the values it cannot decide itself). Nodes the batch
links to but does not describe (a callee in an unchanged file) count with the classes the store gives
them, so ``sh:class`` sees them without making them focus nodes.

``validate_batch`` is all-or-nothing. Ingestion isolates failures per file instead: ``check_batch``
returns the violations, ``split_by_file`` names the file each one came from (the focus node's
``uko:inFile``, or the File itself), and the caller drops those files and checks the rest again. A
violation no file can be blamed for (a directory, the project, an archived version) still rejects the
whole batch (``rejection``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyoxigraph as ox
from pyoxigraph import NamedNode, Quad

from acms.errors import ValidationFailed
from acms.sparql import catalog
from acms.store.protocol import GraphStore
from acms.validation.native import BatchTriples, validate
from acms.validation.shapes import CompiledCheck, Violation
from acms.vocab import GRAPH_ONTOLOGY, RDF, UKO

if TYPE_CHECKING:  # rdflib is for the pyshacl reference (``validate_whole_store``), not for every batch
    import rdflib


def _add_context(store: GraphStore | None, batch: BatchTriples, promised: Iterable[tuple[NamedNode, NamedNode]],
                 described: Mapping[str, str] | None = None) -> bool:
    """The classes of the nodes the batch links to: from the store, and ``promised`` (node, class)
    pairs of nodes a streamed run writes later. A promised node is not looked up: its class is the
    promise, so a group that links to nothing else asks the store nothing. ``described``: node -> class
    (N-Triples text) of nodes the run writes and validated elsewhere, taken the same way. Without a
    store: False when the batch links to a node only the store could type."""
    promised = [(str(node), str(cls)) for node, cls in promised]
    known = {node for node, _ in promised}
    if described:
        promised += [(n, described[n]) for n in batch.linked() if n in described and n not in known]
        known.update(n for n, _ in promised)
    linked = [NamedNode(n[1:-1]) for n in batch.linked() if n not in known]
    if linked:
        if store is None:
            return False
        rows = store.select(catalog.text("validation/types-of"), {"node": linked})
        batch.add_types((str(r["node"]), str(r["type"])) for r in rows)
    batch.add_types(promised)
    return True


def check_lines(store: GraphStore | None, lines: Iterable[str], graph: NamedNode,
                checks: Iterable[CompiledCheck] | None = None,
                promised: Iterable[tuple[NamedNode, NamedNode]] = ()) -> list[Violation] | None:
    """``check_batch`` of a batch given as N-Quads lines all in ``graph`` (a streamed first index's
    group or file, as emitted: no term object per quad). None when a line is in another graph, or,
    without a ``store`` (a file checked where it was extracted), when the lines link to a node neither
    they nor ``promised`` type."""
    batch = BatchTriples.from_lines(lines, graph)
    if batch is None or not _add_context(store, batch, promised):
        return None
    return validate(batch, checks)


def check_batch(store: GraphStore, quads: Sequence[Quad], checks: Iterable[CompiledCheck] | None = None,
                promised: Iterable[tuple[NamedNode, NamedNode]] = ()) -> list[Violation]:
    """The batch's violations (empty: it conforms); ``checks`` as for ``validate_batch``; ``promised``
    as for ``check_lines``. Every quad is the batch's, whatever its graph."""
    batch = BatchTriples.from_quads(quads)
    _add_context(store, batch, promised)
    return validate(batch, checks)


def check_emitted(store: GraphStore, lines: Iterable[str], graph: NamedNode, quads: Sequence[Quad],
                  checks: Iterable[CompiledCheck] | None = None,
                  described: Mapping[str, str] | None = None) -> list[Violation] | None:
    """``check_batch`` of a batch made of N-Quads lines all in ``graph`` (files as they were emitted) and
    ``quads`` (the rest: edges, the tree, versions): the lines are read as text, with no term object per
    quad (``from_quads`` printing every term of a 300-file switch's 235k emitted quads cost ~0.3-0.4 s).
    ``described``: as for ``_add_context``. None when a line is in another graph."""
    batch = BatchTriples.from_lines(lines, graph)
    if batch is None:
        return None
    for q in quads:
        batch.add(str(q.subject), str(q.predicate), str(q.object))
    _add_context(store, batch, (), described)
    return validate(batch, checks)


def check_links(store: GraphStore, quads: Sequence[Quad], checks: Iterable[CompiledCheck] | None = None,
                known: Mapping[str, str] | None = None) -> list[Violation]:
    """Violations of links added to nodes the store already holds (a streamed run's cross-file edges).

    The links' subjects become focus nodes with their stored classes; only the constraints on the
    links' own predicates run, since nothing else about those nodes changes. For a first index, where
    every link of a node is in ``quads``, that is what validating the whole batch would say of them.
    ``known``: node IRI -> its one class in the store, for nodes the caller wrote itself (a first index's
    code entities: asking the store for 20k nodes' classes cost ~0.7 s a group of edges);
    the store is asked for the others.
    """
    from acms.validation.shapes import shipped_checks

    predicates = {q.predicate.value for q in quads}
    subjects = sorted({q.subject for q in quads if isinstance(q.subject, NamedNode)}, key=lambda n: n.value)
    selected = [c for c in (shipped_checks() if checks is None else checks) if c.path in predicates]
    if not subjects or not selected:
        return []
    batch = BatchTriples.from_quads(quads)
    # one lookup for the subjects (their classes make them focus nodes) and the nodes they link to
    own = {str(s) for s in subjects}
    nodes = [*subjects, *(NamedNode(n[1:-1]) for n in batch.linked() if n not in own)]
    known = known or {}
    pairs = [(str(n), f"<{known[n.value]}>") for n in nodes if n.value in known]
    asked = [n for n in nodes if n.value not in known]
    if asked:
        rows = store.select(catalog.text("validation/types-of"), {"node": asked})
        pairs += [(str(r["node"]), str(r["type"])) for r in rows]
    batch.add_types([p for p in pairs if p[0] in own], data=True)
    batch.add_types(p for p in pairs if p[0] not in own)
    return validate(batch, selected)


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


def quarantine_warning(paths: Sequence[str]) -> str:
    """The run's warning naming the files it quarantined (the first ten)."""
    more = f" and {len(paths) - 10} more (--verbose lists them)" if len(paths) > 10 else ""
    return f"{len(paths)} file(s) quarantined (they fail the shapes and were not written): {', '.join(paths[:10])}{more}"


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
