# name: delete-files
# summary: Remove the triples whose subject is one of the given file nodes (current tiers only; usage statistics in meta stay).
# param: file IRI of a file whose previous version is replaced or removed.
DELETE { GRAPH ?g { ?file ?p ?o } }
WHERE {
  VALUES ?g { <https://w3id.org/acms/tier/hot> <https://w3id.org/acms/tier/warm> }
  GRAPH ?g { ?file ?p ?o }
}
