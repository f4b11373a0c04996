"""The real server (uvicorn) on 127.0.0.1: SPARQL protocol, safety, updates, timeout, render API, concurrency."""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import uvicorn
from rdflib.plugins.stores.sparqlstore import SPARQLStore

from acms.config import Settings
from acms.retrieval.search import Searcher
from acms.server.app import ServerConfig, create_app
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore
from acms.strategies.registry import StrategyRegistry

from ..conftest import FIXTURES
from ..strategies.test_assembly import _index

REQUEST = {"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "intent": "parse header lines",
           "budgets": {"tokens_max": 1500, "time_ms": 5000}, "request_id": "req-7"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(searcher: Searcher, config: ServerConfig) -> tuple[uvicorn.Server, threading.Thread, str]:
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(searcher, StrategyRegistry.default(), config),
                                           host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(url + "/health", timeout=1)
            break
        except OSError:
            time.sleep(0.05)
    return server, thread, url


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Searcher]:
    root = tmp_path_factory.mktemp("serve") / "sample"
    shutil.copytree(FIXTURES / "sample_project", root)
    _index(root)
    layout = IndexLayout(root / ".acms")
    store = OxigraphStore(layout.graph)
    yield Searcher(store, layout, Settings())
    store.close()


@pytest.fixture(scope="module")
def url(searcher: Searcher) -> Iterator[str]:
    server, thread, base = _start(searcher, ServerConfig(query_timeout_s=5.0))
    yield base
    server.should_exit = True
    thread.join(5)


def get(url: str, accept: str | None = None) -> tuple[int, str, str]:
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers.get("content-type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("content-type", ""), e.read().decode()


def post(url: str, body: bytes, ctype: str, accept: str | None = None) -> tuple[int, str]:
    headers = {"Content-Type": ctype, **({"Accept": accept} if accept else {})}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=body, headers=headers), timeout=20) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


SELECT = "SELECT ?c WHERE { GRAPH ?g { ?c a <https://w3id.org/acms/uko#Class> } } ORDER BY ?c"


def q(base: str, text: str) -> str:
    return base + "/sparql?" + urllib.parse.urlencode({"query": text})


def test_rdflib_sparqlstore_and_formats(url: str) -> None:
    store = SPARQLStore(query_endpoint=url + "/sparql")
    rows = [str(r[0]) for r in store.query(SELECT)]
    assert [r.rsplit("#", 1)[-1] for r in rows] == ["pkg.mod.Base", "pkg.mod.Parser"]
    with urllib.request.urlopen(urllib.request.Request(q(url, SELECT), headers={"Origin": "http://yasgui.example"})) as r:
        assert r.headers.get("access-control-allow-origin") == "*"  # YASGUI can read it
    status, ctype, body = get(q(url, SELECT))
    assert status == 200 and "sparql-results+json" in ctype and len(json.loads(body)["results"]["bindings"]) == 2
    status, ctype, body = get(q(url, SELECT), "application/sparql-results+xml")
    assert "xml" in ctype and body.count("<result>") == 2
    status, ctype, body = get(q(url, SELECT), "text/csv")
    assert ctype.startswith("text/csv") and body.splitlines()[0].strip() == "c"
    status, ctype, body = get(q(url, SELECT), "text/tab-separated-values")
    assert body.splitlines()[0].strip() == "?c"
    status, ctype, body = get(q(url, "CONSTRUCT { ?c a <urn:C> } WHERE { GRAPH ?g { ?c a uko:Class } }"))
    assert ctype.startswith("text/turtle") and body.count("urn:C") == 2
    status, body = post(url + "/sparql", b"ASK { GRAPH ?g { ?c a uko:Method } }", "application/sparql-query")
    assert status == 200 and json.loads(body)["boolean"] is True
    status, body = post(url + "/sparql", urllib.parse.urlencode({"query": SELECT}).encode(),
                        "application/x-www-form-urlencoded")
    assert status == 200 and len(json.loads(body)["results"]["bindings"]) == 2


def test_hostile_queries_cost_one_error(url: str) -> None:
    status, _, body = get(q(url, "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"))
    assert status == 400 and "SERVICE is refused" in body
    status, _, body = get(q(url, "SELECT * WHERE " + "{" * 3000 + "}" * 3000))
    assert status == 400 and "nests" in body
    status, _, body = get(q(url, "SELECT ?x WHERE { ?x ?y }"))
    assert status == 400 and "syntax" in body
    assert get(url + "/health")[0] == 200  # still alive


def test_updates_refused_by_default(url: str) -> None:
    status, body = post(url + "/sparql", b"INSERT DATA { <urn:a> <urn:b> <urn:c> }", "application/sparql-update")
    assert status == 403 and "--allow-update" in body
    assert json.loads(get(q(url, "ASK { <urn:a> <urn:b> <urn:c> }"))[2])["boolean"] is False


def test_updates_allowed_and_timeout(searcher: Searcher) -> None:
    server, thread, base = _start(searcher, ServerConfig(allow_update=True, query_timeout_s=0.05))
    try:
        status, _ = post(base + "/sparql", b"INSERT DATA { GRAPH <urn:g> { <urn:a> <urn:b> <urn:c> } }",
                         "application/sparql-update")
        assert status == 204
        heavy = ("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g1 { ?a ?b ?c } GRAPH ?g2 { ?d ?e ?f } "
                 "GRAPH ?g3 { ?h ?i ?j } }")
        status, _, body = get(q(base, heavy))
        assert status == 503 and "timeout" in body
    finally:
        searcher.store.raw.update("DROP SILENT GRAPH <urn:g>")
        server.should_exit = True
        thread.join(10)


def test_render_endpoint(url: str) -> None:
    status, body = post(url + "/v0/render", json.dumps(REQUEST).encode(), "application/json")
    reply = json.loads(body)
    assert status == 200 and reply["request_id"] == "req-7" and reply["fragments"] and "kv_policy" in reply
    cases = [
        (b"{not json", 400, "INVALID_REQUEST", "JSON"),
        (json.dumps({**REQUEST, "budgets": {"tokens_max": -1, "time_ms": 5}}).encode(), 400, "INVALID_REQUEST",
         "budgets.tokens_max"),
        (json.dumps({**REQUEST, "budgets": {"tokens_max": 5, "time_ms": 1000}}).encode(), 422, "BUDGET_TOO_SMALL", ""),
        (json.dumps({**REQUEST, "strategy": "nope"}).encode(), 400, "INVALID_REQUEST", "unknown strategy"),
    ]
    for body_bytes, want_status, code, needle in cases:
        status, body = post(url + "/v0/render", body_bytes, "application/json")
        err = json.loads(body)["error"]
        assert (status, err["code"]) == (want_status, code) and needle in err["message"]
    strategies = json.loads(get(url + "/v0/strategies")[2])
    assert {s["name"] for s in strategies} >= {"arce", "simple-keyword", "breadth-depth-navigator"}


def test_concurrent_requests(url: str) -> None:
    def one(i: int) -> int:
        if i % 2:
            return post(url + "/v0/render", json.dumps(REQUEST).encode(), "application/json")[0]
        return get(q(url, SELECT))[0]

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(one, range(16))) == [200] * 16
