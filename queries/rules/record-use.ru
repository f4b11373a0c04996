# name: record-use
# summary: Count one use of each given entity by an assembled context, and when (meta graph; feeds the hot tier).
# param: e IRI of an entity in the assembled context.
# param: now Literal (xsd:dateTime) of the assembly.
DELETE { GRAPH <https://w3id.org/acms/graph/meta> { ?e uko:lastUsedAt ?old ; uko:useCount ?n } }
INSERT { GRAPH <https://w3id.org/acms/graph/meta> { ?e uko:lastUsedAt ?now ; uko:useCount ?next } }
WHERE {
  OPTIONAL { GRAPH <https://w3id.org/acms/graph/meta> { ?e uko:lastUsedAt ?old ; uko:useCount ?n } }
  BIND(COALESCE(?n, 0) + 1 AS ?next)
}
