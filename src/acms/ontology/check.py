"""``acms ontology check``: is an extension safe and sound to load?

Checks, each named in the report: ``parse`` (ontology.ttl, shapes.ttl; one owl:Ontology), ``namespace``
(every term it defines is in its own namespace, which is not UKO's or a standard vocabulary's),
``no-redefinition`` (no triple has a UKO or standard term as its subject: an extension adds, it never
changes what UKO says), ``labels`` (every term has rdfs:label and rdfs:comment), ``shapes`` (valid
against SHACL-SHACL with pyshacl, and within the SHACL subset acms compiles to SPARQL), ``rules``
(each parses, only inserts, never calls SERVICE/LOAD), ``owlready-safety`` (no owlready2
``python_module`` annotation, ``owl:imports`` not followed), ``reasoner`` (HermiT: the extension with UKO
is consistent and has no unsatisfiable class; skipped with a note without Java).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

import pyoxigraph as ox
from pyoxigraph import NamedNode

from acms import resources
from acms.errors import ConfigError
from acms.ontology.extensions import CLASS_TYPES, OWL_NS, PROPERTY_TYPES, Extension
from acms.ontology.reasoner import OWLREADY_NS, check_consistency, unsafe_triples
from acms.ontology.rules import parse_update, rule_text
from acms.sparql.guard import scan
from acms.vocab import FN_NS, ID_NS, PREFIXES, RDF, RDFS, UKO_NS

RESERVED = {
    UKO_NS: "UKO", PREFIXES["prov"]: "PROV-O", PREFIXES["rdf"]: "RDF", PREFIXES["rdfs"]: "RDFS",
    PREFIXES["owl"]: "OWL", PREFIXES["xsd"]: "XSD", PREFIXES["dcterms"]: "Dublin Core", PREFIXES["sh"]: "SHACL",
    FN_NS: "acms functions", ID_NS: "acms entity", "https://w3id.org/acms/graph/": "acms graph",
    "https://w3id.org/acms/tier/": "acms tier", "https://w3id.org/acms/shapes#": "acms shapes",
}
# Keywords, not prefixed names (ex:Service) or variables (?add): no ':', '?', '$' or word char around them.
_FORBIDDEN_OPS = re.compile(r"(?<![\w:?$])(DELETE|DROP|CLEAR|LOAD|CREATE|MOVE|COPY|ADD|SERVICE)(?![\w:])", re.IGNORECASE)


class Level(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True)
class Finding:
    check: str
    level: Level
    message: str


@dataclass
class CheckReport:
    extension: str
    namespace: str
    findings: list[Finding] = field(default_factory=list)
    checks_run: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(f.level is Level.ERROR for f in self.findings)

    def add(self, check: str, level: Level, message: str) -> None:
        self.findings.append(Finding(check, level, message))

    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level is Level.ERROR]

    def raise_if_failed(self) -> None:
        if not self.ok:
            errs = self.errors()
            raise ConfigError(
                f"extension {self.extension} rejected: {len(errs)} problem(s); first: [{errs[0].check}] {errs[0].message}",
            ) from None

    def as_dict(self) -> dict[str, object]:
        return {"extension": self.extension, "namespace": self.namespace, "ok": self.ok, "checks": self.checks_run,
                "findings": [{"check": f.check, "level": f.level.value, "message": f.message} for f in self.findings]}


def _reserved(iri: str) -> str | None:
    for ns, label in RESERVED.items():
        if iri.startswith(ns):
            return label
    return None


def _curie(iri: str, ext: Extension) -> str:
    for prefix, ns in ext.prefixes().items():
        if iri.startswith(ns) and len(iri) > len(ns):
            return f"{prefix}:{iri[len(ns):]}"
    return f"<{iri}>"


def check_extension(ext: Extension, *, reasoner: bool = True) -> CheckReport:
    """Every check over one extension; nothing is loaded anywhere."""
    report = CheckReport(ext.name, ext.namespace)
    _parse(ext, report)
    if report.ok:
        _namespace(ext, report)
        _redefinition(ext, report)
        _labels(ext, report)
        _safety(ext, report)
    _shapes(ext, report)
    _rules(ext, report)
    if reasoner and report.ok:
        _reasoner(ext, report)
    return report


def _parse(ext: Extension, report: CheckReport) -> None:
    report.checks_run.append("parse")
    for err in ext.parse_errors:
        report.add("parse", Level.ERROR, err)
    if ext.parse_errors:
        return
    ontologies = {t.subject for t in ext.triples if t.predicate == RDF.type and t.object == NamedNode(OWL_NS + "Ontology")}
    if len(ontologies) != 1:
        report.add("parse", Level.ERROR, f"ontology.ttl must declare exactly one owl:Ontology (found {len(ontologies)})")
    elif not ext.version:
        report.add("parse", Level.WARNING, "the ontology has no owl:versionInfo")
    if not ext.readme.strip():
        report.add("parse", Level.WARNING, "the extension has no README.md saying what it models")


def _namespace(ext: Extension, report: CheckReport) -> None:
    report.checks_run.append("namespace")
    ns = ext.namespace
    owner = _reserved(ns) if ns not in ("#", "") else "nobody"
    if owner or not ns.startswith(("http://", "https://", "urn:")):
        report.add("namespace", Level.ERROR,
                   f"the extension's namespace {ns!r} is not its own ({owner or 'not an IRI'}); declare one with "
                   "vann:preferredNamespaceUri on the owl:Ontology")
        return
    for subject in sorted({t.subject.value for t in ext.triples if isinstance(t.subject, NamedNode)}):
        if subject == (ext.ontology_iri.value if ext.ontology_iri else None) or subject.startswith(ns):
            continue
        if _reserved(subject):
            continue  # reported by no-redefinition
        report.add("namespace", Level.ERROR,
                   f"term <{subject}> is outside the extension's namespace {ns}: an extension defines terms only in its own namespace")
    if not ext.classes and not ext.properties:
        report.add("namespace", Level.WARNING, f"the extension declares no class or property in {ns}")


def _redefinition(ext: Extension, report: CheckReport) -> None:
    report.checks_run.append("no-redefinition")
    seen: set[str] = set()
    for t in ext.triples:
        if not isinstance(t.subject, NamedNode):
            continue
        owner = _reserved(t.subject.value)
        if owner is None or t.subject.value in seen:
            continue
        seen.add(t.subject.value)
        report.add("no-redefinition", Level.ERROR,
                   f"{_curie(t.subject.value, ext)} is an existing {owner} term: the extension may not state anything about it "
                   f"(found `{_curie(t.subject.value, ext)} {_curie(t.predicate.value, ext)} "
                   f"{_curie(t.object.value, ext) if isinstance(t.object, NamedNode) else t.object}`); "
                   "subclass it in your own namespace instead")


def _labels(ext: Extension, report: CheckReport) -> None:
    report.checks_run.append("labels")
    kinds = CLASS_TYPES | PROPERTY_TYPES
    terms = ext.declared(kinds)
    for term in terms:
        have = {t.predicate for t in ext.triples if t.subject == term}
        for pred, what in ((RDFS.label, "rdfs:label"), (RDFS.comment, "rdfs:comment")):
            if pred not in have:
                report.add("labels", Level.ERROR, f"{_curie(term.value, ext)} has no {what}")
    typed = {t.subject.value for t in ext.triples if t.predicate == RDF.type and isinstance(t.subject, NamedNode)}
    for subject in sorted({t.subject.value for t in ext.triples if isinstance(t.subject, NamedNode)
                           and t.subject.value.startswith(ext.namespace)}):
        if subject not in typed:
            report.add("labels", Level.ERROR,
                       f"{_curie(subject, ext)} is used as a subject but has no rdf:type (declare it as a class or property)")


def _safety(ext: Extension, report: CheckReport) -> None:
    report.checks_run.append("owlready-safety")
    for line in unsafe_triples(ext.triples):
        if OWLREADY_NS in line:
            report.add("owlready-safety", Level.ERROR,
                       f"owlready2's python_module annotation is refused (it would import Python code): {line}")
        else:
            report.add("owlready-safety", Level.WARNING, f"owl:imports is not followed (acms loads UKO itself): {line}")


def _shapes(ext: Extension, report: CheckReport) -> None:
    if ext.shapes_text is None:
        return
    report.checks_run.append("shapes")
    try:
        ox.parse(ext.shapes_text, format=ox.RdfFormat.TURTLE)
    except SyntaxError as exc:
        report.add("shapes", Level.ERROR, f"shapes.ttl does not parse: {exc}")
        return
    for message in shacl_shacl_violations(ext.shapes_text):
        report.add("shapes", Level.ERROR, f"shapes.ttl is not valid SHACL (SHACL-SHACL): {message}")
    from acms.validation.shapes import compile_shapes

    try:
        compile_shapes(ext.shapes_text)
    except ConfigError as exc:
        report.add("shapes", Level.ERROR, f"shapes.ttl: {exc.message}")


def shacl_shacl_violations(shapes_turtle: str) -> list[str]:
    """The shapes graph validated against the W3C SHACL-SHACL shapes that pyshacl ships."""
    from importlib import resources as importlib_resources

    import pyshacl
    import rdflib

    meta = rdflib.Graph().parse(
        data=(importlib_resources.files("pyshacl") / "assets" / "shacl-shacl.ttl").read_text(encoding="utf-8"),
        format="turtle")
    data = rdflib.Graph().parse(data=shapes_turtle, format="turtle")
    conforms, results, _ = pyshacl.validate(data, shacl_graph=meta, inference="none", advanced=False,
                                            meta_shacl=False, js=False, allow_warnings=False)
    if conforms:
        return []
    sh = rdflib.Namespace("http://www.w3.org/ns/shacl#")
    out = []
    assert isinstance(results, rdflib.Graph)
    for r in results.subjects(rdflib.RDF.type, sh.ValidationResult):
        focus, path, msg = results.value(r, sh.focusNode), results.value(r, sh.resultPath), results.value(r, sh.resultMessage)
        out.append(f"{focus} {path or ''}: {msg}".strip())
    return sorted(out)


def _rules(ext: Extension, report: CheckReport) -> None:
    if not ext.rules:
        return
    report.checks_run.append("rules")
    for rule in ext.rules:
        m = _FORBIDDEN_OPS.search(scan(rule.text).code)  # string literals and comments blanked out
        if m:
            report.add("rules", Level.ERROR,
                       f"rules/{rule.name} uses {m.group(1).upper()}: rules may only INSERT (removal relies on it)")
        error = parse_update(rule_text(ext, rule.text))
        if error:
            report.add("rules", Level.ERROR, f"rules/{rule.name} does not parse: {error}")


def _reasoner(ext: Extension, report: CheckReport) -> None:
    report.checks_run.append("reasoner")
    uko = [q.triple for q in ox.parse(resources.read_text("ontology", "uko.ttl"), format=ox.RdfFormat.TURTLE)]
    ours = ext.triples
    iri = ext.ontology_iri.value if ext.ontology_iri else ext.namespace.rstrip("#/")
    result = check_consistency({"https://w3id.org/acms/uko": uko, iri: ours})
    if not result.ran:
        report.add("reasoner", Level.NOTE, result.note)
        return
    if not result.consistent:
        report.add("reasoner", Level.ERROR, "HermiT: the extension together with UKO is inconsistent")
    for cls in result.unsatisfiable:
        report.add("reasoner", Level.ERROR,
                   f"HermiT: {_curie(cls, ext)} is unsatisfiable (no individual can be one; e.g. it is declared "
                   "disjoint with one of its own superclasses)")
    if result.consistent and not result.unsatisfiable:
        report.add("reasoner", Level.NOTE, f"HermiT: consistent with UKO, every class satisfiable ({result.seconds:.1f}s)")
