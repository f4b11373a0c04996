# name: delete-files
# summary: Remove every triple of the given files: the file node, its entities and fragments.
# param: file IRI of a file whose previous version is replaced or removed.
DELETE { GRAPH ?g { ?s ?p ?o } }
WHERE {
  GRAPH ?g {
    { BIND(?file AS ?s) } UNION { ?s uko:inFile ?file }
    ?s ?p ?o
  }
}
