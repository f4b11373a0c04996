# name: django-urls
# summary: Django url patterns — path("route/", views.handler) or re_path(...) in a urls.py — make the
#   named view (a function, or a class used with .as_view()) an api:Endpoint for method ANY; the view
#   must be defined in a module that the urls module imports (or in urls.py itself).
PREFIX api: <https://w3id.org/acms/ext/web-api#>
PREFIX uko: <https://w3id.org/acms/uko#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
INSERT {
  GRAPH ?vg { ?view a api:Endpoint ; api:route ?route ; api:httpMethod "ANY" ; api:framework "django" . }
  GRAPH ?ug { ?op a api:Operation ; api:httpMethod "ANY" ; api:path ?route ; api:handler ?view ;
                  uko:inFile ?urls ; rdfs:label ?label . }
}
WHERE {
  GRAPH ?ug { ?urls a uko:File ; uko:path ?upath . ?umod a uko:Module ; uko:inFile ?urls . }
  FILTER(REGEX(?upath, "(^|/)urls\\.py$"))
  GRAPH ?vg { ?view uko:name ?name ; uko:inFile ?vfile . ?vmod a uko:Module ; uko:defines ?view . }
  FILTER(?vmod = ?umod || EXISTS { GRAPH ?ig { ?umod uko:imports ?vmod } })
  GRAPH ?fg { ?fr uko:inFile ?urls ; uko:text ?text . }
  BIND(CONCAT("\\b(?:re_)?path\\(\\s*r?[\"']([^\"']*)[\"']\\s*,\\s*(?:[A-Za-z_][A-Za-z0-9_]*\\.)*",
              ?name, "(?:\\.as_view\\([^)]*\\))?\\s*[,)]") AS ?pattern)
  FILTER(REGEX(?text, ?pattern))
  BIND(REPLACE(?text, CONCAT("^.*?", ?pattern, ".*$"), "$1", "s") AS ?rel)
  BIND(IF(STRSTARTS(?rel, "^"), SUBSTR(?rel, 2), ?rel) AS ?rel2)
  BIND(CONCAT("/", ?rel2) AS ?route)
  BIND(IRI(CONCAT(STR(?view), "--ANY-", ENCODE_FOR_URI(?route))) AS ?op)
  BIND(CONCAT("ANY ", ?route) AS ?label)
}
