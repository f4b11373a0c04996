"""The real server (uvicorn in a thread) on 127.0.0.1: SPARQL protocol and clients, safety, updates,
timeout and row cap, the render API and its error statuses, concurrency, and ``acms serve`` itself."""

from __future__ import annotations

import http.client
import json
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib
import uvicorn
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from starlette.applications import Starlette

from acms.api import Index
from acms.config import Settings
from acms.errors import AcmsError, ErrorCode, ModelMismatch, ProviderError, ProviderTimeout, StoreLocked, StoreMissing
from acms.retrieval.search import Searcher
from acms.tokens import count
from acms.server import mapping as mapping_module
from acms.service import assembly as service_assembly
from acms.server.app import STATUS_BY_CODE, create_app
from acms.server.sparql_protocol import (RESULT_FORMATS, Kind, Limits, Operation, ProtocolError, negotiate,
                                            run_query)
from acms.store.layout import IndexLayout
from acms.store.access import IndexAccess
from acms.store.lock import lock_for
from acms.store.oxigraph import OxigraphStore, open_handle
from acms.strategies.registry import StrategyRegistry

from ..conftest import FIXTURES
from ..strategies.test_assembly import _index

UKO = "https://w3id.org/acms/uko#"
ONTOLOGY = "<https://w3id.org/acms/graph/ontology>"
SELECT = f"SELECT ?c WHERE {{ GRAPH ?g {{ ?c a <{UKO}Class> }} }} ORDER BY ?c"
CLASSES = ["pkg.mod.Base", "pkg.mod.Parser"]
REQUEST = {"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "intent": "parse header lines",
           "budgets": {"tokens_max": 1500, "time_ms": 5000}, "request_id": "req-7"}
# Streams rows for minutes (358^3 combinations) unless the consumer stops pulling them.
STREAMING = f"SELECT * WHERE {{ GRAPH {ONTOLOGY} {{ ?a ?b ?c . ?d ?e ?f . ?h ?i ?j }} }}"
# One row, computed inside one native call (over a minute): only terminating its process stops it.
AGGREGATE = (f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH {ONTOLOGY} {{ ?a ?b ?c . ?d ?e ?f . ?h ?i ?j }} "
             "FILTER(STR(?c) != STR(?j)) }")


@dataclass
class Running:
    url: str
    app: Starlette
    server: uvicorn.Server
    thread: threading.Thread

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.app.state.sparql.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(searcher: Searcher | Path, **limits: object) -> Running:
    """A server over the searcher's index, or the index of the project at that path."""
    where = searcher.layout.root if isinstance(searcher, Searcher) else searcher / ".acms"
    index = Index(where.parent, Settings(), where, mode="shared", wait=5)
    app = create_app(index, **limits)  # type: ignore[arg-type]
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/health", timeout=1) as r:
                if r.status == 200:
                    return Running(url, app, server, thread)
        except OSError:
            time.sleep(0.02)
    raise RuntimeError("server did not start")


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Searcher]:
    root = tmp_path_factory.mktemp("serve") / "sample"
    shutil.copytree(FIXTURES / "sample_project", root)
    _index(root)
    layout = IndexLayout(root / ".acms")
    # A read-only handle outside the lock, for the tests' own checks; the servers take the lock per request.
    store = OxigraphStore.attached(open_handle(layout.graph, read_only=True), layout.graph)
    yield Searcher(store, layout, Settings())


def fresh(searcher: Searcher) -> OxigraphStore:
    """A read-only handle opened now: the module's servers write (use records), and RocksDB may have
    compacted away files that a handle opened at the module's start still lists (seen once: a missing
    ``.sst``)."""
    graph = searcher.layout.graph
    return OxigraphStore.attached(open_handle(graph, read_only=True), graph)


@pytest.fixture(scope="module")
def served(searcher: Searcher) -> Iterator[Running]:
    running = start(searcher, query_timeout_s=10.0)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def url(served: Running) -> str:
    return served.url


