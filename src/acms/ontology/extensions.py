"""An extension package: a folder with ``ontology.ttl``, optional ``shapes.ttl``, ``rules/*.ru``, ``README.md``.

Referenced by name (a folder shipped under ``ontology/extensions/``) or by a path, which is resolved
relative to the project root. Its namespace is declared in its ontology (``vann:preferredNamespaceUri``,
else the ontology IRI + ``#``) and its prefix by ``vann:preferredNamespacePrefix`` (else the folder name).
Loading only reads and parses; ``acms.ontology.check`` decides whether an extension is acceptable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pyoxigraph as ox
from pyoxigraph import BlankNode, Literal, NamedNode, Quad

from acms import resources
from acms.errors import ConfigError, UsageError
from acms.vocab import GRAPH_ONTOLOGY, PREFIXES, RDF, UKO_NS

OWL_NS = "http://www.w3.org/2002/07/owl#"
VANN_NS = "http://purl.org/vocab/vann/"
DCT_IDENTIFIER = NamedNode("http://purl.org/dc/terms/identifier")
DCT_HAS_VERSION = NamedNode("http://purl.org/dc/terms/hasVersion")
SKOLEM_BASE = "https://w3id.org/acms/ext-genid/"
CLASS_TYPES = {OWL_NS + "Class", "http://www.w3.org/2000/01/rdf-schema#Class"}
PROPERTY_TYPES = {OWL_NS + "ObjectProperty", OWL_NS + "DatatypeProperty", OWL_NS + "AnnotationProperty",
                  "http://www.w3.org/1999/02/22-rdf-syntax-ns#Property"}


@dataclass(frozen=True)
class Rule:
    name: str
    text: str


@dataclass(frozen=True)
class Extension:
    """One extension as read from its folder; ``ref`` is how the config names it."""

    ref: str
    name: str
    folder: str
    ontology_text: str
    shapes_text: str | None = None
    rules: tuple[Rule, ...] = ()
    readme: str = ""
    parse_errors: tuple[str, ...] = field(default=())

    @cached_property
    def triples(self) -> list[ox.Triple]:
        """The ontology's triples (empty when it does not parse: ``parse_errors`` says why)."""
        try:
            return [q.triple for q in ox.parse(self.ontology_text, format=ox.RdfFormat.TURTLE)]
        except SyntaxError:
            return []

    @cached_property
    def ontology_iri(self) -> NamedNode | None:
        for t in self.triples:
            if t.predicate == RDF.type and t.object == NamedNode(OWL_NS + "Ontology") and isinstance(t.subject, NamedNode):
                return t.subject
        return None

    def _annotation(self, local: str) -> str | None:
        for t in self.triples:
            if t.subject == self.ontology_iri and t.predicate.value == local:
                return t.object.value
        return None

    @property
    def namespace(self) -> str:
        declared = self._annotation(VANN_NS + "preferredNamespaceUri")
        if declared:
            return declared
        iri = self.ontology_iri.value if self.ontology_iri is not None else ""
        return iri if iri.endswith(("#", "/")) else iri + "#"

    @property
    def prefix(self) -> str:
        return self._annotation(VANN_NS + "preferredNamespacePrefix") or self.name.replace("-", "_")

    @property
    def version(self) -> str:
        return self._annotation(OWL_NS + "versionInfo") or ""

    def declared(self, kinds: set[str]) -> list[NamedNode]:
        """Terms of this extension's namespace typed with one of ``kinds``."""
        ns = self.namespace
        found = {t.subject for t in self.triples
                 if t.predicate == RDF.type and t.object.value in kinds
                 and isinstance(t.subject, NamedNode) and t.subject.value.startswith(ns)}
        return sorted(found, key=lambda n: n.value)  # type: ignore[arg-type]

    @property
    def classes(self) -> list[NamedNode]:
        return self.declared(CLASS_TYPES)

    @property
    def properties(self) -> list[NamedNode]:
        return self.declared(PROPERTY_TYPES)

    def ontology_quads(self) -> list[Quad]:
        """Its triples for the ontology graph: blank nodes skolemised in a stable way (so the graph can
        be compared and rebuilt exactly), plus ``dcterms:identifier`` naming the extension."""
        skolem: dict[str, NamedNode] = {}

        def sk(term: object) -> object:
            if isinstance(term, BlankNode):
                if term.value not in skolem:
                    skolem[term.value] = NamedNode(f"{SKOLEM_BASE}{self.name}/{len(skolem)}")
                return skolem[term.value]
            return term

        out = [Quad(sk(t.subject), t.predicate, sk(t.object), GRAPH_ONTOLOGY)  # type: ignore[arg-type]
               for t in self.triples]
        if self.ontology_iri is not None:
            out.append(Quad(self.ontology_iri, DCT_IDENTIFIER, Literal(self.name), GRAPH_ONTOLOGY))
            out.append(Quad(self.ontology_iri, DCT_HAS_VERSION, Literal(self.digest), GRAPH_ONTOLOGY))
        return out

    @property
    def digest(self) -> str:
        """Content digest of ontology, shapes and rules: a changed rule must re-run over the index."""
        h = hashlib.sha256(self.ontology_text.encode())
        h.update((self.shapes_text or "").encode())
        for rule in self.rules:
            h.update(rule.name.encode() + b"\0" + rule.text.encode())
        return "sha256:" + h.hexdigest()[:16]

    def prefixes(self) -> dict[str, str]:
        return {**PREFIXES, self.prefix: self.namespace}


