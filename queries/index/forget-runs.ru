# name: forget-runs
# summary: Drop the records of the given index runs from the meta graph (the runs before the last ones kept: a live index runs once per save, and queries that find the last run read them all).
# param: run IRI of an index run to forget.
DELETE { GRAPH <https://w3id.org/acms/graph/meta> { ?run ?p ?o } }
WHERE { GRAPH <https://w3id.org/acms/graph/meta> { ?run a uko:IndexRun ; ?p ?o } }
