# name: delete-incoming
# summary: Remove edges in the current tiers that point at entities which no longer exist (history in cold, and decisions' uko:about, keep theirs).
# param: gone IRI of an entity that disappeared in this run.
# The tiers are a FILTER, not a second VALUES block (see delete-files.ru: that joined by scanning).
DELETE { GRAPH ?g { ?s ?p ?gone } }
WHERE {
  GRAPH ?g { ?s ?p ?gone }
  FILTER(?g IN (<https://w3id.org/acms/tier/hot>, <https://w3id.org/acms/tier/warm>) && ?p != uko:about)
}
