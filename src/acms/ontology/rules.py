"""Running extension rules, and an extension's footprint (the instance triples that are its own).

Why a footprint: removal must take away exactly what an extension added and nothing else. An
extension's triples are (1) those whose predicate is one of its properties, (2) ``rdf:type`` triples
naming one of its classes, (3) every triple of the nodes it created (typed by its classes and by no
class outside its namespace, e.g. ``api:Operation``). Rules may only add footprint triples: a rule that
adds anything else is refused, so ``remove`` is exact by construction.

Rules run on an in-memory staging store (the batch, or a copy of the index), never on the index itself;
what they added is then validated with the rest of the batch and written in the same transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache

import pyoxigraph as ox
from pyoxigraph import Literal, NamedNode, Quad

from acms.errors import ConfigError, QuerySyntaxError, StoreError
from acms.ontology.extensions import Extension
from acms.sparql import catalog
from acms.store.oxigraph import in_memory
from acms.store.protocol import GraphStore
from acms.validation.shapes import CompiledCheck, compile_shapes, shipped_checks
from acms.vocab import GRAPH_META, GRAPH_ONTOLOGY


def rule_text(ext: Extension, text: str) -> str:
    """A rule with the standard prefixes and the extension's own predeclared."""
    header = "".join(f"PREFIX {p}: <{iri}>\n" for p, iri in ext.prefixes().items())
    return header + text


def footprint(store: GraphStore, classes: Sequence[NamedNode], properties: Sequence[NamedNode],
              namespace: str) -> set[Quad]:
    """The instance triples that belong to an extension with these terms (see the module docstring)."""
    out: set[Quad] = set()
    rows = []
    if properties:
        rows += store.select(catalog.text("ontology/footprint-properties"), {"property": list(properties)})
    if classes:
        rows += store.select(catalog.text("ontology/footprint-types"), {"class": list(classes)})
        rows += store.select(catalog.text("ontology/footprint-nodes"),
                             {"class": list(classes), "ns": Literal(namespace)})
    for r in rows:
        out.add(Quad(r["s"], r["p"], r["o"], r["g"]))  # type: ignore[arg-type]
    return out


def ext_footprint(store: GraphStore, ext: Extension) -> set[Quad]:
    return footprint(store, ext.classes, ext.properties, ext.namespace)


def derive(stage: GraphStore, extensions: Sequence[Extension]) -> list[Quad]:
    """Run every rule of every extension on ``stage`` (modifying it); the quads the rules added."""
    derived: list[Quad] = []
    for ext in extensions:
        if not ext.rules:
            continue
        before_len, before = stage.count(), ext_footprint(stage, ext)
        for rule in ext.rules:
            try:
                stage.update(rule_text(ext, rule.text))
            except QuerySyntaxError as exc:
                raise ConfigError(f"extension {ext.name}: rule {rule.name} does not parse: {exc.message}") from None
            except StoreError as exc:
                raise ConfigError(f"extension {ext.name}: rule {rule.name} failed: {exc.message}") from None
        after = ext_footprint(stage, ext)
        new = sorted(after - before, key=str)
        outside = stage.count() - before_len - len(new)
        if outside != 0 or not before <= after:
            raise ConfigError(
                f"extension {ext.name}: its rules changed {abs(outside)} triple(s) outside its own classes and "
                "properties (or deleted some); rules may only add triples that use the extension's terms"
            )
        derived += new
    return derived


def derive_for_batch(ontology: Iterable[Quad], quads: Sequence[Quad], extensions: Sequence[Extension]) -> list[Quad]:
    """Rules over one index batch, staged with the ontology graph it will have (for ``rdfs:subClassOf*``).

    Rules see the files of this batch only: a rule that links two files sees both when both changed
    (a first index, a migration, ``acms ontology add``), not when only one of them did.
    """
    if not any(ext.rules for ext in extensions):
        return []
    stage = in_memory()
    stage.load([*quads, *ontology])
    return derive(stage, extensions)


def derive_for_store(store: GraphStore, ontology: Iterable[Quad], extensions: Sequence[Extension],
                     drop: set[Quad] | frozenset[Quad] = frozenset()) -> list[Quad]:
    """Rules over the whole index (``acms ontology add``): a copy of its instance graphs, staged in memory,
    without ``drop`` (the extension's previous footprint, when it is added again)."""
    stage = in_memory()
    stage.load([*(q for q in store.quads() if q.graph_name not in (GRAPH_ONTOLOGY, GRAPH_META) and q not in drop),
                *ontology])
    return derive(stage, extensions)


@cache
def _compiled(text: str) -> tuple[CompiledCheck, ...]:
    return tuple(compile_shapes(text))


def extension_checks(ext: Extension) -> tuple[CompiledCheck, ...]:
    """The extension's shapes compiled to SPARQL checks (ConfigError when the compiler cannot)."""
    if not ext.shapes_text:
        return ()
    try:
        return _compiled(ext.shapes_text)
    except ConfigError as exc:
        raise ConfigError(f"extension {ext.name}: shapes.ttl: {exc.message}") from None


def all_checks(extensions: Sequence[Extension]) -> tuple[CompiledCheck, ...]:
    """UKO's shipped checks plus every extension's."""
    return shipped_checks() + tuple(c for ext in extensions for c in extension_checks(ext))


def parse_update(text: str) -> str | None:
    """None when the update parses (run against an empty in-memory store), else the parser's message."""
    try:
        ox.Store().update(text)
    except SyntaxError as exc:
        return str(exc)
    except (OSError, RuntimeError) as exc:
        return f"fails on an empty store: {exc}"
    return None
