# name: demote-hot
# summary: Tier rule (rebalance): the given entities, with their fragments, move from hot back to warm (the policy no longer calls them hot).
# param: e IRI of an entity that leaves the hot tier.
DELETE { GRAPH <https://w3id.org/acms/tier/hot> { ?s ?p ?o } }
INSERT { GRAPH <https://w3id.org/acms/tier/warm> { ?s ?p ?o } }
WHERE {
  GRAPH <https://w3id.org/acms/tier/hot> { ?e uko:hasFragment? ?s . ?s ?p ?o }
}
