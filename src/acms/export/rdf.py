"""RDF serialisations, written by pyoxigraph's own serializers straight to the output stream.

Triples are not de-duplicated across graphs (acms keeps a triple in one tier at a time; a repeated
triple would be harmless RDF anyway), so nothing of the export is held in memory."""

from __future__ import annotations

from collections.abc import Iterable
from typing import BinaryIO

import pyoxigraph as ox
from pyoxigraph import Quad

from acms.vocab import PREFIXES

FORMATS = {"turtle": ox.RdfFormat.TURTLE, "trig": ox.RdfFormat.TRIG, "nquads": ox.RdfFormat.N_QUADS,
           "jsonld": ox.RdfFormat.JSON_LD}


def write(quads: Iterable[Quad], fmt: str, out: BinaryIO) -> None:
    """Serialize as the quads stream in (a triple format drops the graph names)."""
    rdf_format = FORMATS[fmt]
    prefixes = {p: iri for p, iri in PREFIXES.items() if p in ("uko", "prov", "rdf", "rdfs", "xsd", "dcterms")}
    if rdf_format.supports_datasets:
        ox.serialize(quads, out, rdf_format, prefixes=prefixes if fmt == "trig" else None)
    else:
        ox.serialize((q.triple for q in quads), out, rdf_format, prefixes=prefixes if fmt == "turtle" else None)
