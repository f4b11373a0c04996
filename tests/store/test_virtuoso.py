"""The default pipeline's SPARQL answers on Virtuoso Open Source 7 as on the embedded store.

The default strategy (``arce``) takes every input as ``VALUES`` and calls no custom function, so its
queries are meant to run on any SPARQL 1.1 engine. This proves it on a second engine besides the
Oxigraph server: the sample project is indexed into the embedded store, every query the pipeline sends
during a few real assemblies (a plain task, a focus, a stack trace, a quoted error message) is recorded
with its bindings and embedded answer, and the project is bulk-loaded into a real Virtuoso server twice:
under the project's graph names (as an acms writer leaves it) and as ``acms export`` writes it. Each
recorded query is replayed through acms's own remote-store path (:class:`acms.store.remote.RemoteStore`,
the one ``--store http://…`` uses) and over the plain protocol against the export; the rows must agree
(as multisets, numbers compared as floats; see ``_value`` for what Virtuoso writes differently), an
ordered query's order must agree, and the assemblies with every SELECT answered by Virtuoso must pack
the same context.

One Virtuoso per module (its own database folder, ``virtuoso.ini`` and free ports). Skipped with the
reason when ``virtuoso-t`` is not installed, except under ``CI=true``, where ``.ci/run`` installs it and
the test must run unless the install failed (``.ci/run`` says so in ``ACMS_VIRTUOSO_MISSING``).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest
import requests

from acms import Index
from acms.sparql.bind import bind
from acms.store.http_client import Endpoints
from acms.store.protocol import Bindings, Row
from acms.store.remote import RemoteStore, RemoteTarget
from acms.store.scope import LOGICAL_GRAPHS, GraphScope
from acms.strategies.registry import StrategyRegistry
from acms.vocab import PREFIXES, UKO

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sample_project"
TRACE = 'Traceback (most recent call last):\n  File "app/pkg/mod.py", line 22, in parse_header\nValueError: bad'
TASKS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("parse header", {}),
    ("normalize a string", {}),
    ("parse header", {"focus": ["pkg/mod.py::Parser.parse_header"]}),
    (TRACE, {}),
    ("header parsing fails\nValueError: Split one header line into name and value", {}),
)
_GENERATION = ox.NamedNode("https://w3id.org/acms/store#generation")
# The default pipeline's queries (queries/strategies/arce/*.rq): each must be among those replayed.
PHASES = {f"# name: {p}" for p in ("ranked", "expand-out", "expand-in", "expand-in-counts", "anchor-lines", "fragment-texts",
                                   "entity-heads", "method-classes", "subclass-counts", "name-counts", "overrides-up", "overrides-down",
                                   "qualified-names", "defined-names", "entity-places", "decisions-current",
                                   "decision-reach")}
_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"
_NUMERIC = {f"http://www.w3.org/2001/XMLSchema#{t}" for t in
            ("integer", "int", "long", "short", "decimal", "double", "float", "nonNegativeInteger")}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _binaries() -> tuple[str, str]:
    server, isql = shutil.which("virtuoso-t"), shutil.which("isql-vt")
    if server and isql:
        return server, isql
    missing = os.environ.get("ACMS_VIRTUOSO_MISSING")
    if os.environ.get("CI") == "true" and not missing:
        pytest.fail("virtuoso-t / isql-vt are missing under CI=true: .ci/run installs virtuoso-opensource")
    pytest.skip(missing or "Virtuoso is not installed (apt-get install virtuoso-opensource gives virtuoso-t and isql-vt)")


@dataclass(frozen=True)
class Virtuoso:
    """A running server: its HTTP base URL, its SQL port (for isql) and its folder (a loader may read it)."""

    url: str
    sql_port: int
    folder: Path
    isql: str

    def sql(self, statements: str) -> str:
        """Run SQL through isql as dba (the default password of a fresh database)."""
        done = subprocess.run([self.isql, f"127.0.0.1:{self.sql_port}", "dba", "dba", f"exec={statements}"],
                              check=False, capture_output=True, text=True, timeout=120)
        if done.returncode != 0 or "*** Error" in done.stdout:
            raise AssertionError(f"isql failed: {done.stdout[-2000:]}{done.stderr[-2000:]}")
        return done.stdout


_INI = """[Database]
DatabaseFile = {d}/virtuoso.db
ErrorLogFile = {d}/virtuoso.log
LockFile = {d}/virtuoso.lck
TransactionFile = {d}/virtuoso.trx
xa_persistent_file = {d}/virtuoso.pxa
[TempDatabase]
DatabaseFile = {d}/virtuoso-temp.db
TransactionFile = {d}/virtuoso-temp.trx
[Parameters]
ServerPort = 127.0.0.1:{sql}
DisableUnixSocket = 1
DirsAllowed = ., {d}
NumberOfBuffers = 10000
MaxDirtyBuffers = 6000
CheckpointInterval = 0
ThreadsPerQuery = 1
[HTTPServer]
ServerPort = 127.0.0.1:{http}
ServerThreads = 4
Charset = UTF-8
[SPARQL]
ResultSetMaxRows = 1000000
MaxQueryExecutionTime = 60
"""


@pytest.fixture(scope="module")
def virtuoso(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Virtuoso]:
    """A fresh Virtuoso on free ports of 127.0.0.1, stopped when the module ends."""
    server, isql = _binaries()
    folder = tmp_path_factory.mktemp("virtuoso")
    sql_port = http_port = _free_port()
    while http_port == sql_port:  # two free ports, not the same one twice
        http_port = _free_port()
    ini = folder / "virtuoso.ini"
    ini.write_text(_INI.format(d=folder, sql=sql_port, http=http_port))
    log = folder / "server.out"
    with log.open("wb") as out:
        proc = subprocess.Popen([server, "+foreground", "+configfile", str(ini)], cwd=folder,
                                stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{http_port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if requests.get(f"{url}/sparql", params={"query": "ASK {}"}, timeout=1).ok:
                break
        except requests.ConnectionError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"virtuoso-t did not start: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.1)
    try:
        yield Virtuoso(url, sql_port, folder, isql)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass(frozen=True)
class Call:
    """One query the pipeline sent, with its bindings and the embedded store's answer."""

    query: str
    bindings: Bindings | None
    rows: list[Row]


