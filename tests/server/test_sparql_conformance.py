"""SPARQL as RDF users expect it, against a real server on 127.0.0.1: the default graph, DESCRIBE, the
service description, the Graph Store Protocol, JSON-LD, --allow-service; SPARQLWrapper and rdflib's
SPARQLStore as the clients; and a real ``acms serve`` whose timed-out query stops using CPU."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
import rdflib
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import JSON, JSONLD, SPARQLWrapper, TURTLE

from acms.retrieval.search import Searcher

from .test_server import ONTOLOGY, UKO, Running, alive, call, q, searcher, start  # noqa: F401 - fixture

SD = "http://www.w3.org/ns/sparql-service-description#"
META = "https://w3id.org/acms/graph/meta"


@pytest.fixture(scope="module")
def served(searcher: Searcher) -> Iterator[Running]:  # noqa: F811 - the imported fixture
    running = start(searcher, query_timeout_s=10.0, allow_update=True)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def url(served: Running) -> str:
    return served.url


def _entity(url: str) -> str:
    status, _, body = call(q(url, "SELECT ?c WHERE { ?c a uko:Class } ORDER BY ?c LIMIT 1"))
    assert status == 200
    return str(json.loads(body)["results"]["bindings"][0]["c"]["value"])


def test_default_graph_is_the_current_project(url: str) -> None:
    status, _, body = call(q(url, "SELECT * WHERE { ?s ?p ?o } LIMIT 1"))
    assert status == 200 and len(json.loads(body)["results"]["bindings"]) == 1

    def count(text: str, **params: str) -> int:
        status, _, body = call(q(url, text, **params))
        assert status == 200, body
        return int(json.loads(body)["results"]["bindings"][0]["n"]["value"])

    everything = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    current, union = count(everything), count(everything, **{"union-default-graph": "true"})
    ontology = count(f"SELECT (COUNT(*) AS ?n) FROM {ONTOLOGY} WHERE {{ ?s ?p ?o }}")
    assert 0 < current and 0 < ontology and union >= current + ontology  # FROM wins over the default
    assert count(everything, **{"default-graph-uri": ONTOLOGY[1:-1]}) == ontology
    # GRAPH ?g still ranges over every named graph
    assert count("SELECT (COUNT(DISTINCT ?g) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }") >= 3


def test_describe_returns_the_triples_of_an_entity(url: str) -> None:
    entity = _entity(url)
    status, ctype, body = call(q(url, f"DESCRIBE <{entity}>"))
    assert status == 200 and ctype.startswith("text/turtle")
    graph = rdflib.Graph().parse(data=body, format="turtle")
    assert (rdflib.URIRef(entity), rdflib.RDF.type, rdflib.URIRef(UKO + "Class")) in graph
    status, ctype, body = call(q(url, f"DESCRIBE <{entity}>"), accept="application/ld+json")
    assert status == 200 and ctype.startswith("application/ld+json")
    assert json.loads(body)[0]["@id"] == entity


@pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning")  # SPARQLWrapper's JSON-LD
def test_sparqlwrapper_select_construct_jsonld(url: str) -> None:
    client = SPARQLWrapper(url + "/sparql")
    client.setQuery("PREFIX uko: <https://w3id.org/acms/uko#> SELECT ?c WHERE { ?c a uko:Class } ORDER BY ?c")
    client.setReturnFormat(JSON)
    rows = client.queryAndConvert()["results"]["bindings"]  # type: ignore[index]
    assert [r["c"]["value"].rsplit("#", 1)[-1] for r in rows] == ["pkg.mod.Base", "pkg.mod.Parser"]
    client.setQuery("PREFIX uko: <https://w3id.org/acms/uko#> CONSTRUCT { ?c a uko:Class } WHERE { ?c a uko:Class }")
    client.setReturnFormat(JSONLD)
    graph = client.queryAndConvert()
    assert isinstance(graph, rdflib.Graph) and len(graph) == 2
    client.setReturnFormat(TURTLE)
    assert b"pkg.mod.Parser" in client.queryAndConvert()  # type: ignore[operator]


def test_rdflib_sparqlstore_sees_the_project(url: str) -> None:
    store = SPARQLStore(query_endpoint=url + "/sparql")
    graph = rdflib.Graph(store=store)
    assert len(graph) > 100  # the default graph is no longer empty
    classes = set(graph.subjects(rdflib.RDF.type, rdflib.URIRef(UKO + "Class")))
    assert len(classes) == 2


def test_service_description(url: str) -> None:
    status, ctype, body = call(url + "/sparql")
    assert status == 200 and ctype.startswith("text/turtle")
    graph = rdflib.Graph().parse(data=body, format="turtle")
    service = graph.value(predicate=rdflib.RDF.type, object=rdflib.URIRef(SD + "Service"))
    assert graph.value(service, rdflib.URIRef(SD + "endpoint")) == rdflib.URIRef(url + "/sparql")
    languages = set(graph.objects(service, rdflib.URIRef(SD + "supportedLanguage")))
    assert languages == {rdflib.URIRef(SD + "SPARQL11Query"), rdflib.URIRef(SD + "SPARQL11Update")}
    names = {str(n) for n in graph.objects(None, rdflib.URIRef(SD + "name"))}
    assert {META, ONTOLOGY[1:-1], "https://w3id.org/acms/tier/warm"} <= names
    status, ctype, body = call(url + "/sparql", accept="application/ld+json")
    assert status == 200 and ctype.startswith("application/ld+json") and SD + "Service" in body


def test_graph_store_read(url: str) -> None:
    status, ctype, body = call(url + "/store?graph=" + urllib.parse.quote(META))
    assert status == 200 and ctype.startswith("text/turtle") and len(rdflib.Graph().parse(data=body, format="turtle"))
    status, ctype, body = call(url + "/store?default", accept="application/n-triples")
    current = json.loads(call(q(url, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"))[2])
    assert status == 200 and len(body.strip().splitlines()) == int(current["results"]["bindings"][0]["n"]["value"])
    assert call(url + "/store?graph=urn:nothing")[0] == 404
    status, _, body = call(url + "/store")
    assert status == 400 and "?graph=IRI or ?default" in body
    assert call(url + "/store?graph=" + urllib.parse.quote(META), method="HEAD")[0] == 200


def test_graph_store_write(url: str, searcher: Searcher) -> None:  # noqa: F811
    target = url + "/store?graph=" + urllib.parse.quote("urn:acms-test:g")
    turtle = b"<urn:a> <urn:b> <urn:c> , <urn:d> ."
    assert call(target, turtle, "text/turtle", method="PUT")[0] == 201
    assert call(target, b"<urn:a> <urn:b> <urn:e> .", "application/n-triples", method="POST")[0] == 204
    assert len(call(target, accept="application/n-triples")[2].strip().splitlines()) == 3
    assert call(target, b"<urn:x> <urn:y> <urn:z> .", "text/turtle", method="PUT")[0] == 204  # replaced
    assert call(target, accept="application/n-triples")[2].strip() == "<urn:x> <urn:y> <urn:z> ."
    status, _, body = call(target, b"<urn:x> <urn:y> .", "text/turtle", method="PUT")
    assert status == 400 and "not valid" in body
    assert call(target, b"{}", "image/png", method="PUT")[0] == 415
    assert call(url + "/store?default", turtle, "text/turtle", method="PUT")[0] == 405
    assert call(target, method="DELETE")[0] == 204
    assert call(target)[0] == 404 and call(target, method="DELETE")[0] == 404


def test_graph_store_writes_refused_without_allow_update(searcher: Searcher) -> None:  # noqa: F811
    running = start(searcher)
    try:
        target = running.url + "/store?graph=urn:acms-test:h"
        status, _, body = call(target, b"<urn:a> <urn:b> <urn:c> .", "text/turtle", method="PUT")
        assert status == 403 and "--allow-update" in body
        status, _, body = call(running.url + "/sparql")
        assert "SPARQL11Update" not in body
    finally:
        running.stop()


def test_syntax_error_positions_are_the_clients(url: str) -> None:
    status, _, body = call(q(url, "SELECT ?x WHERE { ?x uko:name }"))
    assert status == 400 and "error at 1:" in body


# -- a real `acms serve` --------------------------------------------------------------------------
def _cpu_seconds(pid: int) -> float:
    """CPU time of a process and all its descendants, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except (OSError, IndexError):
            continue
        todo.extend(int(c) for c in children)
    return total


