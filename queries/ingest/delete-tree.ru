# name: delete-tree
# summary: Remove the project and directory nodes (they are rewritten from the listing).
DELETE { GRAPH ?g { ?s ?p ?o } }
WHERE {
  GRAPH ?g {
    ?s a ?kind .
    VALUES ?kind { uko:Directory uko:Project }
    ?s ?p ?o
  }
}
