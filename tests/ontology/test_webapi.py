"""The web-api extension on a Flask + FastAPI + Django fixture: exact endpoints, removal, use everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from pyoxigraph import Quad

from acms.cli.main import cli
from acms.store.oxigraph import OxigraphStore
from acms.vocab import GRAPH_META

from .conftest import index_webapi

API = "https://w3id.org/acms/ext/web-api#"
PREFIX = f"PREFIX api: <{API}>\n"

OPERATIONS = [
    ("fastapi_app.create_item", "POST", "/items", "fastapi"),
    ("fastapi_app.ping", "GET", "/ping", "fastapi"),
    ("fastapi_app.ping", "HEAD", "/ping", "fastapi"),
    ("fastapi_app.read_item", "GET", "/items/{item_id}", "fastapi"),
    ("flask_app.admin_stats", "GET", "/admin/stats", "flask"),
    ("flask_app.create_user", "POST", "/users", "flask"),
    ("flask_app.index", "GET", "/", "flask"),
    ("flask_app.user_detail", "DELETE", "/users/<int:user_id>", "flask"),
    ("flask_app.user_detail", "GET", "/users/<int:user_id>", "flask"),
    ("shop.views.CartView", "ANY", "/cart/", "django"),
    ("shop.views.product_detail", "ANY", "/products/<int:pk>/", "django"),
    ("shop.views.product_list", "ANY", "/products/", "django"),
]
ENDPOINTS = sorted({op[0] for op in OPERATIONS})


def cli_run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def select(root: Path, query: str) -> list[tuple[str, ...]]:
    store = OxigraphStore(root / ".acms" / "graph")
    try:
        rows = store.select(PREFIX + query)
        return sorted(tuple(v.value for v in row.values()) for row in rows)
    finally:
        store.close()


def all_quads(root: Path) -> set[Quad]:
    store = OxigraphStore(root / ".acms" / "graph")
    try:
        return {q for q in store.raw.quads_for_pattern(None, None, None, None) if q.graph_name != GRAPH_META}
    finally:
        store.close()


def operations(root: Path) -> list[tuple[str, ...]]:
    return select(root, """
        SELECT ?handler ?method ?path ?framework WHERE {
          GRAPH ?g { ?op a api:Operation ; api:handler ?f ; api:httpMethod ?method ; api:path ?path }
          GRAPH ?h { ?f uko:qualifiedName ?handler ; api:framework ?framework } }""")  # tiers may differ


def test_index_with_web_api_classifies_exact_endpoints(indexed_with_api: Path) -> None:
    assert operations(indexed_with_api) == sorted(OPERATIONS)
    endpoints = select(indexed_with_api, "SELECT ?qn WHERE { GRAPH ?g { ?e a api:Endpoint ; uko:qualifiedName ?qn } }")
    assert [e[0] for e in endpoints] == ENDPOINTS  # not helper, load_settings, not_an_endpoint, unused_view
    routes = select(indexed_with_api, """SELECT ?qn ?route WHERE { GRAPH ?g {
        ?e a api:Endpoint ; uko:qualifiedName ?qn ; api:route ?route } }""")
    assert ("flask_app.user_detail", "/users/<int:user_id>") in routes and len(routes) == 10
    models = select(indexed_with_api, """SELECT ?qn ?p ?model WHERE { GRAPH ?g {
        ?e uko:qualifiedName ?qn ; ?p ?m . ?m uko:qualifiedName ?model
        FILTER(?p IN (api:requestModel, api:responseModel)) } }""")
    assert models == [("fastapi_app.create_item", API + "requestModel", "fastapi_app.Item"),
                      ("fastapi_app.create_item", API + "responseModel", "fastapi_app.ItemOut")]
    assert select(indexed_with_api, "SELECT ?qn WHERE { GRAPH ?g { ?m a api:RequestModel ; uko:qualifiedName ?qn } }") \
        == [("fastapi_app.Item",)]


def test_add_on_an_existing_index_equals_indexing_with_it_and_remove_is_exact(indexed_webapi: Path, tmp_path: Path) -> None:
    before = all_quads(indexed_webapi)
    code, out, err = cli_run("ontology", "add", "web-api", "-C", str(indexed_webapi), "--no-reasoner")
    assert code == 0, err
    assert "added web-api 1.0.0" in out and "117 triples derived" in out
    assert 'extensions = ["web-api"]' in (indexed_webapi / "acms.toml").read_text(encoding="utf-8")
    assert "embed_on_index = false" in (indexed_webapi / "acms.toml").read_text(encoding="utf-8")  # kept
    assert operations(indexed_webapi) == sorted(OPERATIONS)
    added = all_quads(indexed_webapi) - before
    assert before <= all_quads(indexed_webapi)  # add only adds
    assert all("web-api" in str(q) or "--" in q.subject.value for q in added)

    # add and remove edit acms.toml, a file of the project: a read that refreshes would index its new text
    # (and keep the old one as history), so these reads do not look, and the graph shows add/remove alone
    count = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?op a api:Operation } }"
    code, out, _ = cli_run("sparql", "-C", str(indexed_webapi), count, "--format", "csv", "--refresh", "off")
    assert code == 0 and out.split() == ["n", "12"]  # api: is predeclared once web-api is loaded
    code, out, err = cli_run("ontology", "remove", "web-api", "-C", str(indexed_webapi))
    assert code == 0, err
    assert cli_run("sparql", "-C", str(indexed_webapi), count, "--refresh", "off")[0] == 3  # and gone with it
    assert "removed web-api: 58 ontology triples, 117 derived triples" in out
    assert all_quads(indexed_webapi) == before  # its triples, and nothing else
    assert "web-api" not in (indexed_webapi / "acms.toml").read_text(encoding="utf-8")
    code, _, err = cli_run("ontology", "remove", "web-api", "-C", str(indexed_webapi))
    assert code == 2 and "neither configured nor loaded" in err


def test_incremental_reindex_follows_the_routes(indexed_with_api: Path) -> None:
    app = indexed_with_api / "flask_app.py"
    text = app.read_text(encoding="utf-8").replace('@app.post("/users")\n', '@app.put("/users/me")\n')
    app.write_text(text, encoding="utf-8")
    index_webapi(indexed_with_api)
    expected = [op for op in OPERATIONS if op[0] != "flask_app.create_user"] + [
        ("flask_app.create_user", "PUT", "/users/me", "flask")]
    assert operations(indexed_with_api) == sorted(expected)


def test_assembly_focused_on_endpoints_returns_handlers(indexed_with_api: Path) -> None:
    code, out, err = cli_run("assemble", "create items and users, read an item", "-C", str(indexed_with_api),
                             "--focus-class", "api:Endpoint", "--budget", "3000", "--format", "json")
    assert code == 0, err
    fragments = json.loads(out)["fragments"]
    names = {f["entities"][0] for f in fragments}
    assert names and names <= set(ENDPOINTS)
    assert {"fastapi_app.create_item", "flask_app.create_user", "fastapi_app.read_item"} <= names
    code, _, err = cli_run("assemble", "x", "-C", str(indexed_with_api), "--focus-class", "nope:Thing")
    assert code == 2 and "unknown prefix" in err


def test_describe_stats_export_and_list(indexed_with_api: Path) -> None:
    code, out, _ = cli_run("ontology", "describe", "api:Endpoint", "-C", str(indexed_with_api), "--json")
    d = json.loads(out)
    assert code == 0 and d["label"] == "endpoint" and d["superclasses"] == ["uko:CodeElement"]
    assert d["instances"] == 10 and d["comment"].startswith("A function, method or class")
    code, out, _ = cli_run("ontology", "describe", "CodeElement", "-C", str(indexed_with_api), "--json")
    d = json.loads(out)
    assert "api:Endpoint" in d["subclasses"] and "uko:Function" in d["subclasses"]
    code, _, err = cli_run("ontology", "describe", "api:Nothing", "-C", str(indexed_with_api))
    assert code == 2 and "not a term of UKO or of a loaded extension" in err

    code, out, _ = cli_run("stats", "-C", str(indexed_with_api), "--json")
    classes = json.loads(out)["classes"]
    assert classes["api:Endpoint"] == 10 and classes["api:Operation"] == 12 and classes["api:RequestModel"] == 1

    code, out, _ = cli_run("export", "-C", str(indexed_with_api), "--format", "cytoscape")
    kinds = {e["data"]["label"]: e["data"]["kind"] for e in json.loads(out)["elements"] if "kind" in e["data"]}
    assert kinds["flask_app.index"] == "api:Endpoint" and kinds["GET /ping"] == "api:Operation"
    assert kinds["flask_app.helper"] == "Function"
    code, out, _ = cli_run("export", "-C", str(indexed_with_api), "--format", "dot")
    endpoint_colour = next(line for line in out.splitlines() if "flask_app.index\"" in line and "fillcolor" in line)
    assert 'fillcolor="palegreen"' not in endpoint_colour  # not a plain function's colour

    code, out, _ = cli_run("ontology", "list", "-C", str(indexed_with_api), "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["web-api"]["version"] == "1.0.0" and rows["web-api"]["prefix"] == "api"
    assert rows["uko"]["status"] == "loaded"


@pytest.mark.parametrize("bad", ['extensions = ["no-such-ext"]\n'])
def test_a_misconfigured_extension_is_a_config_error(webapi_project: Path, bad: str) -> None:
    (webapi_project / "acms.toml").write_text(bad, encoding="utf-8")
    code, _, err = cli_run("index", str(webapi_project))
    assert code == 6 and "no extension 'no-such-ext'" in err


def test_extension_shapes_guard_the_batch_and_acms_validate(webapi_project: Path, tmp_path: Path) -> None:
    from tests.ontology.conftest import write_extension

    onto = ('ex:Tagged a owl:Class ; rdfs:subClassOf uko:CodeElement ; rdfs:label "tagged"@en ; rdfs:comment "t"@en .\n'
            'ex:tag a owl:DatatypeProperty ; rdfs:label "tag"@en ; rdfs:comment "A tag."@en .\n')
    shapes = ('<https://example.org/ext/tags/shapes#TaggedShape> a sh:NodeShape ; sh:targetClass ex:Tagged ;\n'
              '  sh:property [ sh:path ex:tag ; sh:minCount 1 ; sh:message "a tagged element needs a tag" ] .\n')
    rule = ("PREFIX ex: <https://example.org/ext/tags#>\n"
            "INSERT { GRAPH ?g { ?f a ex:Tagged } } WHERE { GRAPH ?g { ?f a uko:Function ; uko:name \"helper\" } }")
    folder = write_extension(webapi_project, "tags", onto, shapes=shapes, rules={"tag.ru": rule})
    (webapi_project / "acms.toml").write_text('embed_on_index = false\nextensions = ["./tags"]\n', encoding="utf-8")
    code, _, err = cli_run("index", str(webapi_project))
    assert code == 5
    assert "first in flask_app.py: https://w3id.org/acms/id/webapi/code/flask_app.py#flask_app.helper violates" in err
    assert "https://example.org/ext/tags#tag [sh:MinCountConstraintComponent] a tagged element needs a tag" in err
    assert not (webapi_project / ".acms" / "graph").exists() or not select(
        webapi_project, "SELECT ?f WHERE { GRAPH ?g { ?f a <https://example.org/ext/tags#Tagged> } }")

    # with the tag derived too, the batch passes and `acms validate` (pyshacl) checks the extension's shapes
    (folder / "rules" / "tag.ru").write_text(rule.replace("?f a ex:Tagged", '?f a ex:Tagged ; ex:tag "x"'),
                                             encoding="utf-8")
    code, _, err = cli_run("index", str(webapi_project))
    assert code == 0, err
    assert cli_run("validate", "-C", str(webapi_project))[0] == 0
    store = OxigraphStore(webapi_project / ".acms" / "graph")
    try:
        store.update('DELETE WHERE { GRAPH ?g { ?f <https://example.org/ext/tags#tag> ?t } }')
    finally:
        store.close()
    code, out, _ = cli_run("validate", "-C", str(webapi_project))
    assert code == 1 and "flask_app.helper" in out and "a tagged element needs a tag" in out


def test_adding_twice_rederives_without_duplicates(indexed_webapi: Path) -> None:
    assert cli_run("ontology", "add", "web-api", "-C", str(indexed_webapi), "--no-reasoner")[0] == 0
    first = all_quads(indexed_webapi)
    code, out, _ = cli_run("ontology", "add", "web-api", "-C", str(indexed_webapi), "--no-reasoner", "--json")
    assert code == 0 and json.loads(out)["added"] == 0 and json.loads(out)["removed"] == 0
    assert all_quads(indexed_webapi) == first
    assert (indexed_webapi / "acms.toml").read_text(encoding="utf-8").count("web-api") == 1
