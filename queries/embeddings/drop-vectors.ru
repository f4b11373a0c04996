# name: drop-vectors
# summary: Remove every stored vector and embedding-model node (the first half of a migration; the same update inserts the new ones).
DELETE { GRAPH ?g { ?frag uko:vector ?v . ?frag uko:embeddingModel ?m } }
WHERE { GRAPH ?g { ?frag uko:vector ?v . OPTIONAL { ?frag uko:embeddingModel ?m } } } ;
DELETE { GRAPH <https://w3id.org/acms/graph/meta> { ?m ?p ?o } }
WHERE { GRAPH <https://w3id.org/acms/graph/meta> { ?m a uko:EmbeddingModel ; ?p ?o } }
