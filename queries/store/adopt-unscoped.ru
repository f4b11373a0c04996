# name: adopt-unscoped
# summary: Move an unscoped index (the five shared graph names) into one project's graphs; one operation, so one transaction.
# param: from A shared graph name (tier/hot … graph/ontology), paired with its target.
# param: to The project's own graph for it.
DELETE { GRAPH ?from { ?s ?p ?o } }
INSERT { GRAPH ?to { ?s ?p ?o } }
WHERE { GRAPH ?from { ?s ?p ?o } }
