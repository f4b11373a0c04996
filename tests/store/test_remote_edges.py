"""A shared remote store at its edges, with a real Oxigraph server and real acms processes: a second
project root whose folder has the same name is refused (naming the root that owns the graphs) unless
``acms index --force``; ``https://`` to a plain-HTTP server fails at once and says so; retries and
timeouts are reported as what they were; a user's query waits for at most its time limit."""

from __future__ import annotations

import http.server
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from acms import Index
from acms.errors import QueryLimitExceeded, StoreError
from acms.sparql.runner import QueryLimits
from acms.store.http_client import Endpoints, SparqlClient
from acms.vocab import TIER_WARM
from tests.conftest import FIXTURES

ACMS = str(Path(sys.executable).parent / "acms")
HOST = socket.gethostname()


def _acms(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ACMS, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture
def twins(tmp_path: Path, project_name: str) -> tuple[Path, Path]:
    """Two different projects in folders with the same name (the project's name in the store)."""
    first, second = tmp_path / "alice" / project_name, tmp_path / "bob" / project_name
    shutil.copytree(FIXTURES / "sample_project", first)
    shutil.copytree(FIXTURES / "polyglot_project", second)
    return first, second


def test_a_second_root_with_the_same_name_is_refused_unless_forced(oxigraph_server: str,
                                                                   twins: tuple[Path, Path]) -> None:
    first, second = twins
    done = _acms("index", ".", "--store", oxigraph_server, cwd=first)
    assert done.returncode == 0, done.stderr
    with Index.open(first, store=oxigraph_server, mode="read") as idx:
        before = idx.store.count(TIER_WARM)
        assert idx.search("parse header", k=1).hits[0].path == "pkg/mod.py"

    refused = _acms("index", ".", "--store", oxigraph_server, cwd=second)
    assert refused.returncode == 4, refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert f"belongs to another project root, {HOST}:{first.resolve()} (this one is {HOST}:{second.resolve()})" in line
    assert "nothing was written" in line and "project_name" in line and "acms index --force" in line
    with Index.open(first, store=oxigraph_server, mode="read") as idx:  # the first project's graphs are intact
        assert idx.store.count(TIER_WARM) == before
        assert idx.search("parse header", k=1).hits[0].path == "pkg/mod.py"

    assert _acms("index", ".", "--store", oxigraph_server, cwd=first).returncode == 0  # its own root: fine

    forced = _acms("index", ".", "--store", oxigraph_server, "--force", cwd=second)
    assert forced.returncode == 0, forced.stderr
    with Index.open(second, store=oxigraph_server, mode="read") as idx:
        assert idx.store.count(TIER_WARM) != before
    with pytest.raises(StoreError, match=f"belongs to another project root, {HOST}:{second.resolve()}"):
        with Index.open(first, store=oxigraph_server) as idx:  # now the first one is the other root
            idx.index()


@pytest.fixture
def plain_http() -> Iterator[int]:
    """A real plain-HTTP server (the standard library's) on 127.0.0.1: it answers a TLS ClientHello at once
    with an HTTP 400, where the Oxigraph server waits for more bytes."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()


def _https(url: str) -> str:
    return url.replace("http://", "https://")


def test_https_to_a_plain_http_server_fails_at_once(oxigraph_server: str, plain_http: int, tmp_path: Path) -> None:
    project = tmp_path / "sample"
    shutil.copytree(FIXTURES / "sample_project", project)
    for url in (_https(oxigraph_server), f"https://127.0.0.1:{plain_http}"):
        start = time.monotonic()
        done = _acms("index", ".", "--store", url, cwd=project)
        took = time.monotonic() - start
        assert done.returncode == 4, done.stderr
        (line,) = done.stderr.strip().splitlines()
        plain = url.replace("https://", "http://")
        assert "it speaks plain HTTP, not TLS; use " + plain + " as the store" in line, line
        assert took < 10, took  # was 60 s x 4 tries; the command's own start is most of this
        start = time.monotonic()
        with pytest.raises(StoreError, match="speaks plain HTTP, not TLS"):
            Index.open(project, store=url, mode="read")
        assert time.monotonic() - start < 3


@pytest.fixture
def silent() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(sock.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(sock.getsockname()[1])
    stop.set()
    thread.join()
    for c in held:
        c.close()
    sock.close()


def test_timeouts_and_retries_are_reported_as_they_were(silent: int) -> None:
    client = SparqlClient(Endpoints(f"http://127.0.0.1:{silent}", timeout=0.3, retries=2))
    start = time.monotonic()
    with pytest.raises(StoreError) as caught:
        client.query("ASK {}", "application/sparql-results+json")
    took = time.monotonic() - start
    message = caught.value.message
    assert message.startswith(f"the SPARQL store at http://127.0.0.1:{silent} did not answer within 0.3 s "
                              "(setting store_timeout) (3 tries over "), message
    over = float(message.split("tries over ")[1].split(" s")[0])
    assert abs(over - took) < 0.5 and over >= 3 * 0.3  # three waits of 0.3 s and the back-off between them

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: refused
    refused = SparqlClient(Endpoints(f"http://127.0.0.1:{port}", timeout=5, retries=1))
    with pytest.raises(StoreError, match=r"connection refused \(2 tries over \d+\.\d s; setting store_retries\)"):
        refused.query("ASK {}", "application/sparql-results+json")
    once = SparqlClient(Endpoints(f"http://127.0.0.1:{silent}", timeout=0.3, retries=0))
    with pytest.raises(StoreError) as caught:
        once.query("ASK {}", "application/sparql-results+json")
    assert "tries" not in caught.value.message  # one try is just the timeout


def test_a_users_remote_query_waits_for_its_time_limit_only(silent: int) -> None:
    client = SparqlClient(Endpoints(f"http://127.0.0.1:{silent}", timeout=60, retries=3))
    start = time.monotonic()
    with pytest.raises(QueryLimitExceeded, match="ran past its 0.5 s time limit"):
        client.query("SELECT * WHERE { ?s ?p ?o }", "application/sparql-results+json",
                     limits=QueryLimits(timeout_s=0.5))
    assert time.monotonic() - start < 2  # one try, not four of 60 s


def test_a_users_remote_query_reads_no_more_than_its_memory_bound(oxigraph_server: str, sample_project: Path,
                                                                   project_name: str) -> None:
    with Index.open(sample_project, store=oxigraph_server, project_name=project_name) as idx:
        idx.index()
    product = "SELECT * WHERE { GRAPH ?g { ?a ?b ?c } GRAPH ?h { ?d ?e ?f } }"  # ~1M rows, hundreds of MB of JSON
    with Index.open(sample_project, store=oxigraph_server, project_name=project_name, mode="read",
                    query_memory_mb=64, refresh="off") as idx:
        start = time.monotonic()
        with pytest.raises(QueryLimitExceeded) as caught:
            idx.sparql(product)
        assert caught.value.limit == "memory" and "64 MB memory bound" in caught.value.message
        assert time.monotonic() - start < 30
        assert idx.sparql("ASK { GRAPH ?g { ?s a uko:Class } }").boolean  # the store answers the next one


def _git_with_origin(root: Path, origin: str) -> None:
    for args in (["init", "-q"], ["remote", "add", "origin", origin]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_two_clones_of_one_repository_are_one_project(oxigraph_server: str, twins: tuple[Path, Path]) -> None:
    """Every machine may index its clone of one project into the store; two repositories may not share
    a name, nor two folders of one repository."""
    first, second = twins
    shutil.rmtree(second)
    shutil.copytree(first, second)
    _git_with_origin(first, "https://alice:s3cr3t-token@git.example.org/team/app.git")
    _git_with_origin(second, "https://git.example.org/team/app")
    for root in (first, second, first):
        done = _acms("index", ".", "--store", oxigraph_server, cwd=root)
        assert done.returncode == 0, done.stderr
    control = requests.post(f"{oxigraph_server}/query", timeout=30, headers={"Accept": "text/csv"}, data={
        "query": "SELECT ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } FILTER(CONTAINS(STR(?g), '/%s/graph/control')) }"
                 % first.name}).text
    assert "git https://git.example.org/team/app /" in control and "s3cr3t" not in control, control

    other = first.parent.parent / "carol" / first.name
    shutil.copytree(first, other, ignore=shutil.ignore_patterns(".git", ".acms"))
    _git_with_origin(other, "https://git.example.org/team/another-app.git")
    refused = _acms("index", ".", "--store", oxigraph_server, cwd=other)
    assert refused.returncode == 4 and "belongs to another project root" in refused.stderr, refused.stderr


def test_a_projects_identity_names_its_origin_without_credentials(tmp_path: Path) -> None:
    from acms.api import project_identity

    root = tmp_path / "repo"
    (root / "services" / "app").mkdir(parents=True)
    assert project_identity(root) == f"path {root.resolve()}"  # outside git: the folder, whatever the host
    _git_with_origin(root, "https://bob:ghp_notarealtoken@git.example.org:8443/team/mono.git/")
    assert project_identity(root) == "git https://git.example.org:8443/team/mono /"
    assert project_identity(root / "services" / "app") == "git https://git.example.org:8443/team/mono /services/app"
