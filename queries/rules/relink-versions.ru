# name: relink-versions
# summary: The re-index version that the current entity superseded is now superseded by (and revised into) the entity's newly archived version. Commit-ended versions keep their own chain.
# param: e IRI of an entity archived in this run.
# param: stamp Literal suffix of this run's version IRIs.
DELETE { GRAPH <https://w3id.org/acms/tier/cold> { ?old uko:supersededBy ?e } }
INSERT { GRAPH <https://w3id.org/acms/tier/cold> { ?old uko:supersededBy ?v . ?v prov:wasRevisionOf ?old } }
WHERE {
  GRAPH <https://w3id.org/acms/tier/cold> {
    ?old uko:supersededBy ?e .
    FILTER NOT EXISTS { ?old prov:wasInvalidatedBy ?change }
  }
  BIND(IRI(CONCAT(STR(?e), "/v/", ?stamp)) AS ?v)
}
