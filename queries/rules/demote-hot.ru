# name: demote-hot
# summary: Tier rule 1 of 2 (rebalance): everything hot goes back to warm; promote-hot then re-selects what is hot now.
DELETE { GRAPH <https://w3id.org/acms/tier/hot> { ?s ?p ?o } }
INSERT { GRAPH <https://w3id.org/acms/tier/warm> { ?s ?p ?o } }
WHERE { GRAPH <https://w3id.org/acms/tier/hot> { ?s ?p ?o } }
