# name: delete-files
# summary: Remove the triples whose subject is one of the given file nodes (current tiers only; usage statistics in meta stay).
# param: file IRI of a file whose previous version is replaced or removed.
# The tiers are a FILTER, not a second VALUES block: with both, Oxigraph scanned both graphs whole
# (16.6 s for 192 files on the standard library's index, against 0.00 s).
DELETE { GRAPH ?g { ?file ?p ?o } }
WHERE {
  GRAPH ?g { ?file ?p ?o }
  FILTER(?g IN (<https://w3id.org/acms/tier/hot>, <https://w3id.org/acms/tier/warm>))
}
