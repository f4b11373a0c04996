# name: set-generation
# summary: Move a project's generation on (every write to a shared store ends with it).
# param: ctl The project's control graph.
# param: project The project's IRI.
# param: gen The new generation.
DELETE { GRAPH ?ctl { ?project <https://w3id.org/acms/store#generation> ?old } }
INSERT { GRAPH ?ctl { ?project <https://w3id.org/acms/store#generation> ?gen } }
WHERE { OPTIONAL { GRAPH ?ctl { ?project <https://w3id.org/acms/store#generation> ?old } } }
