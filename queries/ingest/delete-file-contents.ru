# name: delete-file-contents
# summary: Remove every entity and fragment that comes from the given files (uko:inFile).
# param: file IRI of a file whose previous version is replaced or removed.
DELETE { GRAPH ?g { ?s ?p ?o } }
WHERE {
  GRAPH ?g { ?s uko:inFile ?file . ?s ?p ?o }
}
