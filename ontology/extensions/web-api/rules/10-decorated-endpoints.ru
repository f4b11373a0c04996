# name: decorated-endpoints
# summary: Flask and FastAPI route decorators (@app.route, @bp.get, @router.post, @app.api_route, …)
#   make the decorated function an api:Endpoint with its routes and methods, and one api:Operation
#   per (method, path) declared in the same file.
PREFIX api: <https://w3id.org/acms/ext/web-api#>
PREFIX uko: <https://w3id.org/acms/uko#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
INSERT {
  GRAPH ?g {
    ?fn a api:Endpoint ; api:route ?path ; api:httpMethod ?method ; api:framework ?framework .
    ?op a api:Operation ; api:httpMethod ?method ; api:path ?path ; api:handler ?fn ;
        uko:inFile ?file ; rdfs:label ?label .
  }
}
WHERE {
  GRAPH ?g { ?fn uko:decorator ?deco ; uko:inFile ?file . }
  # receiver.verb( [rule=|path=] "/path" ...  — the path must start with "/" (Flask requires it).
  FILTER(REGEX(?deco, "^[A-Za-z_][A-Za-z0-9_.]*\\.(route|api_route|get|post|put|patch|delete|head|options)\\s*\\(\\s*(?:(?:rule|path)\\s*=\\s*)?[\"']/[^\"']*[\"']", "s"))
  BIND(REPLACE(?deco, "^[A-Za-z_][A-Za-z0-9_.]*\\.([a-z_]+)\\s*\\(.*$", "$1", "s") AS ?verb)
  BIND(REPLACE(?deco, "^[^(]*\\(\\s*(?:(?:rule|path)\\s*=\\s*)?[\"']([^\"']*)[\"'].*$", "$1", "s") AS ?path)
  BIND(IF(REGEX(?deco, "\\bmethods\\s*=\\s*[\\[(]", "s"),
          REPLACE(?deco, "^.*\\bmethods\\s*=\\s*[\\[(]([^\\])]*)[\\])].*$", "$1", "s"), "") AS ?methods)
  VALUES ?method { "GET" "POST" "PUT" "PATCH" "DELETE" "HEAD" "OPTIONS" }
  FILTER(
    (?verb NOT IN ("route", "api_route") && ?method = UCASE(?verb))
    || (?verb IN ("route", "api_route") && ?methods = "" && ?method = "GET")
    || (?verb IN ("route", "api_route") && ?methods != "" && REGEX(?methods, CONCAT("[\"']", ?method, "[\"']"), "i"))
  )
  BIND(IF(EXISTS { GRAPH ?fg { ?fr uko:inFile ?file ; uko:text ?text }
                   FILTER(REGEX(?text, "(^|\\n)\\s*(from|import)\\s+fastapi\\b")) }, "fastapi",
          IF(EXISTS { GRAPH ?fg2 { ?fr2 uko:inFile ?file ; uko:text ?text2 }
                      FILTER(REGEX(?text2, "(^|\\n)\\s*(from|import)\\s+flask\\b")) }, "flask", "python")) AS ?framework)
  BIND(IRI(CONCAT(STR(?fn), "--", ?method, "-", ENCODE_FOR_URI(?path))) AS ?op)
  BIND(CONCAT(?method, " ", ?path) AS ?label)
}
