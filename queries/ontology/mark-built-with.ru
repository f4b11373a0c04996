# name: mark-built-with
# summary: Mark the index as built by another UKO version (the ontology graph's owl:versionInfo and every index run's uko:ukoVersion): how tests and bench/ingest.py --migration force the migration an older index gets.
# param: version Literal UKO version to record, e.g. "1.0.0".
DELETE { GRAPH ?g { ?s ?p ?old } }
INSERT { GRAPH ?g { ?s ?p ?version } }
WHERE {
  VALUES (?g ?p) {
    (<https://w3id.org/acms/graph/ontology> owl:versionInfo)
    (<https://w3id.org/acms/graph/meta> uko:ukoVersion)
  }
  GRAPH ?g { ?s ?p ?old }
  FILTER(?p != owl:versionInfo || ?s = <https://w3id.org/acms/uko>)
}
