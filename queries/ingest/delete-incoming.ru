# name: delete-incoming
# summary: Remove edges from elsewhere that point at entities which no longer exist.
# param: gone IRI of an entity that disappeared in this run.
DELETE { GRAPH ?g { ?s ?p ?gone } }
WHERE {
  GRAPH ?g { ?s ?p ?gone }
}
