# name: delete-links
# summary: Remove the given links, wherever the current tiers hold them (a file linked again that no longer makes them).
# param: s The entity the link starts from (a VALUES column beside ?p and ?o).
# param: p The link's property: uko:calls, uko:imports, uko:references or uko:inherits.
# param: o The entity it pointed at.
DELETE { GRAPH ?g { ?s ?p ?o } }
WHERE {
  GRAPH ?g { ?s ?p ?o }
  FILTER(?g IN (<https://w3id.org/acms/tier/hot>, <https://w3id.org/acms/tier/warm>))
}