def call(url: str, body: bytes | None = None, ctype: str | None = None, accept: str | None = None,
         method: str | None = None) -> tuple[int, str, str]:
    headers = {k: v for k, v in (("Content-Type", ctype), ("Accept", accept)) if v}
    req = urllib.request.Request(url, data=body, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("content-type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("content-type", ""), e.read().decode()


def q(base: str, text: str, **params: str) -> str:
    return base + "/sparql?" + urllib.parse.urlencode({"query": text, **params})


def post_query(base: str, text: str, accept: str | None = None) -> tuple[int, str, str]:
    return call(base + "/sparql", text.encode(), "application/sparql-query", accept)


def post_update(base: str, text: str) -> tuple[int, str, str]:
    return call(base + "/sparql", text.encode(), "application/sparql-update")


def alive(base: str) -> bool:
    try:
        return call(base + "/health")[0] == 200
    except urllib.error.URLError:
        return False


# -- SPARQL clients and formats -------------------------------------------------------------------
def test_rdflib_sparqlstore(url: str) -> None:
    store = SPARQLStore(query_endpoint=url + "/sparql")
    rows = [str(r[0]) for r in store.query(SELECT)]
    assert [r.rsplit("#", 1)[-1] for r in rows] == CLASSES
    assert store.query(f"ASK {{ GRAPH ?g {{ ?m a <{UKO}Method> }} }}").askAnswer is True
    graph = store.query(f"CONSTRUCT {{ ?c a <urn:C> }} WHERE {{ GRAPH ?g {{ ?c a <{UKO}Class> }} }}").graph
    assert len(graph) == 2 and all(o == rdflib.URIRef("urn:C") for o in graph.objects())


@pytest.mark.parametrize(("accept", "media"), [
    (None, "application/sparql-results+json"),
    ("application/sparql-results+json", "application/sparql-results+json"),
    ("application/json", "application/sparql-results+json"),
    ("application/sparql-results+xml", "application/sparql-results+xml"),
    ("text/csv", "text/csv"),
    ("text/tab-separated-values", "text/tab-separated-values"),
    ("text/html,application/xml;q=0.9,*/*;q=0.8", "application/sparql-results+xml"),  # a browser
    ("text/csv;q=0.5, text/tab-separated-values", "text/tab-separated-values"),
    ("image/png, */*;q=0.1", "application/sparql-results+json"),
])
def test_select_formats(url: str, accept: str | None, media: str) -> None:
    status, ctype, body = call(q(url, SELECT), accept=accept)
    assert status == 200 and ctype.split(";")[0] == media
    if media.endswith("json"):
        names = [b["c"]["value"] for b in json.loads(body)["results"]["bindings"]]
    elif media.endswith("xml"):
        names = [str(r["c"].value) for r in ox.parse_query_results(body, ox.QueryResultsFormat.XML)]  # type: ignore[index,union-attr]
    elif media == "text/csv":
        lines = body.splitlines()
        assert lines[0].strip() == "c"
        names = [line.strip() for line in lines[1:]]
    else:
        names = [str(r["c"].value) for r in ox.parse_query_results(body, ox.QueryResultsFormat.TSV)]  # type: ignore[index,union-attr]
    assert [n.rsplit("#", 1)[-1] for n in names] == CLASSES


def test_a_query_counts_tokens(url: str) -> None:
    """A fragment's token count is not stored; the endpoint's queries count a text as the packer does."""
    text = "def parse_header(self, line):\n    return line"
    status, _, body = post_query(url, f'SELECT (fn:tokenCount({json.dumps(text)}) AS ?n) WHERE {{}}')
    assert status == 200 and json.loads(body)["results"]["bindings"][0]["n"]["value"] == str(count(text))
    status, _, body = post_query(url, 'SELECT (<urn:x:nope>("a") AS ?n) WHERE {}')  # the query's fault
    assert status == 400 and "a function acms does not define" in body


def test_post_forms_ask_and_construct(url: str) -> None:
    form = urllib.parse.urlencode({"query": SELECT}).encode()
    status, _, body = call(url + "/sparql", form, "application/x-www-form-urlencoded")
    assert status == 200 and len(json.loads(body)["results"]["bindings"]) == 2
    status, _, body = post_query(url, SELECT, "text/csv")
    assert status == 200 and body.splitlines()[0].strip() == "c" and len(body.splitlines()) == 3
    for accept, check in (("application/sparql-results+json", lambda b: json.loads(b)["boolean"] is True),
                          ("application/sparql-results+xml", lambda b: "<boolean>true</boolean>" in b)):
        status, ctype, body = post_query(url, "ASK { GRAPH ?g { ?c a uko:Method } }", accept)
        assert status == 200 and ctype.startswith(accept) and check(body)
    construct = "CONSTRUCT { ?c a <urn:C> } WHERE { GRAPH ?g { ?c a uko:Class } }"
    status, ctype, body = call(q(url, construct))
    assert status == 200 and ctype.startswith("text/turtle")
    assert len(rdflib.Graph().parse(data=body, format="turtle")) == 2
    status, ctype, body = call(q(url, construct), accept="application/n-triples")
    assert ctype.startswith("application/n-triples") and len(body.strip().splitlines()) == 2
    status, _, body = call(q(url, construct), accept="application/sparql-results+json")
    assert status == 406 and "text/turtle" in body


def test_dataset_parameters(url: str) -> None:
    status, _, body = call(q(url, "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?c a uko:Class } }"))
    graph = json.loads(body)["results"]["bindings"][0]["g"]["value"]
    status, _, body = call(q(url, "SELECT ?c WHERE { ?c a uko:Class } ORDER BY ?c", **{"default-graph-uri": graph}))
    assert status == 200 and len(json.loads(body)["results"]["bindings"]) == 2
    status, _, body = call(q(url, SELECT, **{"default-graph-uri": "not an iri"}))
    assert status == 400 and "default-graph-uri" in body


# -- refusals -------------------------------------------------------------------------------------
def test_hostile_queries_cost_one_error(url: str) -> None:
    status, _, body = call(q(url, "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"))
    assert status == 400 and "SERVICE is refused" in body and "start the server with --allow-service" in body
    assert alive(url)
    status, _, body = post_query(url, "SELECT * WHERE " + "{" * 3000 + "}" * 3000)
    assert status == 400 and "nests 3000 levels" in body
    assert alive(url)
    status, _, body = post_query(url, "SELECT * WHERE { ?s ?p ?o }" + " " * 100_001)
    assert status == 400 and "limit is 100,000" in body
    assert _declared_too_large(url) == 413  # answered from the headers, before the body is read
    status, _, body = call(q(url, "SELECT ?x WHERE { ?x ?y }"))
    assert status == 400 and "syntax error: error at 1:" in body  # positions in the client's text
    assert alive(url)


def _declared_too_large(base: str) -> int:
    conn = http.client.HTTPConnection(urllib.parse.urlsplit(base).netloc, timeout=10)
    try:
        conn.putrequest("POST", "/sparql")
        conn.putheader("Content-Type", "application/x-www-form-urlencoded")
        conn.putheader("Content-Length", str(3_000_000))
        conn.endheaders(b"query=" + b"x" * 1000)
        return conn.getresponse().status
    finally:
        conn.close()


@pytest.mark.parametrize(("args", "want", "needle"), [
    ({"body": b"x=1", "ctype": "application/x-www-form-urlencoded"}, 400, "missing 'query'"),
    ({"body": b"query=a&update=b", "ctype": "application/x-www-form-urlencoded"}, 400, "not both"),
    ({"body": b"SELECT * {}", "ctype": "text/plain"}, 415, "unsupported content type"),
    ({"body": b"query=x&query=y", "ctype": "application/x-www-form-urlencoded"}, 400, "one 'query'"),
    ({"body": b"\xff\xfe", "ctype": "application/sparql-query"}, 400, "UTF-8"),
    ({"method": "PUT", "body": b""}, 405, ""),
])
def test_protocol_errors(url: str, args: dict[str, object], want: int, needle: str) -> None:
    status, _, body = call(url + "/sparql", args.get("body"), args.get("ctype"), method=args.get("method"))  # type: ignore[arg-type]
    assert status == want and needle in body
    status, _, body = call(url + "/sparql?update=" + urllib.parse.quote("CLEAR ALL"))
    assert status == 400 and "POST" in body


def test_updates_refused_by_default(url: str) -> None:
    status, _, body = post_update(url, "INSERT DATA { <urn:a> <urn:b> <urn:c> }")
    assert status == 403 and "--allow-update" in body
    form = urllib.parse.urlencode({"update": "DROP ALL"}).encode()
    assert call(url + "/sparql", form, "application/x-www-form-urlencoded")[0] == 403
    assert json.loads(call(q(url, "ASK { <urn:a> <urn:b> <urn:c> }"))[2])["boolean"] is False


def test_updates_allowed_and_row_cap(searcher: Searcher) -> None:
    running = start(searcher, allow_update=True, max_rows=50)
    try:
        quads = json.loads(call(running.url + "/health")[2])["quads"]
        insert = "INSERT DATA { GRAPH <urn:g> { <urn:a> <urn:b> <urn:c> } }"
        assert post_update(running.url, insert)[0] == 204
        assert json.loads(call(running.url + "/health")[2])["quads"] == quads + 1
        assert json.loads(call(q(running.url, "ASK { GRAPH <urn:g> { <urn:a> <urn:b> <urn:c> } }"))[2])["boolean"]
        status, _, body = post_update(running.url, "LOAD <http://example.org/data.ttl> INTO GRAPH <urn:g>")
        assert status == 400 and "LOAD is refused" in body
        status, _, body = post_update(running.url, "INSERT { GRAPH <urn:g> { ?s ?p ?o } } WHERE { SERVICE <http://example.org/> { ?s ?p ?o } }")
        assert status == 400 and "SERVICE is refused" in body
        assert post_update(running.url, 'INSERT DATA { GRAPH <urn:g> { <urn:a> <urn:b> "LOAD <http://x/>" } }')[0] == 204
        status, _, body = post_update(running.url, "INSERT DATA { <urn:a> }")
        assert status == 400 and "syntax" in body
        status, _, body = call(q(running.url, f"SELECT * WHERE {{ GRAPH {ONTOLOGY} {{ ?s ?p ?o }} }}"))
        assert status == 413 and "more than 50 rows" in body
        status, _, body = call(q(running.url, f"SELECT * WHERE {{ GRAPH {ONTOLOGY} {{ ?s ?p ?o }} }} LIMIT 50"))
        assert status == 200 and len(json.loads(body)["results"]["bindings"]) == 50
        assert post_update(running.url, "DROP GRAPH <urn:g>")[0] == 204
    finally:
        with IndexAccess(searcher.layout.graph, wait=5).write() as store:
            store.update("DROP SILENT GRAPH <urn:g>")
        running.stop()


# -- timeouts -------------------------------------------------------------------------------------
def test_query_over_the_timeout_is_stopped(searcher: Searcher) -> None:
    running = start(searcher, query_timeout_s=0.5, max_rows=100_000_000)
    try:
        for query in (AGGREGATE, STREAMING):
            t = time.monotonic()
            status, ctype, body = call(q(running.url, query))
            assert status == 503 and "0.5 s timeout" in body and "stopped" in body and ctype.startswith("text/plain")
            assert time.monotonic() - t < 3.0  # answered at the deadline, not when the query ends
            assert running.app.state.sparql.running == 0  # its worker process was terminated
        # a fresh worker answers: the one that replaced the killed worker is starting now, and under a
        # heavy load its start-up alone can take more than this server's 0.5 s (then a timeout again)
        deadline = time.monotonic() + 30
        while (status := call(q(running.url, "ASK { ?s ?p ?o }"))[0]) == 503 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert status == 200
    finally:
        running.stop()


def test_worker_stops_pulling_rows_past_the_deadline(searcher: Searcher) -> None:
    op = Operation(Kind.QUERY, STREAMING)
    store = fresh(searcher)
    with pytest.raises(ProtocolError) as err:
        run_query(store, op, "", Limits(timeout_s=0.01, max_rows=10**9), deadline=time.monotonic() + 0.01)
    assert err.value.status == 503 and "timeout" in err.value.message
    with pytest.raises(ProtocolError) as err:
        run_query(store, op, "text/csv", Limits(max_rows=7), deadline=time.monotonic() + 10)
    assert err.value.status == 413 and "more than 7 rows" in err.value.message


def test_negotiation_rules() -> None:
    assert negotiate("", RESULT_FORMATS, "application/sparql-results+json")[0] == "application/sparql-results+json"
    assert negotiate("text/*", RESULT_FORMATS, "application/sparql-results+json")[0] == "text/csv"
    assert negotiate("application/xml;q=0, text/csv;q=0.1", RESULT_FORMATS,
                     "application/sparql-results+json")[0] == "text/csv"
    with pytest.raises(ProtocolError) as err:
        negotiate("image/png", RESULT_FORMATS, "application/sparql-results+json")
    assert err.value.status == 406


# -- the render API -------------------------------------------------------------------------------
def render(url: str, body: bytes) -> tuple[int, dict[str, object]]:
    status, ctype, text = call(url + "/v0/render", body, "application/json")
    assert ctype.startswith("application/json")
    return status, json.loads(text)


def test_render_ok(url: str) -> None:
    status, reply = render(url, json.dumps(REQUEST).encode())
    assert status == 200 and reply["request_id"] == "req-7" and reply["fragments"] and "kv_policy" in reply
    assert reply["metrics"]["used_tokens"] <= 1500  # type: ignore[index]


@pytest.mark.parametrize(("body", "want", "code", "needle"), [
    (b"{not json", 400, "INVALID_REQUEST", "not valid JSON"),
    (json.dumps({**REQUEST, "budgets": {"tokens_max": -1, "time_ms": 5}}).encode(), 400, "INVALID_REQUEST",
     "budgets.tokens_max"),
    (json.dumps({k: v for k, v in REQUEST.items() if k != "intent"}).encode(), 400, "INVALID_REQUEST", "intent"),
    (json.dumps({**REQUEST, "strategy": "nope"}).encode(), 400, "INVALID_REQUEST", "unknown strategy"),
    (json.dumps({**REQUEST, "focus": ["http://x> } ; DROP ALL ; <http://y"]}).encode(), 400, "INVALID_REQUEST",
     "focus[0]: is not a valid IRI"),
    (json.dumps({**REQUEST, "intent": "parse\u0000header"}).encode(), 400, "INVALID_REQUEST",
     "intent: contains a control character"),
    (b'{"version":"v0","id":"6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60","intent":"x\\udcff","request_id":"r",'
     b'"budgets":{"tokens_max":100,"time_ms":100}}', 400, "INVALID_REQUEST", "lone surrogate"),
    (json.dumps({**REQUEST, "strategy": "../../etc/passwd"}).encode(), 400, "INVALID_REQUEST", "strategy"),
    (json.dumps({**REQUEST, "budgets": {"tokens_max": 2, "time_ms": 1000}}).encode(), 422, "BUDGET_TOO_SMALL",
     "too small"),
])
def test_render_errors(url: str, body: bytes, want: int, code: str, needle: str) -> None:
    status, reply = render(url, body)
    err = reply["error"]
    assert (status, err["code"]) == (want, code) and needle in err["message"]  # type: ignore[index]
    assert {"retriable", "attempt", "max_attempts", "options"} <= set(err)  # type: ignore[arg-type]
    if code == "BUDGET_TOO_SMALL":
        assert err["options"][0]["action"] == "retry_with_budget"  # type: ignore[index]


class DeadlineExceeded(AcmsError):
    code = "DEADLINE_EXCEEDED"


@pytest.mark.parametrize(("exc", "want", "code"), [
    (ProviderError("provider down"), 502, "PROVIDER_ERROR"),
    (ProviderTimeout("provider slow"), 504, "PROVIDER_TIMEOUT"),
    (ModelMismatch("other model"), 409, "MODEL_MISMATCH"),
    (StoreLocked("locked"), 503, "STORE_LOCKED"),
    (StoreMissing("missing"), 503, "STORE_MISSING"),
    (DeadlineExceeded("late"), 504, "DEADLINE_EXCEEDED"),
    (RuntimeError("boom"), 500, "INTERNAL"),
])
def test_render_error_statuses(url: str, monkeypatch: pytest.MonkeyPatch, exc: Exception, want: int,
                               code: str) -> None:
    def failing(*args: object, **kwargs: object) -> None:
        raise exc

    monkeypatch.setattr(service_assembly, "assemble", failing)
    if isinstance(exc, RuntimeError):
        monkeypatch.setattr(mapping_module.log, "disabled", True)  # the traceback is expected here
    status, reply = render(url, json.dumps(REQUEST).encode())
    assert (status, reply["error"]["code"], reply["request_id"]) == (want, code, "req-7")  # type: ignore[index]
    if code == "INTERNAL":
        assert "boom" not in reply["error"]["message"]  # type: ignore[index]


def test_every_error_code_has_a_status() -> None:
    assert set(STATUS_BY_CODE) == set(ErrorCode)


def test_health_and_strategies(url: str, searcher: Searcher) -> None:
    status, _, body = call(url + "/health")
    health = json.loads(body)
    assert status == 200 and health["status"] == "ok" and health["quads"] == len(fresh(searcher).raw) > 0
    assert isinstance(health["model"], str)
    status, _, body = call(url + "/v0/strategies")
    assert status == 200 and json.loads(body) == json.loads(json.dumps(StrategyRegistry.default().describe()))


def test_eight_concurrent_clients(url: str) -> None:
    def one(i: int) -> tuple[int, str]:
        if i % 3 == 0:
            status, reply = render(url, json.dumps(REQUEST).encode())
            return status, str(len(reply["fragments"]))  # type: ignore[arg-type]
        if i % 3 == 1:
            status, _, body = call(q(url, SELECT), accept="text/csv")
            return status, body
        return call(url + "/health")[0], ""

    serial = [one(i) for i in range(3)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(one, range(24)))
    assert [s for s, _ in results] == [200] * 24
    assert all(results[i][1] == serial[i % 3][1] for i in range(24))


# -- the command ----------------------------------------------------------------------------------
def acms(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "acms", *args], capture_output=True, text=True, timeout=timeout)


def test_serve_command_errors(searcher: Searcher, tmp_path: Path) -> None:
    root = str(searcher.layout.root.parent)
    out = acms("serve", "-C", str(tmp_path))
    assert out.returncode == 4 and "no index" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    with lock_for(searcher.layout.root).exclusive(command="test writer"):  # this process writes the index
        out = acms("serve", "-C", root, "--port", str(_free_port()), "--wait", "0.3")
    assert out.returncode == 4 and "being written by another acms process" in out.stderr
    assert "test writer" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_serve_command_runs(tmp_path: Path) -> None:
    root = tmp_path / "sample"
    shutil.copytree(FIXTURES / "sample_project", root)
    _index(root, embed=False)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        out = acms("serve", "-C", str(root), "--port", str(busy.getsockname()[1]))
    assert out.returncode == 2 and "already in use" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    with subprocess.Popen([sys.executable, "-m", "acms", "serve", "-C", str(root), "--port", "0",
                           "--query-timeout", "5"], stderr=subprocess.PIPE, text=True) as proc:
        _talk_to(proc)
        assert proc.stderr.read().strip() == "acms: stopped"  # type: ignore[union-attr]


def _talk_to(proc: subprocess.Popen[str]) -> None:
    try:
        line = proc.stderr.readline()  # type: ignore[union-attr]
        assert line.startswith("acms: serving http://127.0.0.1:") and "read-only" in line
        base = line.split()[2]
        deadline = time.monotonic() + 10
        while not alive(base) and time.monotonic() < deadline:
            time.sleep(0.05)
        status, _, body = call(q(base, SELECT), accept="text/csv")
        assert status == 200 and len(body.splitlines()) == 3
        assert post_update(base, "CLEAR ALL")[0] == 403
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0


def test_read_routes_answer_what_the_facade_answers(url: str, searcher: Searcher) -> None:
    """GET /v0/stats, /describe, /neighbourhood, /tiers, /decisions: the façade's results as JSON."""
    index = Index(searcher.layout.root.parent, Settings(), searcher.layout.root, mode="read", wait=5)
    try:
        status, ctype, body = call(url + "/v0/stats")
        stats = json.loads(body)
        assert status == 200 and ctype.startswith("application/json")
        assert stats["classes"]["Class"] == len(CLASSES) and stats["quads"] > 0
        status, _, body = call(url + "/v0/describe?entity=pkg.mod.Parser")
        assert status == 200 and json.loads(body) == json.loads(json.dumps(index.describe("pkg.mod.Parser").as_dict()))
        status, _, body = call(url + "/v0/tiers")
        assert status == 200 and set(json.loads(body)["tiers"]) == {"hot", "warm", "cold"}
        status, _, body = call(url + "/v0/decisions")
        assert status == 200 and json.loads(body) == [d.as_dict() for d in index.plans.decisions()]
    finally:
        index.close()
    status, _, body = call(url + "/v0/neighbourhood?" + urllib.parse.urlencode(
        {"entity": "pkg.mod.Parser", "depth": "1", "format": "nquads"}))
    reply = json.loads(body)
    assert status == 200 and reply["format"] == "nquads"
    parsed = list(ox.parse(reply["text"].encode(), format=ox.RdfFormat.N_QUADS))
    assert any(q.subject.value.endswith("pkg.mod.Parser") for q in parsed if isinstance(q.subject, ox.NamedNode))


def record(url: str, body: object) -> tuple[int, dict[str, object]]:
    status, _, text = call(url + "/v0/decisions", json.dumps(body).encode(), "application/json")
    return status, json.loads(text)


def test_decisions_recorded_over_http_only_with_allow_record(url: str, indexed_sample: Path) -> None:
    """POST /v0/decisions: 403 unless the server was started with allow_record; then 201 with the decision
    as GET /v0/decisions lists it, its plan made once, its secrets scrubbed, found by the next render;
    a bad body is the v0 envelope and writes nothing."""
    status, reply = record(url, {"text": "Parse headers once.", "plan": "p"})
    assert status == 403 and "--allow-record" in reply["error"]["message"]  # type: ignore[index]
    running = start(indexed_sample, allow_record=True)
    try:
        base = running.url
        token = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"
        status, made = record(base, {"text": f"Header names are lowercased once, in normalize. Token {token}",
                                     "plan": "headers", "about": ["pkg.mod.Parser.parse_header"]})
        assert status == 201 and made["id"] == "D-1" and made["plan"] == "headers"
        assert made["about"] == ["pkg.mod.Parser.parse_header"] and made["secrets_replaced"] == {"github_token": 1}
        assert token not in made["text"] and "[REDACTED:github_token]" in made["text"]  # type: ignore[operator]
        _, _, listed = call(base + "/v0/decisions?about=pkg.mod.Parser.parse_header")
        assert json.loads(listed) == [{k: v for k, v in made.items() if k != "secrets_replaced"}]
        status, rendered = render(base, json.dumps({**REQUEST, "intent": "how are header lines parsed"}).encode())
        assert status == 200 and any("lowercased once" in f["text"] for f in rendered["fragments"])  # type: ignore[attr-defined]
        for body, words in [
            (["not", "an", "object"], "JSON object"),
            ({"plan": "headers"}, "missing 'text'"),
            ({"text": "x", "plan": "headers", "about": "pkg.mod.Parser"}, "'about' is a list"),
            ({"text": "x", "plan": "headers", "status": "retired"}, "status must be one of"),
            ({"text": "x", "plan": "other", "colour": "red"}, "unknown field(s): colour"),
            ({"text": "x", "plan": "other", "about": ["no_such_entity_anywhere"]}, "no_such_entity_anywhere"),
        ]:
            status, reply = record(base, body)
            error = reply["error"]
            assert status == 400 and error["code"] == "INVALID_REQUEST" and words in error["message"], reply  # type: ignore[index]
        status, _, text = call(base + "/v0/decisions", b"{not json", "application/json")
        assert status == 400 and "not JSON" in text
        _, _, listed = call(base + "/v0/decisions")
        assert [d["id"] for d in json.loads(listed)] == ["D-1"]  # the refused ones wrote nothing, no plan "other"
    finally:
        running.stop()


@pytest.mark.parametrize(("path", "status", "words"), [
    ("/v0/describe", 400, "missing 'entity'"),
    ("/v0/describe?entity=a&entity=b", 400, "give one 'entity'"),
    ("/v0/neighbourhood?entity=pkg.mod.Parser&depth=9", 400, "depth"),
    ("/v0/neighbourhood?entity=pkg.mod.Parser&format=html", 400, "format"),
    ("/v0/neighbourhood?entity=no_such_thing_anywhere", 400, "no entity matches"),
])
def test_read_routes_refuse_with_the_v0_envelope(url: str, path: str, status: int, words: str) -> None:
    got, _, body = call(url + path)
    error = json.loads(body)["error"]
    assert got == status and error["code"] == "INVALID_REQUEST" and words in error["message"]
