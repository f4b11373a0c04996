"""A user's query is stopped at its time limit and its memory bound, from the CLI, the Python API and a
real ``acms mcp``: a one-line error naming the limit and how to raise it, exit 3, no process left
behind, and the peak memory of every process (PSS of the tree, sampled) under 1 GB. Queries within
their limits answer exactly what an in-process query answers."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyoxigraph as ox
import pytest
from mcp import Client, StdioServerParameters

from acms import Index
from acms.errors import QueryLimitExceeded, QuerySyntaxError
from acms.sparql.results import collect
from acms.store.oxigraph import OxigraphStore
from bench.refresh import Sampler, descendants, pss_kb
from tests.conftest import FIXTURES, copy_of_indexed, run_index
from tests.mcp.test_mcp_server import call, error_of, session

ACMS = str(Path(sys.executable).parent / "acms")
CARTESIAN = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l } ORDER BY ?a"
COUNTING = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"  # slow, flat memory
NAMED_CARTESIAN = ("SELECT * WHERE { GRAPH ?w { ?a ?b ?c } GRAPH ?x { ?d ?e ?f } GRAPH ?y { ?g ?h ?i } "
                   "GRAPH ?z { ?j ?k ?l } } ORDER BY ?a")  # Index.query's default graph is the store's own (empty)
GB_KB = 1024 * 1024


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, _indexed_sample_template: Path) -> Path:
    return copy_of_indexed(_indexed_sample_template, tmp_path_factory.mktemp("limits"))


def _running(root: int, marker: bytes) -> list[int]:
    """The processes under ``root`` whose command line holds ``marker``."""
    out = []
    for p in descendants(root):
        try:
            if p != root and marker in Path(f"/proc/{p}/cmdline").read_bytes():
                out.append(p)
        except OSError:  # ended meanwhile
            pass
    return out


def _children(root: int | None = None) -> list[int]:
    """The bounded queries' processes under ``root`` (this one): others (a forkserver an earlier test
    left, a session's Oxigraph server) are not this file's business."""
    return _running(os.getpid() if root is None else root, b"acms/sparql/child.py")


def _acms(project: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], Sampler, float]:
    return _acms_like([ACMS, *args], project)


def _acms_like(argv: list[str], project: Path) -> tuple[subprocess.CompletedProcess[str], Sampler, float]:
    """The finished process, the peak of its tree (sampled every 20 ms) and its wall time."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with Sampler(proc.pid, period=0.02) as sampler:
        out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), sampler, time.monotonic() - start


def test_cli_stops_the_cartesian_query_by_itself_under_1_gb(project: Path) -> None:
    """The query of the report, at the default bounds: whichever it passes first stops it."""
    done, sampler, took = _acms(project, "sparql", CARTESIAN)
    assert done.returncode == 3, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert re.fullmatch(r"acms: error: the query (ran past its 30 s time limit|passed its 768 MB memory bound) "
                        r"and was stopped \(raise it with acms --set .*\)", line), line
    assert not done.stdout
    assert took < 60, took
    assert 0 < sampler.peak_kb < GB_KB, sampler.peak_mb


def test_cli_stops_a_query_at_its_time_limit(project: Path) -> None:
    done, sampler, took = _acms(project, "--set", "query_timeout=1.5", "sparql", COUNTING)
    assert done.returncode == 3, done.stderr
    assert done.stderr.strip().splitlines() == [
        "acms: error: the query ran past its 1.5 s time limit and was stopped (raise it with acms --set "
        "query_timeout=SECONDS, ACMS_QUERY_TIMEOUT or query_timeout in acms.toml)"]
    assert not done.stdout
    assert took < 15, took  # it ended by itself, at its limit (plus the command's start on a busy machine)
    assert 0 < sampler.peak_kb < GB_KB, sampler.peak_mb


def test_cli_stops_a_query_at_its_memory_bound(project: Path) -> None:
    done, sampler, _ = _acms(project, "--set", "query_memory_mb=320", "--set", "query_timeout=120",
                             "sparql", CARTESIAN)
    assert done.returncode == 3, done.stderr
    assert done.stderr.strip().splitlines() == [
        "acms: error: the query passed its 320 MB memory bound and was stopped (raise it with acms --set "
        "query_memory_mb=MB, ACMS_QUERY_MEMORY_MB or query_memory_mb in acms.toml)"]
    assert 0 < sampler.peak_kb < 600 * 1024, sampler.peak_mb  # the query's process at most 320 MB


