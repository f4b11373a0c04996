# name: set-policy
# summary: Record the secrets policy of the stored texts in the meta graph.
# param: policy The policy literal ("scrubbed/N", or "kept").
DELETE { GRAPH <https://w3id.org/acms/graph/meta> { <https://w3id.org/acms/meta/privacy> uko:secretsPolicy ?old } }
INSERT { GRAPH <https://w3id.org/acms/graph/meta> { <https://w3id.org/acms/meta/privacy> uko:secretsPolicy ?policy } }
WHERE { OPTIONAL { GRAPH <https://w3id.org/acms/graph/meta> { <https://w3id.org/acms/meta/privacy> uko:secretsPolicy ?old } } }
