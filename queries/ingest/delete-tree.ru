# name: delete-tree
# summary: Remove the project and directory nodes (they are rewritten from the listing).
# param: s IRI of a node to remove, as ingest/tree-nodes lists them (unbound: every one); bound, a store that writes by a diff looks again only at the kept quads of these.
DELETE { GRAPH ?g { ?s ?p ?o } }
WHERE {
  GRAPH ?g {
    ?s a ?kind .
    VALUES ?kind { uko:Directory uko:Project }
    ?s ?p ?o
  }
}