def test_real_serve_clients_timeout_and_allow_service(searcher: Searcher) -> None:  # noqa: F811
    root = searcher.layout.root.parent
    heavy = (f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH {ONTOLOGY} {{ ?a ?b ?c . ?d ?e ?f . ?h ?i ?j }} "
             "FILTER(STR(?c) != STR(?j)) }")  # minutes of one native call (150 s here)
    with subprocess.Popen([sys.executable, "-m", "acms", "serve", "-C", str(root), "--port", "0",
                           "--query-timeout", "1", "--allow-service"], stderr=subprocess.PIPE, text=True) as proc:
        try:
            base = proc.stderr.readline().split()[2]  # type: ignore[union-attr]
            deadline = time.monotonic() + 20
            while not alive(base) and time.monotonic() < deadline:
                time.sleep(0.1)
            # the clients against the real command
            client = SPARQLWrapper(base + "/sparql")
            client.setQuery("SELECT * WHERE { ?s ?p ?o } LIMIT 3")
            client.setReturnFormat(JSON)
            assert len(client.queryAndConvert()["results"]["bindings"]) == 3  # type: ignore[index]
            assert len(rdflib.Graph(store=SPARQLStore(query_endpoint=base + "/sparql"))) > 100
            status, _, body = call(q(base, heavy))
            assert status == 503 and "1 s timeout" in body
            answered = time.monotonic()
            time.sleep(max(0.0, answered + 2.0 - time.monotonic()))  # idle within 2 s of the deadline...
            before = _cpu_seconds(proc.pid)
            time.sleep(1.0)
            assert _cpu_seconds(proc.pid) - before < 0.2  # ...: no process of the server burns CPU
            # --allow-service lets SERVICE through the guard (the unreachable endpoint is then an error)
            status, _, body = call(q(base, "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }"))
            assert "SERVICE is refused" not in body
        finally:
            t = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(10) == 0 and time.monotonic() - t < 5  # prompt shutdown


