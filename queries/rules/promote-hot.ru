# name: promote-hot
# summary: Tier rule (rebalance): the given current entities, with their fragments, move from warm to hot.
# param: e IRI of a current entity the tier policy calls hot.
DELETE { GRAPH <https://w3id.org/acms/tier/warm> { ?s ?p ?o } }
INSERT { GRAPH <https://w3id.org/acms/tier/hot> { ?s ?p ?o } }
WHERE {
  GRAPH <https://w3id.org/acms/tier/warm> { ?e uko:hasFragment? ?s . ?s ?p ?o }
}