def _read(node: object) -> str:
    return node.read_text(encoding="utf-8")  # type: ignore[attr-defined]


def shipped_names() -> list[str]:
    root = resources.asset("ontology", "extensions")
    if not root.is_dir():
        return []
    return sorted(c.name for c in root.iterdir() if c.is_dir() and (c / "ontology.ttl").is_file())


def load_extension(ref: str, root: Path | None = None) -> Extension:
    """An extension by shipped name or by folder path (relative paths: from ``root``)."""
    looks_like_path = "/" in ref or "\\" in ref or ref.startswith(".")
    if not looks_like_path and ref in shipped_names():
        folder = resources.asset("ontology", "extensions", ref)
        where = f"ontology/extensions/{ref}"
        name = ref
    else:
        path = Path(ref).expanduser()
        if not path.is_absolute() and root is not None:
            path = root / path
        if not path.is_dir():
            shipped = ", ".join(shipped_names()) or "none"
            raise UsageError(f"no extension {ref!r}: not a folder (relative to {root or '.'}) and not a "
                             f"shipped extension (shipped: {shipped})")
        folder = path.resolve()  # type: ignore[assignment]
        where = str(folder)
        name = Path(str(folder)).name
    onto = folder / "ontology.ttl"
    if not onto.is_file():
        raise UsageError(f"extension {ref!r} has no ontology.ttl in {where}")
    text = _read(onto)
    errors: list[str] = []
    try:
        ox.parse(text, format=ox.RdfFormat.TURTLE)
    except SyntaxError as exc:
        errors.append(f"ontology.ttl does not parse: {exc}")
    shapes = folder / "shapes.ttl"
    rules_dir = folder / "rules"
    rules: list[Rule] = []
    if rules_dir.is_dir():
        for f in sorted(rules_dir.iterdir(), key=lambda c: c.name):
            if f.name.endswith(".ru"):
                rules.append(Rule(f.name, _read(f)))
    readme = folder / "README.md"
    return Extension(
        ref=ref, name=name, folder=where, ontology_text=text,
        shapes_text=_read(shapes) if shapes.is_file() else None, rules=tuple(rules),
        readme=_read(readme) if readme.is_file() else "", parse_errors=tuple(errors),
    )


def configured(refs: Iterable[str], root: Path) -> list[Extension]:
    """The extensions a project's ``extensions`` setting names, in order; a broken one is a ConfigError."""
    out = []
    for ref in refs:
        try:
            ext = load_extension(ref, root)
        except UsageError as exc:
            raise ConfigError(f"setting 'extensions': {exc.message}") from None
        if ext.parse_errors:
            raise ConfigError(f"extension {ext.name}: {ext.parse_errors[0]}")
        out.append(ext)
    names = [e.name for e in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"setting 'extensions' names the extension(s) {', '.join(dupes)} twice")
    return out


def ontology_quads(extensions: Sequence[Extension]) -> list[Quad]:
    return [q for ext in extensions for q in ext.ontology_quads()]


def is_uko(iri: str) -> bool:
    return iri.startswith(UKO_NS)


__all__ = ["Extension", "Rule", "configured", "load_extension", "ontology_quads", "shipped_names"]