def test_cli_answers_within_its_limits_in_every_format(project: Path) -> None:
    done, _, _ = _acms(project, "sparql", "SELECT ?c WHERE { ?c a uko:Class } ORDER BY ?c", "--format", "csv")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "c" and len(done.stdout.splitlines()) == 3
    done, _, _ = _acms(project, "sparql", "ASK { ?s a uko:Function }")
    assert done.stdout.strip() == "true"
    done, _, _ = _acms(project, "sparql", "CONSTRUCT WHERE { ?c a uko:Class }", "--format", "ntriples")
    assert len(done.stdout.splitlines()) == 2 and done.stdout.splitlines()[0].endswith(
        "<https://w3id.org/acms/uko#Class> .")
    done, _, _ = _acms(project, "sparql", "SELECT * WHERE { ?s ?p }")
    assert done.returncode == 3 and done.stderr.startswith("acms: error: SPARQL syntax error: error at 1:")


def test_api_stops_the_query_and_leaves_no_process(project: Path) -> None:
    """The memory counted is what the queries add to this process's tree: this process is the test
    runner, which in a whole suite run in one process already holds what the earlier tests left."""
    own_kb = pss_kb(os.getpid())
    with Index.open(project, mode="read", query_timeout=1.0) as idx:
        with Sampler(os.getpid(), period=0.02) as sampler:
            start = time.monotonic()
            with pytest.raises(QueryLimitExceeded) as caught:
                idx.sparql(COUNTING)
            took = time.monotonic() - start
            with pytest.raises(QueryLimitExceeded):
                idx.query(NAMED_CARTESIAN)
        assert caught.value.limit == "time" and caught.value.exit_code == 3
        assert "1 s time limit" in caught.value.message and "query_timeout" in caught.value.message
        assert took < 10, took
        assert sampler.peak_kb - own_kb < GB_KB, (sampler.peak_mb, own_kb / 1024)
        assert not _children()  # the child was killed and reaped, not abandoned
        assert idx.sparql("ASK { ?s ?p ?o }").boolean  # the index answers the next query


def test_api_in_its_own_process_ends_the_cartesian_query_under_1_gb(project: Path) -> None:
    """The query of the report through the Python API at the default bounds, in a program of its own: the
    program and its query's process together stay under 1 GB."""
    program = ("import sys\nfrom acms import Index\nfrom acms.errors import QueryLimitExceeded\n"
               "with Index.open(sys.argv[1], mode='read') as idx:\n"
               "    try:\n        idx.sparql(sys.argv[2])\n"
               "    except QueryLimitExceeded as exc:\n        print(exc.limit, exc.message)\n")
    done, sampler, took = _acms_like([sys.executable, "-c", program, str(project), CARTESIAN], project)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"(time|memory) the query (ran past its 30 s time limit|passed its 768 MB memory bound) "
                        r"and was stopped \(raise it with .*\)\n", done.stdout), done.stdout
    assert took < 60 and 0 < sampler.peak_kb < GB_KB, (took, sampler.peak_mb)


def test_api_memory_bound(project: Path) -> None:
    with Index.open(project, mode="read", query_memory_mb=320, query_timeout=120) as idx:
        with pytest.raises(QueryLimitExceeded) as caught:
            idx.sparql(CARTESIAN)
    assert caught.value.limit == "memory" and "320 MB memory bound" in caught.value.message
    assert not _children()


QUERIES = [
    "SELECT ?f ?n WHERE { ?f a uko:Function ; uko:name ?n } ORDER BY ?f",
    "SELECT ?s ?o WHERE { ?s uko:contains ?o } ORDER BY ?s ?o",
    'SELECT ?x WHERE { VALUES ?x { "tab\\there" "line\\nbreak" "q\\"uote"@en 3 2.5 true } }',
    "SELECT ?a ?b WHERE { OPTIONAL { ?a a uko:Nothing } BIND(1 AS ?b) }",
    "ASK { ?s a uko:Class }",
    "ASK { ?s a uko:Nothing }",
    "CONSTRUCT WHERE { ?c a uko:Class ; uko:name ?n }",
    "SELECT (fn:tokenCount(\"hello world\") AS ?n) WHERE {}",
]


@pytest.mark.parametrize("max_rows", [1000, 2])
def test_bounded_answers_equal_in_process_answers(project: Path, max_rows: int) -> None:
    with Index.open(project, mode="read") as idx:
        bounded = [idx.sparql(q, max_rows=max_rows) for q in QUERIES]
    store = OxigraphStore.open_existing(project / ".acms" / "graph", read_only=True)
    try:
        from acms.sparql.dataset import DefaultGraph, dataset_arguments

        direct = [collect(store.query_raw(q, **dataset_arguments(q, DefaultGraph.CURRENT)), max_rows) for q in QUERIES]
    finally:
        store.close()
    for query, got, want in zip(QUERIES, bounded, direct):
        if want.form == "graph":  # a graph has no order: compare as sets
            assert (got.truncated, sorted(got.triples)) == (want.truncated, sorted(want.triples)), query
        else:
            assert got == want, query
    assert any(r.truncated for r in bounded) == (max_rows == 2)