def test_stopping_with_a_query_in_flight_answers_it_and_exits_promptly(searcher: Searcher) -> None:  # noqa: F811
    """SIGTERM while a long query runs: the client gets a 503 naming the shutdown (not a 500 and a
    traceback on stderr), the server exits within seconds and its worker processes with it."""
    import threading

    root = searcher.layout.root.parent
    heavy = f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH {ONTOLOGY} {{ ?a ?b ?c . ?d ?e ?f . ?h ?i ?j }} }}"
    with subprocess.Popen([sys.executable, "-m", "acms", "serve", "-C", str(root), "--port", "0",
                           "--query-timeout", "120"], stderr=subprocess.PIPE, text=True) as proc:
        base = proc.stderr.readline().split()[2]  # type: ignore[union-attr]
        deadline = time.monotonic() + 20
        while not alive(base) and time.monotonic() < deadline:
            time.sleep(0.1)
        answer: list[tuple[int, str, str]] = []
        client = threading.Thread(target=lambda: answer.append(call(q(base, heavy))))
        client.start()
        time.sleep(1.5)  # the query is running in a worker
        workers = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        t = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0 and time.monotonic() - t < 5
        client.join(10)
        stderr = proc.stderr.read()  # type: ignore[union-attr]
    assert answer and answer[0][0] == 503 and "shutting down" in answer[0][2]
    assert "Traceback" not in stderr, stderr
    left = workers
    deadline = time.monotonic() + 5
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = [pid for pid in left if Path(f"/proc/{pid}").exists()
                and Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"]
    assert not left, [Path(f"/proc/{pid}/cmdline").read_text() for pid in left]