@dataclass(frozen=True)
class Embedded:
    """The sample project's embedded index (open for the module), its quads under the project's graph
    names, and every query its default assemblies sent."""

    index: Index
    project: str
    dump: Path
    export: Path
    calls: list[Call]


def _items(idx: Index, task: str, extra: dict[str, Any]) -> list[tuple[str, int, int, str]]:
    result = idx.assemble(task, budget=1500, strategy="arce", **extra)
    return [(i.candidate.path, i.candidate.start_line, i.candidate.end_line, i.candidate.lod)
            for i in result.assembled.items]


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Embedded]:
    root = tmp_path_factory.mktemp("virtuoso-project") / "sample"
    shutil.copytree(FIXTURE, root)
    project = f"p{uuid.uuid4().hex[:10]}"
    calls: list[Call] = []
    with Index.open(root, project_name=project) as idx:
        idx.index()
        idx.plans.create("parsing")  # a decision about the code the tasks reach: the walk's decision edge runs
        idx.plans.record("Header lines are split at the first colon; the rest is the value.", plan="parsing",
                         about=["pkg/mod.py::Parser"])
        store = idx.store
        original = store.select

        def recording(query: str, bindings: Bindings | None = None, functions: object = None, **kw: Any) -> list[Row]:
            rows = original(query, bindings, functions, **kw)  # type: ignore[arg-type]
            calls.append(Call(query, bindings, rows))
            return rows

        store.select = recording  # type: ignore[method-assign]
        try:
            for task, extra in TASKS:
                assert _items(idx, task, extra)
        finally:
            del store.select
        scope = GraphScope(project)
        quads = [scope.quad_out(q) for q in store.quads()]
        quads.append(ox.Quad(scope.project, _GENERATION, ox.Literal("g1"), scope.control))
        dump = root.parent / "graph.nq"
        ox.serialize(quads, str(dump), format=ox.RdfFormat.N_QUADS)
        export = root.parent / "export.nq"  # what `acms export --format nquads` writes: the five shared names
        with export.open("wb") as out:
            idx.export.write(out, "nquads")
        yield Embedded(idx, project, dump, export, calls)


