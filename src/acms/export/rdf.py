"""RDF serialisations, written by pyoxigraph's own serializers straight to the output stream."""

from __future__ import annotations

from collections.abc import Sequence
from typing import BinaryIO

import pyoxigraph as ox
from pyoxigraph import Quad, Triple

from acms.vocab import PREFIXES

FORMATS = {"turtle": ox.RdfFormat.TURTLE, "trig": ox.RdfFormat.TRIG, "nquads": ox.RdfFormat.N_QUADS,
           "jsonld": ox.RdfFormat.JSON_LD}


def write(quads: Sequence[Quad], fmt: str, out: BinaryIO) -> None:
    rdf_format = FORMATS[fmt]
    prefixes = {p: iri for p, iri in PREFIXES.items() if p in ("uko", "prov", "rdf", "rdfs", "xsd", "dcterms")}
    if rdf_format.supports_datasets:
        ox.serialize(quads, out, rdf_format, prefixes=prefixes if fmt == "trig" else None)
    else:
        triples = list(dict.fromkeys(Triple(q.subject, q.predicate, q.object) for q in quads))
        ox.serialize(triples, out, rdf_format, prefixes=prefixes if fmt == "turtle" else None)
