# name: delete-incoming
# summary: Remove edges in the current tiers that point at entities which no longer exist (history in cold, and decisions' uko:about, keep theirs).
# param: gone IRI of an entity that disappeared in this run.
DELETE { GRAPH ?g { ?s ?p ?gone } }
WHERE {
  VALUES ?g { <https://w3id.org/acms/tier/hot> <https://w3id.org/acms/tier/warm> }
  GRAPH ?g { ?s ?p ?gone }
  FILTER(?p != uko:about)
}
