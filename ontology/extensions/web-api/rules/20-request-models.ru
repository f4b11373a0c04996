# name: request-models
# summary: A pydantic model (a class whose bases name BaseModel) used as a parameter annotation of an
#   endpoint is its api:RequestModel; the class named by response_model= is its api:responseModel.
#   The model must be defined in the endpoint's module or in a module that module imports.
PREFIX api: <https://w3id.org/acms/ext/web-api#>
PREFIX uko: <https://w3id.org/acms/uko#>
INSERT {
  GRAPH ?g { ?fn api:requestModel ?model . }
  GRAPH ?mg { ?model a api:RequestModel . }
}
WHERE {
  GRAPH ?g { ?fn a api:Endpoint ; uko:signature ?sig ; uko:inFile ?file . }
  GRAPH ?mg { ?model a uko:Class ; uko:name ?name ; uko:signature ?csig ; uko:inFile ?mfile . }
  FILTER(REGEX(?csig, "^class\\s+\\w+\\s*\\([^)]*\\bBaseModel\\b"))
  GRAPH ?g2 { ?mod a uko:Module ; uko:inFile ?file . }
  GRAPH ?g3 { ?mmod a uko:Module ; uko:inFile ?mfile . }
  FILTER(?mod = ?mmod || EXISTS { GRAPH ?g4 { ?mod uko:imports ?mmod } })
  FILTER(REGEX(?sig, CONCAT("[(,]\\s*\\w+\\s*:\\s*(?:[\\w.]*\\.)?", ?name, "\\s*[,)=]")))
} ;
INSERT {
  GRAPH ?g { ?fn api:responseModel ?model . }
}
WHERE {
  GRAPH ?g { ?fn a api:Endpoint ; uko:decorator ?deco ; uko:inFile ?file . }
  FILTER(REGEX(?deco, "\\bresponse_model\\s*="))
  BIND(REPLACE(?deco, "^.*\\bresponse_model\\s*=\\s*(?:[\\w]+\\.)*(\\w+).*$", "$1", "s") AS ?name)
  GRAPH ?mg { ?model a uko:Class ; uko:name ?name ; uko:inFile ?mfile . }
  GRAPH ?g2 { ?mod a uko:Module ; uko:inFile ?file . }
  GRAPH ?g3 { ?mmod a uko:Module ; uko:inFile ?mfile . }
  FILTER(?mod = ?mmod || EXISTS { GRAPH ?g4 { ?mod uko:imports ?mmod } })
}
