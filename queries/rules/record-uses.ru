# name: record-uses
# summary: Count several logged uses of entities at once, in the meta graph (the fold of readers' usage log): each entity's use count grows by its uses, and its last use is the time given.
# param: e IRI of an entity used.
# param: uses How many times it was used (a VALUES column beside ?e).
# param: at When it was last used (a VALUES column beside ?e, an xsd:dateTime).
DELETE { GRAPH <https://w3id.org/acms/graph/meta> { ?e uko:lastUsedAt ?old ; uko:useCount ?n } }
INSERT { GRAPH <https://w3id.org/acms/graph/meta> { ?e uko:lastUsedAt ?at ; uko:useCount ?next } }
WHERE {
  OPTIONAL { GRAPH <https://w3id.org/acms/graph/meta> { ?e uko:lastUsedAt ?old ; uko:useCount ?n } }
  BIND(COALESCE(?n, 0) + ?uses AS ?next)
}