def test_rows_of_index_query_are_terms(project: Path) -> None:
    with Index.open(project, mode="read") as idx:
        rows = idx.query("SELECT ?x WHERE { VALUES ?x { <urn:a> \"b\"@en 3 } }")
        with pytest.raises(QuerySyntaxError):
            idx.query("SELECT * WHERE { ?s ?p }")
    assert [r["x"] for r in rows] == [ox.NamedNode("urn:a"), ox.Literal("b", language="en"),
                                      ox.Literal("3", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer"))]


def test_a_writer_session_queries_what_it_wrote(tmp_path: Path) -> None:
    """The default ``Index.open`` holds the index read-write: the query's process still sees its writes."""
    root = tmp_path / "sample"
    shutil.copytree(FIXTURES / "sample_project", root)
    run_index(root)
    with Index.open(root) as idx:
        with idx.writing() as store:
            store.update("INSERT DATA { GRAPH <https://w3id.org/acms/tier/warm> { <urn:new> a <urn:Thing> } }")
        assert idx.sparql("ASK { <urn:new> a <urn:Thing> }").boolean


def test_mcp_sparql_tool_stops_the_query_and_keeps_serving(project: Path) -> None:
    params = StdioServerParameters(command=ACMS, args=["--set", "query_timeout=1.5", "mcp", "--no-watch"],
                                   cwd=str(project))
    peaks: list[float] = []

    async def body(client: Client) -> None:
        server = max(_running(os.getpid(), b"\0mcp\0"))  # the acms mcp process the client started
        with Sampler(server, period=0.02) as sampler:
            message = await error_of(client, "sparql", query=COUNTING)
        peaks.append(sampler.peak_kb)
        assert message.startswith("QUERY_ERROR: the query ran past its 1.5 s time limit and was stopped"), message
        assert "\n" not in message.strip()
        assert _children(server) == []  # its query's process is gone
        assert json.loads(await call(client, "sparql", query="ASK { ?s ?p ?o }"))["boolean"]
        with Sampler(server, period=0.02) as sampler:  # the query of the report, at the default memory bound
            message = await error_of(client, "sparql", query=CARTESIAN)
        peaks.append(sampler.peak_kb)
        assert re.match(r"QUERY_ERROR: the query (ran past its 1.5 s time limit|passed its 768 MB memory bound) "
                        r"and was stopped", message), message

    session(params, body)
    assert len(peaks) == 2 and all(0 < p < GB_KB for p in peaks), peaks


def test_the_endpoint_stops_a_query_at_its_memory_bound(project: Path) -> None:
    """``acms serve`` had a time limit; its workers now have the memory bound too (a fresh one follows)."""
    from tests.server.test_server import alive, call, q

    with subprocess.Popen([ACMS, "--set", "query_memory_mb=400", "--set", "refresh=off", "serve", "-C", str(project),
                           "--port", "0", "--query-timeout", "120", "--no-watch"], stderr=subprocess.PIPE,
                          text=True) as proc:
        try:
            line = proc.stderr.readline()  # type: ignore[union-attr]
            assert line.startswith("acms: serving http://127.0.0.1:"), line
            base = line.split()[2]
            deadline = time.monotonic() + 20
            while not alive(base) and time.monotonic() < deadline:
                time.sleep(0.05)
            with Sampler(proc.pid, period=0.02) as sampler:
                start = time.monotonic()
                status, _, body = call(q(base, CARTESIAN))
                took = time.monotonic() - start
            assert status == 400, body
            assert body.strip() == ("the query passed its 400 MB memory bound and was stopped (raise it with acms "
                                    "--set query_memory_mb=MB, ACMS_QUERY_MEMORY_MB or query_memory_mb in acms.toml)")
            assert took < 60 and sampler.peak_kb < GB_KB, (took, sampler.peak_mb)
            assert call(q(base, "ASK { ?s ?p ?o }"))[0] == 200  # a fresh worker answers
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def test_a_child_started_ahead_answers_the_next_query_or_is_discarded(project: Path) -> None:
    from acms.sparql import runner

    runner.prestart()
    (spare,) = runner._SPARES
    runner.prestart()  # one waiting is enough
    assert runner._SPARES == [spare] and spare.poll() is None
    with Index.open(project, mode="read") as idx:
        assert idx.sparql("ASK { ?s ?p ?o }").boolean
    assert runner._SPARES == [] and spare.poll() == 0  # it ran that query and ended
    runner.prestart()
    (unused,) = runner._SPARES
    runner._discard_spares()  # what exit does
    assert runner._SPARES == [] and unused.poll() is not None
    assert not _children()
