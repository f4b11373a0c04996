# name: unlink-versions
# summary: Drop the supersededBy link of versions that a newer version now follows.
# param: v IRI of a version.
DELETE { GRAPH <https://w3id.org/acms/tier/cold> { ?v uko:supersededBy ?next } }
WHERE { GRAPH <https://w3id.org/acms/tier/cold> { ?v uko:supersededBy ?next } }
