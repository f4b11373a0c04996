# name: delete-files
# summary: Remove the triples whose subject is one of the given file nodes.
# param: file IRI of a file whose previous version is replaced or removed.
DELETE { GRAPH ?g { ?file ?p ?o } }
WHERE {
  GRAPH ?g { ?file ?p ?o }
}
