# name: clear-graph
# summary: Delete every triple of one named graph (the Graph Store Protocol's PUT, before the new triples).
# param: g IRI of the graph to empty.
DELETE { GRAPH ?g { ?s ?p ?o } } WHERE { GRAPH ?g { ?s ?p ?o } }
