"""OWL consistency of an extension together with UKO, checked by owlready2's HermiT (needs Java).

Why owlready2: HermiT finds what the syntactic checks cannot (a class declared disjoint with its own
superclass, a class under two disjoint UKO classes). Safety: owlready2 runs in its own ``World()``
(never the global ``default_world``), reads N-Triples converted by pyoxigraph (it cannot read Turtle),
and never sees ``owl:imports`` (it would fetch them) or its ``python_module`` annotation (it would
import that module): such triples are dropped before loading, and ``check`` reports them.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

OWLREADY_NS = "http://www.lesfleursdunormal.fr/static/_downloads/owlready_ontology.owl#"
OWL_IMPORTS = "http://www.w3.org/2002/07/owl#imports"
JAVA_MEMORY_MB = 512


@dataclass(frozen=True)
class ReasonerResult:
    """``ran`` is False when Java is missing (``note`` says so); ``unsatisfiable`` lists class IRIs."""

    ran: bool
    consistent: bool = True
    unsatisfiable: tuple[str, ...] = ()
    note: str = ""
    seconds: float = 0.0


def unsafe_triples(triples: Iterable[ox.Triple | ox.Quad]) -> list[str]:
    """Triples owlready2 would act on when loading (fetch imports, import a Python module)."""
    out = []
    for t in triples:
        if t.predicate.value == OWL_IMPORTS or t.predicate.value.startswith(OWLREADY_NS):
            out.append(f"{t.subject} {t.predicate} {t.object}")
    return out


def _ntriples(triples: Iterable[ox.Triple | ox.Quad]) -> bytes:
    safe = [ox.Triple(t.subject, t.predicate, t.object) for t in triples
            if t.predicate.value != OWL_IMPORTS and not t.predicate.value.startswith(OWLREADY_NS)]
    return ox.serialize(safe, format=ox.RdfFormat.N_TRIPLES)


def check_consistency(ontologies: dict[str, list[ox.Triple]]) -> ReasonerResult:
    """Load each named ontology (IRI -> triples) into one fresh World and run HermiT over it."""
    import time

    if shutil.which("java") is None:
        return ReasonerResult(ran=False, note="skipped: no Java runtime on PATH (HermiT needs one)")
    import owlready2
    from owlready2 import OwlReadyInconsistentOntologyError, World, reasoning

    start = time.perf_counter()
    world = World()  # never owlready2.default_world
    reasoning.JAVA_MEMORY = JAVA_MEMORY_MB
    try:
        with tempfile.TemporaryDirectory(prefix="acms-owl-") as tmp:
            loaded = []
            for i, (iri, triples) in enumerate(ontologies.items()):
                path = Path(tmp) / f"o{i}.nt"
                path.write_bytes(_ntriples(triples))
                onto = world.get_ontology(iri)
                with path.open("rb") as fh:
                    onto.load(fileobj=fh, format="ntriples", reload=True)
                loaded.append(onto)
            try:
                owlready2.sync_reasoner_hermit(world, infer_property_values=False, debug=0)
            except OwlReadyInconsistentOntologyError:
                return ReasonerResult(ran=True, consistent=False, seconds=time.perf_counter() - start)
            unsat = sorted(c.iri for c in world.inconsistent_classes() if c.iri != "http://www.w3.org/2002/07/owl#Nothing")
            return ReasonerResult(ran=True, consistent=True, unsatisfiable=tuple(unsat),
                                  seconds=time.perf_counter() - start)
    except owlready2.OwlReadyError as exc:
        return ReasonerResult(ran=False, note=f"skipped: owlready2 could not reason: {exc}")
    finally:
        world.close()
