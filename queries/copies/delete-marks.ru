# name: delete-marks
# summary: Remove copy and generated / vendored triples the files no longer carry, wherever their file's tier holds them.
# param: file A file whose triple goes (a VALUES column beside ?p and ?o).
# param: p The property: uko:copyOf, uko:generated or uko:vendored.
# param: o The value that goes.
DELETE { GRAPH ?g { ?file ?p ?o } }
WHERE {
  GRAPH ?g { ?file ?p ?o }
  FILTER(?g IN (<https://w3id.org/acms/tier/hot>, <https://w3id.org/acms/tier/warm>))
}
