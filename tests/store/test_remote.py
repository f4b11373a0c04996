"""What only the remote store has to prove: projects kept apart, runs that land whole against concurrent
writers and readers, adopting an unscoped index, errors and credentials. Against a real Oxigraph server."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest
import requests
from pyoxigraph import Literal, NamedNode, Quad

from acms.errors import QueryError, StoreError, StoreLocked, StoreMissing
from acms.sparql.functions import ScoreTables, functions
from acms.store.http_client import Endpoints
from acms.store.remote import RemoteStore, RemoteTarget
from acms.vocab import GRAPH_META, TIER_HOT, TIER_WARM, UKO, IriMinter

P = NamedNode("urn:p")


def _open(url: str, project: str, **kwargs: object) -> RemoteStore:
    kwargs.setdefault("read_only", False)
    kwargs.setdefault("create", True)
    return RemoteStore.open(RemoteTarget(Endpoints(url), project), **kwargs)  # type: ignore[arg-type]


def _run(store: RemoteStore, *quads: Quad) -> None:
    with store.atomic():
        store.load(quads)


def test_two_projects_in_one_store_stay_apart(oxigraph_server: str, project_name: str) -> None:
    one, two = _open(oxigraph_server, project_name + "-one"), _open(oxigraph_server, project_name + "-two")
    try:
        _run(one, Quad(NamedNode("urn:one"), P, Literal("1"), TIER_WARM))
        _run(two, Quad(NamedNode("urn:two"), P, Literal("2"), TIER_WARM),
             Quad(NamedNode("urn:two-b"), P, Literal("2b"), TIER_HOT))
        assert one.count() == 1 and two.count() == 2
        # GRAPH ?g ranges over the project's own graphs only
        assert [r["s"].value for r in one.select("SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } }")] == ["urn:one"]
        _run(two, Quad(NamedNode("urn:two-c"), P, Literal("2c"), TIER_WARM))
        two.update("DELETE WHERE { GRAPH ?g { ?s <urn:p> ?o } }")  # touches every graph it can see: its own
        assert one.count() == 1 and two.count() == 0
    finally:
        one.close()
        two.close()


def test_a_run_that_lost_the_race_applies_nothing(oxigraph_server: str, project_name: str) -> None:
    first, second = _open(oxigraph_server, project_name), _open(oxigraph_server, project_name)
    try:
        _run(first, Quad(NamedNode("urn:base"), P, Literal("0"), TIER_WARM))
        second.refresh()
        with pytest.raises(StoreLocked, match="run it again"):
            with first.atomic():
                first.load([Quad(NamedNode("urn:late"), P, Literal("late"), TIER_WARM)])
                second.update("INSERT DATA { GRAPH <https://w3id.org/acms/tier/warm> { <urn:other> <urn:p> 1 } }")
        subjects = {q.subject.value for q in second.quads(TIER_WARM)}
        assert subjects == {"urn:base", "urn:other"}  # nothing of the losing run
    finally:
        first.close()
        second.close()


def test_readers_see_the_last_landed_run_while_a_run_works(oxigraph_server: str, project_name: str) -> None:
    writer = _open(oxigraph_server, project_name)
    try:
        _run(writer, Quad(NamedNode("urn:v1"), P, Literal("1"), TIER_WARM))
        reader = _open(oxigraph_server, project_name, read_only=True, create=False)
        with writer.atomic():
            writer.update("DELETE WHERE { GRAPH <https://w3id.org/acms/tier/warm> { ?s ?p ?o } }")
            writer.load([Quad(NamedNode("urn:v2"), P, Literal("2"), TIER_WARM)])
            assert [q.subject.value for q in reader.quads(TIER_WARM)] == ["urn:v1"]
        assert [q.subject.value for q in reader.quads(TIER_WARM)] == ["urn:v2"]
        assert reader.refresh() == writer.generation
        reader.close()
    finally:
        writer.close()


def test_a_missing_project_is_store_missing(oxigraph_server: str, project_name: str) -> None:
    with pytest.raises(StoreMissing, match="acms index --store"):
        _open(oxigraph_server, project_name, read_only=True, create=False)


def test_an_unscoped_index_is_adopted_in_one_request(oxigraph_server: str, project_name: str) -> None:
    """An index loaded with the shared graph names (as the embedded store keeps them, e.g. from
    `acms export`) moves into the project's own graphs when a writer first opens it."""
    project = IriMinter(project_name).project()
    body = (f"INSERT DATA {{ GRAPH <{TIER_WARM.value}> {{ {project} a <{UKO.Project.value}> . <urn:f> <urn:p> 1 }}"
            f" GRAPH <{GRAPH_META.value}> {{ <urn:run> a <{UKO.IndexRun.value}> }} }}")
    requests.post(f"{oxigraph_server}/update", data={"update": body}, timeout=10).raise_for_status()
    store = _open(oxigraph_server, project_name, create=False)
    try:
        assert store.count(TIER_WARM) == 2 and store.count(GRAPH_META) == 1
        left = requests.post(f"{oxigraph_server}/query", data={"query": f"ASK {{ GRAPH <{TIER_WARM.value}> {{ ?s ?p ?o }} }}"},
                             headers={"Accept": "application/sparql-results+json"}, timeout=10).json()
        assert left["boolean"] is False
    finally:
        store.close()


def test_custom_functions_are_refused_with_a_way_out(oxigraph_server: str, project_name: str) -> None:
    store = _open(oxigraph_server, project_name)
    try:
        with pytest.raises(QueryError, match="VALUES"):
            store.select("SELECT ?s WHERE { VALUES ?f { <urn:f> } BIND(fn:keywordScore(?f) AS ?s) }",
                         None, functions(ScoreTables()))
    finally:
        store.close()


def test_an_unreachable_store_is_one_store_error() -> None:
    with pytest.raises(StoreError, match="cannot reach the SPARQL store at http://127.0.0.1:9"):
        RemoteStore(RemoteTarget(Endpoints("http://127.0.0.1:9", retries=0, timeout=2), "x"))


class _Guarded(http.server.BaseHTTPRequestHandler):
    """A SPARQL endpoint that wants ``Basic dTpw`` (u:p) and answers every query with no rows."""

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.headers.get("Authorization") != "Basic dTpw":
            self.send_response(401)
            self.end_headers()
            return
        body = b'{"head":{"vars":["gen"]},"results":{"bindings":[]}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def guarded() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Guarded)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_credentials_come_from_the_named_environment_variable(guarded: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACMS_TEST_AUTH", raising=False)
    target = RemoteTarget(Endpoints(guarded, auth_env="ACMS_TEST_AUTH", retries=0), "x")
    with pytest.raises(StoreError, match="ACMS_TEST_AUTH"):
        RemoteStore(target)
    monkeypatch.setenv("ACMS_TEST_AUTH", "u:p")
    store = RemoteStore(target)
    assert store.generation is None
    store.close()
