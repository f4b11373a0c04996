# name: retire-decision
# summary: Retire a superseded decision: status "retired", prov:invalidatedAtTime, and every triple of it and of its fragments moved to the cold tier (one request, one transaction).
# param: decision IRI of the decision being superseded.
# param: now xsd:dateTime of the retirement.
DELETE { GRAPH ?g { ?s ?p ?o } }
INSERT {
  GRAPH <https://w3id.org/acms/tier/cold> { ?s ?p ?moved . ?decision prov:invalidatedAtTime ?now }
}
WHERE {
  # ?s is the decision itself (the zero-length step) or one of its fragments.
  GRAPH ?dg { ?decision a uko:Decision ; uko:hasFragment? ?s }
  GRAPH ?g { ?s ?p ?o }
  FILTER(?g != <https://w3id.org/acms/tier/cold>)
  BIND(IF(?s = ?decision && ?p = uko:status, "retired", ?o) AS ?moved)
}