@pytest.fixture(scope="module")
def loaded(virtuoso: Virtuoso, embedded: Embedded) -> Virtuoso:
    """The project twice in one Virtuoso, bulk-loaded with ``ld_dir`` (which keeps each quad's graph): under
    the project's graph names with its generation (as an acms writer leaves it), and the export as it is."""
    for dump in (embedded.dump, embedded.export):
        shutil.copy(dump, virtuoso.folder / dump.name)
    virtuoso.sql(f"ld_dir('{virtuoso.folder}', '*.nq', 'urn:acms:unused'); rdf_loader_run(); checkpoint;")
    done = virtuoso.sql("select ll_file from DB.DBA.LOAD_LIST where ll_state = 2 and ll_error is null;")
    assert embedded.dump.name in done and embedded.export.name in done, done
    return virtuoso


@pytest.fixture(scope="module")
def remote(loaded: Virtuoso, embedded: Embedded) -> Iterator[RemoteStore]:
    """acms's remote store over Virtuoso's query endpoint, read-only (the project's generation is set)."""
    target = RemoteTarget(Endpoints(loaded.url, query_url=f"{loaded.url}/sparql", timeout=60, retries=0),
                          project=embedded.project)
    store = RemoteStore(target, read_only=True)
    yield store
    store.close()


def _value(name: str, term: object) -> object:
    """A cell as the pipeline reads it. Numbers as floats to 6 significant digits (Virtuoso writes a
    double with 6 in its results); a dateTime as the instant (the engines' lexical forms differ); a ``GROUP_CONCAT`` list of IRIs as a sorted tuple (SPARQL leaves the
    order of a group undefined, and expand.py reads the list as a set); an empty ``decorators`` as
    unbound (an aggregate over unbound values: Virtuoso gives "", Oxigraph nothing; entity-heads' reader
    takes both as no decorator)."""
    if isinstance(term, ox.Literal) and term.datatype.value in _NUMERIC:
        return float(f"{float(term.value):.6g}")
    if isinstance(term, ox.Literal) and term.datatype.value == _DATETIME:
        return datetime.fromisoformat(term.value)  # "…39.10838Z" and "…39.108380Z" are one instant
    if name == "entities" and term is not None:
        return tuple(sorted(term.value.split()))  # type: ignore[attr-defined]
    if name == "decorators" and term is not None and term.value == "":  # type: ignore[attr-defined]
        return None
    return getattr(term, "value", term)


def _rows(rows: list[Row], names: list[str]) -> list[tuple[object, ...]]:
    return [tuple(_value(n, r.get(n)) for n in names) for r in rows]


def test_the_pipeline_sends_its_phases(embedded: Embedded) -> None:
    """The recording covers the walk, not only the first stage: every default phase was sent."""
    sent = {c.query.split("\n", 1)[0] for c in embedded.calls}
    assert sent >= PHASES, sorted(sent)


def _differences(calls: list[Call], answer: Callable[[Call], list[Row]]) -> list[str]:
    differ: list[str] = []
    for call in calls:
        got = answer(call)
        names = sorted({n for r in call.rows + got for n in r})
        want, have = _rows(call.rows, names), _rows(got, names)
        head = call.query.split("\n", 1)[0]
        if Counter(want) != Counter(have):
            differ.append(f"{head}: embedded {len(want)} rows, virtuoso {len(have)}; only embedded "
                          f"{sorted(set(want) - set(have), key=str)[:3]}, only virtuoso {sorted(set(have) - set(want), key=str)[:3]}")
        elif "ORDER BY" in call.query and want != have:
            differ.append(f"{head}: the same rows in another order")
    return differ


def test_every_default_query_answers_on_virtuoso_as_embedded(remote: RemoteStore, embedded: Embedded) -> None:
    """Through acms's remote store: the project's graph names, the dataset as ``named-graph-uri``."""
    calls = embedded.calls
    assert len(calls) > 20 and sum(len(c.rows) for c in calls) > 100
    differ = _differences(calls, lambda c: remote.select(c.query, c.bindings))
    assert not differ, "\n".join(differ)


