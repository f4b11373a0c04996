"""pyshacl over the same shapes: the reference the compiled SPARQL checks are tested against.

Why keep it: pyshacl implements SHACL in full, so any disagreement with ``validation.shapes`` on a
fixture is a compiler bug. It is slow (≈ 70 µs per triple), so it is for tests and ``acms validate``,
not for every ingest batch. Results are mapped to the same ``Violation`` (constraint components as
``sh:…ConstraintComponent``, terms via ``term_text``) so the two can be compared as sets.
"""

from __future__ import annotations

import rdflib
from pyoxigraph import Literal, NamedNode
from rdflib.namespace import RDF, SH

from acms.errors import ConfigError
from acms.validation.shapes import SH as SH_NS
from acms.validation.shapes import Violation, shapes_text, term_text


def shapes_graph(text: str | None = None) -> rdflib.Graph:
    """The shipped shapes (or the given Turtle) as an rdflib graph, as pyshacl wants them."""
    g = rdflib.Graph()
    g.parse(data=shapes_text() if text is None else text, format="turtle")
    return g


def pyshacl_validate(data: rdflib.Graph, shapes: rdflib.Graph | None = None) -> list[Violation]:
    """Validate ``data`` with pyshacl (no inference, no SHACL-AF); an empty list means it conforms."""
    import pyshacl  # deferred: importing pyshacl costs ~0.5 s and only tests and `acms validate` need it
    from pyshacl.errors import ReportableRuntimeError

    try:
        _conforms, results, _text = pyshacl.validate(
            data,
            shacl_graph=shapes if shapes is not None else shapes_graph(),
            inference="none",
            advanced=False,
            abort_on_first=False,
            allow_warnings=False,
            meta_shacl=False,
            js=False,
        )
    except ReportableRuntimeError as exc:
        raise ConfigError(f"pyshacl could not validate: {exc}") from None
    assert isinstance(results, rdflib.Graph)
    out = {_violation(results, r) for r in results.subjects(RDF.type, SH.ValidationResult)}
    return sorted(out, key=lambda v: (*v.key(), v.value or ""))


def _violation(g: rdflib.Graph, result: rdflib.term.Node) -> Violation:
    component = g.value(result, SH.sourceConstraintComponent)
    path = g.value(result, SH.resultPath)
    value = g.value(result, SH.value)
    return Violation(
        focus=_text(g.value(result, SH.focusNode)),
        shape=_text(g.value(result, SH.sourceShape)),
        path="" if path is None else _text(path),
        constraint="sh:" + str(component).removeprefix(SH_NS),
        message=str(g.value(result, SH.resultMessage) or ""),
        value=None if value is None else _text(value),
    )


def _text(term: rdflib.term.Node | None) -> str:
    """The same text ``validation.shapes`` gives a pyoxigraph term (literals in N-Triples form)."""
    if isinstance(term, rdflib.URIRef):
        return term_text(NamedNode(str(term)))
    if isinstance(term, rdflib.BNode):
        return f"_:{term}"
    if isinstance(term, rdflib.Literal):
        if term.language:
            return term_text(Literal(str(term), language=term.language))
        datatype = NamedNode(str(term.datatype)) if term.datatype else None
        return term_text(Literal(str(term), datatype=datatype))
    raise ValueError(f"unexpected term in a pyshacl result: {term!r}")


__all__ = ["pyshacl_validate", "shapes_graph"]