def test_the_hierarchy_from_a_method_s_name_answers_on_virtuoso_as_embedded(remote: RemoteStore,
                                                                           embedded: Embedded) -> None:
    """The walk looks down a widely inherited class from the method's name (``overrides-down-by-name.rq``,
    with ``name-counts.rq`` deciding); the sample project has no such class, so both queries are sent
    here for every method it has, beside the class-first query they must agree with, and for rows that
    ask Base for the names its subclass Parser defines (the sample overrides nothing: these find some)."""
    folder = StrategyRegistry.default().get("arce").folder
    assert folder is not None
    text = {n: (folder / f"{n}.rq").read_text(encoding="utf-8")
            for n in ("method-classes", "overrides-down", "overrides-down-by-name", "name-counts")}
    store = embedded.index.store
    methods = [r["m"] for r in store.select("SELECT DISTINCT ?m WHERE { GRAPH ?g { ?m a ?kind } }",
                                            {"kind": [UKO.Method]})]
    owners = store.select(text["method-classes"], {"node": methods})
    rows = [(r["node"], r["cls"], r["name"], r["base"]) for r in owners]
    base = next(r for r in rows if r[0].value.endswith(".Base.describe"))
    rows += [(base[0], base[1], name, base[3]) for name in {r[2] for r in rows if ".Parser." in r[0].value}]
    names = sorted({r[2] for r in rows}, key=lambda n: n.value)
    calls = [Call(text[q], b, store.select(text[q], b)) for q, b in (
        ("overrides-down", {"node cls name base": rows}), ("overrides-down-by-name", {"node cls name base": rows}),
        ("name-counts", {"name": names}))]
    assert rows and calls[0].rows and calls[2].rows
    assert sorted(map(str, calls[0].rows)) == sorted(map(str, calls[1].rows))
    differ = _differences(calls, lambda c: remote.select(c.query, c.bindings))
    assert not differ, "\n".join(differ)


def test_an_export_loaded_as_is_answers_plain_sparql_as_embedded(loaded: Virtuoso, embedded: Embedded) -> None:
    """What a SPARQL user does by hand: ``acms export --format nquads`` bulk-loaded into Virtuoso as it is
    (the five shared graph names), and each ``.rq`` file sent over the plain SPARQL protocol with the
    PREFIX lines acms predeclares and its inputs as ``VALUES``."""
    header = "".join(f"PREFIX {p}: <{ns}>\n" for p, ns in PREFIXES.items())
    dataset = [("named-graph-uri", g.value) for g in LOGICAL_GRAPHS]
    with requests.Session() as http:

        def plain(call: Call) -> list[Row]:
            form = [("query", header + bind(call.query, call.bindings)), *dataset]
            response = http.post(f"{loaded.url}/sparql", data=form, timeout=60,
                                 headers={"Accept": "application/sparql-results+json"})
            assert response.ok, response.text[:500]
            result = ox.parse_query_results(response.content, format=ox.QueryResultsFormat.JSON)
            names = [v.value for v in result.variables]  # type: ignore[union-attr]
            return [{n: s[n] for n in names if s[n] is not None} for s in result]  # type: ignore[union-attr]

        differ = _differences(embedded.calls, plain)
    assert not differ, "\n".join(differ)


def test_the_default_assembly_is_the_same_with_virtuoso_answering(remote: RemoteStore, embedded: Embedded) -> None:
    """End to end: the same assemblies with every SELECT answered by Virtuoso give the same context (the
    engine's row order and group order, which SPARQL leaves open, do not change what is packed)."""
    idx = embedded.index
    store = idx.store
    sent: list[str] = []

    def on_virtuoso(query: str, bindings: Bindings | None = None, functions: object = None, **kw: Any) -> list[Row]:
        sent.append(query)
        return remote.select(query, bindings, functions, **kw)  # type: ignore[arg-type]

    for task, extra in TASKS:
        want = _items(idx, task, extra)
        store.select = on_virtuoso  # type: ignore[method-assign]
        try:
            got = _items(idx, task, extra)
        finally:
            del store.select
        assert got == want and want, task
    assert {q.split("\n", 1)[0] for q in sent} >= PHASES  # the walk's queries went to Virtuoso
