"""A project's index in a SPARQL 1.1 engine, through the standard protocols only (no acms code on the server).

Reads are SPARQL 1.1 Protocol queries. Every query names its dataset with the protocol's
``named-graph-uri`` parameters: the project's five graphs (:mod:`acms.store.scope`), so ``GRAPH ?g``
never reaches another project's graphs and the default graph is empty, as in the embedded store. Rows
come back as SPARQL JSON results and graphs as N-Triples, parsed by pyoxigraph into the same terms and
result types the embedded store gives (:mod:`acms.store.results`), graph names brought back logical.

Writes. Outside an index run, every write (a plan, a decision, ``tiers rebalance``, ``ontology add``)
is ONE update request that also moves the project's generation on (``queries/store/set-generation.ru``):
an engine that runs each update request as a transaction applies it whole.

An index run (``atomic()``) makes many writes and reads its own writes in between (history and tiers
are computed over the files' write). The remote store therefore stages it: the project's graphs are
fetched once (Graph Store Protocol GET) into an in-memory Oxigraph store, the run reads and writes
there at embedded speed, and when it ends the difference (quads removed, quads added) is sent as ONE
update request guarded by the generation the run started from::

    DELETE { <removed quads> } WHERE { <generation is G> } ;
    INSERT { <added quads> }   WHERE { <generation is G> } ;
    <generation G -> G'>               (the completion marker, last)

Readers never see half a run: the request is applied whole or not at all by the engine. If another
writer moved the generation in between, the guard matches nothing, nothing is applied, and the run
fails with ``StoreLocked`` (run it again); a failed run sent nothing. A response lost on the way is
resolved by reading the generation back. There is no lock across machines (the standard protocols
have none): concurrent writers of one project are serialised by this optimistic check, not by waiting.
"""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox
from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad

from acms.errors import QueryError, QuerySyntaxError, StoreError, StoreLocked, StoreMissing
from acms.sparql import catalog
from acms.sparql.bind import bind
from acms.sparql.runner import QueryLimits
from acms.store.http_client import Endpoints, SparqlClient, bounded_body
from acms.store.oxigraph import OxigraphStore, ontology_quads
from acms.store.protocol import AskResult, Bindings, CustomFunctions, RawResult, Row, SelectResult
from acms.store.results import parsed_results, parsed_triples
from acms.store.scope import LOGICAL_GRAPHS, GraphScope
from acms.terms import Term
from acms.vocab import FN_NS, GRAPH_ONTOLOGY, PREFIXES, slug

__all__ = ["RemoteStore", "RemoteTarget"]

Tracer = Callable[[str, float], None]

_RESULTS_JSON = "application/sparql-results+json"
_NTRIPLES = "application/n-triples"
_GENERATION = NamedNode("https://w3id.org/acms/store#generation")
_ROOT = NamedNode("https://w3id.org/acms/store#root")  # the project root (host:path) whose index run wrote last
_IDENTITY = NamedNode("https://w3id.org/acms/store#identity")  # which project that root holds (compared)


@dataclass(frozen=True)
class RemoteTarget:
    """One project in one SPARQL engine (picklable: ``acms serve`` hands it to its worker processes)."""

    endpoints: Endpoints
    project: str
    owner: str = ""  # this project's root as ``host:path``: a shared store's graphs name the root that wrote them
    identity: str = ""  # which project the root holds (its git origin and folder in it); the owner when empty

    @property
    def who(self) -> str:
        """What a shared store compares to tell two projects apart."""
        return self.identity or self.owner

    def cache_root(self, base: Path) -> Path:
        """The local directory of this project's derived caches (postings, vectors, the LSA model) under
        ``base``: one per store and project, so two stores or two projects never share a cache; inside
        it the caches are keyed by the index run, as in the embedded store."""
        parts = self.endpoints.display.split("://", 1)[-1]
        key = hashlib.sha256(f"{self.endpoints.display}|{slug(self.project)}".encode()).hexdigest()[:12]
        return base / f"{slug(parts)[:40]}-{slug(self.project)[:40]}-{key}"


class RemoteStore:
    """``GraphStore`` over a SPARQL 1.1 engine, for one project's graphs."""

    def __init__(self, target: RemoteTarget, *, read_only: bool = False, tracer: Tracer | None = None,
                 command: str = "") -> None:
        self.target = target
        self.scope = GraphScope(target.project)
        self.read_only = read_only
        self.tracer = tracer
        self.command = command
        self.path = None  # no directory: the index lives in the engine
        self._client = SparqlClient(target.endpoints)
        self._prefixes: dict[str, str] | None = None
        self._stage: OxigraphStore | None = None
        self._stage_thread: int | None = None
        self.generation: str | None = None
        self.owner: str | None = None  # the project root the store says wrote the project's graphs
        self.identity: str | None = None  # which project that root holds (None: an older acms wrote no identity)
        self._claimed = False
        self.refresh()

    @classmethod
    def open(cls, target: RemoteTarget, *, read_only: bool, create: bool = False, **kwargs: object) -> RemoteStore:
        """The project's index; a missing one is ``StoreMissing`` unless ``create`` (``acms index``). A
        writer adopts an unscoped index of the project (an index loaded with the shared graph names)."""
        store = cls(target, read_only=read_only, **kwargs)  # type: ignore[arg-type]
        try:
            if store.generation is None and not read_only:
                store._adopt_unscoped()
            if store.generation is None and not create:
                raise StoreMissing(f"no index of project {store.scope.slug!r} in the SPARQL store at "
                                   f"{target.endpoints.display}: run `acms index --store {target.endpoints.display}` first")
        except BaseException:
            store.close()
            raise
        return store

    # ------------------------------------------------------------------ state
    def refresh(self) -> str | None:
        """Read the project's generation (changes with every write); None when it has no index here."""
        rows = self._select_remote(catalog.text("store/generation"),
                                   {"ctl": self.scope.control, "project": self.scope.project}, control=True)
        self.generation = rows[0]["gen"].value if rows else None
        self.owner = rows[0]["owner"].value if rows and "owner" in rows[0] else None
        self.identity = rows[0]["identity"].value if rows and "identity" in rows[0] else None
        self._prefixes = None
        return self.generation

    def claim(self) -> None:
        """Let this process's writes replace the project's graphs even when another project root wrote
        them (``acms index --force``): the store then names this root as theirs."""
        self._claimed = True

    def _theirs(self) -> str | None:
        return self.identity or self.owner

    def _check_owner(self) -> None:
        """Refuse to write over graphs another project indexed under the same project name (two folders
        called ``app``), naming the root that owns them. Two clones of one repository are one project
        (the same git origin and folder in it), so every machine may index it."""
        mine, theirs = self.target.who, self._theirs()
        if self._claimed or not mine or theirs is None or theirs == mine:
            return
        shown = self.owner or theirs
        raise StoreError(
            f"project {self.scope.slug!r} in the SPARQL store at {self.target.endpoints.display} belongs to "
            f"another project root, {shown} (this one is {self.target.owner}); nothing was written. Give this "
            "project its own name (setting project_name), or run acms index --force to replace that project's "
            "graphs")

    def _adopt_unscoped(self) -> None:
        """Move this project's index from the five shared graph names into its own, in one update request
        (an index exported from an embedded store and loaded as it is, or one written before graphs were
        per project)."""
        found = self._select_remote(catalog.text("store/unscoped-project"), {"project": self.scope.project},
                                    scoped=False)
        if not found or int(found[0]["n"].value) == 0:
            return
        pairs = [(g, self.scope.physical(g)) for g in LOGICAL_GRAPHS]
        move = bind(catalog.text("store/adopt-unscoped.ru"), {"from to": pairs})
        self._send_update([move], scoped=False)

    # ------------------------------------------------------------------ staging (an index run)
    def _staged(self) -> OxigraphStore | None:
        return self._stage if self._stage is not None and self._stage_thread == threading.get_ident() else None

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """Stage the run locally; send its difference as one guarded update request at the end."""
        if self.read_only or self._staged() is not None:
            yield
            return
        start = self.refresh()
        self._check_owner()
        before = self._pull()
        stage = OxigraphStore(None, tracer=self.tracer)
        stage.load(before, bulk=True)
        self._stage, self._stage_thread = stage, threading.get_ident()
        try:
            yield
            after = list(stage.quads())
        finally:
            self._stage = self._stage_thread = None
        self._push(set(before), set(after), start)

    def _pull(self) -> list[Quad]:
        """The project's quads, logical graph names, one Graph Store Protocol GET per graph."""
        out: list[Quad] = []
        for logical in LOGICAL_GRAPHS:
            out.extend(self._get_graph(logical))
        return out

    def _get_graph(self, logical: NamedNode) -> Iterator[Quad]:
        start = time.perf_counter()
        body = self._client.get_graph(self.scope.physical(logical).value, _NTRIPLES)
        if self.tracer:
            self.tracer(f"GET graph {logical.value}", time.perf_counter() - start)
        if not body:
            return iter(())
        return (Quad(t.subject, t.predicate, t.object, logical) for t in ox.parse(body, format=ox.RdfFormat.N_TRIPLES))

    def _push(self, before: set[Quad], after: set[Quad], start: str | None) -> None:
        removed, added = before - after, after - before
        if not removed and not added and start is not None and self._theirs() in (self.target.who or None, None):
            return  # nothing changed (a re-index of an unchanged project writes nothing), nor whose it is
        new = uuid.uuid4().hex
        guard = _guard(self.scope, start)
        parts = []
        if removed:
            parts.append(f"DELETE {{\n{_blocks(self.scope.quads_out(removed))}\n}} WHERE {{ {guard} }}")
        if added:
            parts.append(f"INSERT {{\n{_blocks(self.scope.quads_out(added))}\n}} WHERE {{ {guard} }}")
        for predicate, value in ((_ROOT, self.target.owner), (_IDENTITY, self.target.who)):
            if value:  # whose index this is, for the next writer from another root to see
                now = Quad(self.scope.project, predicate, Literal(value), self.scope.control)
                was = f"GRAPH {self.scope.control} {{ {self.scope.project} {predicate} ?was }}"
                parts.append(f"DELETE {{ {was} }} INSERT {{ {_blocks([now])} }} WHERE {{ {guard} OPTIONAL {{ {was} }} }}")
        marker = Quad(self.scope.project, _GENERATION, Literal(new), self.scope.control)
        old = "" if start is None else f"DELETE {{ {_blocks([Quad(marker.subject, _GENERATION, Literal(start), self.scope.control)])} }}\n"
        parts.append(f"{old}INSERT {{ {_blocks([marker])} }} WHERE {{ {guard} }}")
        try:
            self._client.update(" ;\n".join(parts), self._using())
        except StoreError:
            if self.refresh() != new:  # the answer was lost; the generation says whether it landed
                raise
        if self.refresh() != new:
            raise StoreLocked(
                f"another acms process wrote project {self.scope.slug!r} in the SPARQL store at "
                f"{self.target.endpoints.display} while this run worked; nothing of this run was applied: run it again"
            )

    # ------------------------------------------------------------------ queries
    def _text(self, query: str, bindings: Bindings | None, scoped: bool = True) -> str:
        text = bind(query, _bindings_out(self.scope, bindings) if scoped and bindings else bindings)
        return self._header() + (self.scope.text(text) if scoped else text)

    def _header(self) -> str:
        """PREFIX lines for the predeclared prefixes (a remote parser has no ``prefixes=`` argument);
        the query's own declarations come after them, so they win."""
        return "".join(f"PREFIX {p}: <{ns}>\n" for p, ns in self.prefixes().items())

    def _dataset(self, control: bool = False) -> list[tuple[str, str]]:
        graphs = self.scope.graphs + ([self.scope.control] if control else [])
        return [("named-graph-uri", g.value) for g in graphs]

    def _using(self) -> list[tuple[str, str]]:
        return [("using-named-graph-uri", g.value) for g in [*self.scope.graphs, self.scope.control]]

    def _post_query(self, text: str, accept: str, params: Sequence[tuple[str, str]],
                    limits: QueryLimits | None = None) -> tuple[bytes, str]:
        start = time.perf_counter()
        began = time.monotonic()
        try:
            response = self._client.query(text, accept, params, limits)
            body = response.content if limits is None else bounded_body(response, limits, began)
        finally:
            if self.tracer:
                self.tracer(text, time.perf_counter() - start)
        return body, response.headers.get("Content-Type", "").split(";")[0].strip().lower()

    def _select_remote(self, query: str, bindings: Bindings | None, *, scoped: bool = True,
                       control: bool = False, limits: QueryLimits | None = None) -> list[Row]:
        text = self._text(query, bindings, scoped)
        body, _ = self._post_query(text, _RESULTS_JSON, self._dataset(control) if scoped else (), limits)
        result = parsed_results(body, self.scope.term_back)
        if not isinstance(result, SelectResult):
            raise QuerySyntaxError("expected a SELECT query")
        return list(result)

    def select(self, query: str, bindings: Bindings | None = None,
               functions: CustomFunctions | None = None, *, limits: QueryLimits | None = None) -> list[Row]:
        """``limits``: a user's query; its time limit bounds the one request (the engine's own limits bound
        its memory: a query the engine runs cannot be stopped from here, only no longer waited for)."""
        stage = self._staged()
        if stage is not None:
            return stage.select(query, bindings, functions)
        if functions and ("fn:" in query or FN_NS in query):
            raise QueryError("this query calls acms's custom functions (fn:), which a remote SPARQL engine does "
                             "not have: pass the scores as VALUES columns instead (see queries/search/fragments.rq)")
        return self._select_remote(query, bindings, limits=limits)

    def ask(self, query: str, bindings: Bindings | None = None) -> bool:
        stage = self._staged()
        if stage is not None:
            return stage.ask(query, bindings)
        body, _ = self._post_query(self._text(query, bindings), _RESULTS_JSON, self._dataset())
        result = parsed_results(body)
        if not isinstance(result, AskResult):
            raise QuerySyntaxError("expected an ASK query")
        return bool(result)

    def construct(self, query: str, bindings: Bindings | None = None) -> list[Quad]:
        stage = self._staged()
        if stage is not None:
            return stage.construct(query, bindings)
        body, kind = self._post_query(self._text(query, bindings), _NTRIPLES, self._dataset())
        if kind != _NTRIPLES:
            raise QuerySyntaxError("expected a CONSTRUCT or DESCRIBE query")
        return [Quad(t.subject, t.predicate, t.object) for t in parsed_triples(body, self.scope.term_back)]

    def query_raw(self, query: str, bindings: Bindings | None = None, *, limits: QueryLimits | None = None,
                  **kwargs: object) -> RawResult:
        """Any query form: SELECT/ASK parsed from SPARQL JSON, CONSTRUCT/DESCRIBE from N-Triples, as
        they are read, the project's graph names brought back logical. The dataset: ``default_graph`` /
        ``named_graphs`` / ``use_default_graph_as_union`` map to the protocol's parameters over the
        project's graphs; ``whole_store=True`` (the cross-project saved queries) sends none, so the
        engine's whole dataset answers, under the names it stores (they tell the projects apart)."""
        stage = self._staged()
        whole = bool(kwargs.pop("whole_store", False))
        if stage is not None:
            return stage.query_raw(query, bindings, **kwargs)
        params: list[tuple[str, str]] = []
        if not whole:
            named = kwargs.get("named_graphs")
            names = [self.scope.physical(g) for g in named] if named else self.scope.graphs  # type: ignore[attr-defined]
            params = [("named-graph-uri", g.value) for g in names]
            default = kwargs.get("default_graph")
            if kwargs.get("use_default_graph_as_union"):
                default = self.scope.graphs
            for g in default or []:  # type: ignore[attr-defined]
                if isinstance(g, NamedNode):
                    params.append(("default-graph-uri", self.scope.physical(g).value))
        body, kind = self._post_query(self._text(query, bindings), f"{_RESULTS_JSON}, {_NTRIPLES};q=0.9", params,
                                      limits)
        back = None if whole else self.scope.term_back
        if kind == _NTRIPLES:
            return parsed_triples(body, back)
        return parsed_results(body, back)

    # ------------------------------------------------------------------ writes
    def _writable(self) -> None:
        if self.read_only:
            raise StoreError("this index was opened read-only")

    def _send_update(self, parts: Sequence[str], scoped: bool = True) -> None:
        """The parts and the generation's move as one update request (one transaction)."""
        self._writable()
        self._check_owner()
        new = Literal(uuid.uuid4().hex)
        bump = bind(catalog.text("store/set-generation.ru"),
                    {"ctl": self.scope.control, "project": self.scope.project, "gen": new})
        body = [self.scope.text(p) if scoped else p for p in parts]
        text = self._header() + " ;\n".join([*body, bump])
        start = time.perf_counter()
        try:
            self._client.update(text, self._using() if scoped else ())
        finally:
            if self.tracer:
                self.tracer(text, time.perf_counter() - start)
        self.generation = new.value
        self._prefixes = None  # the update may have changed the ontology graph

    def update(self, update: str, bindings: Bindings | None = None) -> None:
        stage = self._staged()
        if stage is not None:
            return stage.update(update, bindings)
        self._send_update([bind(update, _bindings_out(self.scope, bindings) if bindings else None)])

    def load(self, quads: Iterable[Quad], *, bulk: bool = False) -> int:
        stage = self._staged()
        if stage is not None:
            return stage.load(quads, bulk=bulk)
        batch = list(quads)
        if batch:
            self._send_update([f"INSERT DATA {{\n{_blocks(self.scope.quads_out(batch))}\n}}"])
        return len(batch)

    def replace(self, deletes: Sequence[tuple[str, Bindings | None]], quads: Sequence[Quad]) -> None:
        stage = self._staged()
        if stage is not None:
            return stage.replace(deletes, quads)
        parts = [bind(t, _bindings_out(self.scope, b) if b else None) for t, b in deletes]
        if quads:
            parts.append(f"INSERT DATA {{\n{_blocks(self.scope.quads_out(quads))}\n}}")
        if parts:
            self._send_update(parts)

    def drop_graph(self, graph: NamedNode) -> None:
        stage = self._staged()
        if stage is not None:
            return stage.drop_graph(graph)
        self._send_update([f"DROP SILENT GRAPH {self.scope.physical(graph)}"])

    # ------------------------------------------------------------------ whole-store passes
    def quads(self, graph: NamedNode | DefaultGraph | None = None, predicate: NamedNode | None = None,
              obj: Term | None = None) -> Iterator[Quad]:
        stage = self._staged()
        if stage is not None:
            yield from stage.quads(graph, predicate, obj)
            return
        if isinstance(graph, DefaultGraph):
            return  # a shared store's default graph belongs to no project
        graphs = [graph] if graph is not None else list(LOGICAL_GRAPHS)
        if predicate is None and obj is None:
            for g in graphs:
                yield from self._get_graph(g)
            return
        bindings: dict[str, object] = {"g": graphs}
        if predicate is not None:
            bindings["p"] = predicate
        if obj is not None:
            bindings["o"] = obj
        for r in self._select_remote(catalog.text("store/quads"), bindings):  # type: ignore[arg-type]
            yield Quad(r["s"], r["p"], r["o"], r["g"])  # type: ignore[arg-type]

    def named_graphs(self) -> Iterator[NamedNode]:
        stage = self._staged()
        if stage is not None:
            yield from stage.named_graphs()
            return
        rows = self._select_remote(catalog.text("store/nonempty-graphs"), {"g": list(LOGICAL_GRAPHS)})
        yield from (r["g"] for r in rows)  # type: ignore[misc]

    def has_graph(self, graph: NamedNode) -> bool:
        stage = self._staged()
        if stage is not None:
            return stage.has_graph(graph)
        return bool(self._select_remote(catalog.text("store/nonempty-graphs"), {"g": graph}))

    def count(self, graph: NamedNode | None = None) -> int:
        """The quads of one graph, or of the project's five (not the whole shared store's)."""
        stage = self._staged()
        if stage is not None:
            return stage.count(graph)
        rows = self._select_remote(catalog.text("stats/graph-size"), {"g": [graph] if graph else list(LOGICAL_GRAPHS)})
        return int(rows[0]["n"].value) if rows else 0

    def prefixes(self) -> dict[str, str]:
        stage = self._staged()
        if stage is not None:
            return stage.prefixes()
        if self._prefixes is None:
            self._prefixes = dict(PREFIXES)  # the standard ones while the extensions' are read
            extra = {r["prefix"].value: r["ns"].value
                     for r in self._select_remote(catalog.text("store/extension-prefixes"), None)}
            self._prefixes = {**{k: v for k, v in extra.items() if k not in PREFIXES}, **PREFIXES}
        return self._prefixes

    def ensure_ontology(self, extensions: Sequence[Quad] | None = None) -> bool:
        stage = self._staged()
        if stage is not None:
            return stage.ensure_ontology(extensions)
        current = set(self._get_graph(GRAPH_ONTOLOGY))
        if extensions is None:
            if current:
                return False
            self.load(ontology_quads())
            return True
        desired = ontology_quads(extensions)
        if current == set(desired):
            return False
        self._send_update([f"DROP SILENT GRAPH {self.scope.physical(GRAPH_ONTOLOGY)}",
                           f"INSERT DATA {{\n{_blocks(self.scope.quads_out(desired))}\n}}"])
        return True

    def size_bytes(self) -> int:
        return 0  # the engine's own: not visible through the standard protocols

    def flush(self) -> None:
        """Nothing to flush: every write was one request the engine has applied."""

    def close(self) -> None:
        self._client.close()


def _bindings_out(scope: GraphScope, bindings: Bindings | None) -> Bindings | None:
    """Bound terms with logical graph names replaced by the project's (``{"g": TIER_HOT}``)."""
    if not bindings:
        return bindings
    out: dict[str, object] = {}
    for name, value in bindings.items():
        if isinstance(value, (NamedNode, Literal, ox.BlankNode)):
            out[name] = scope.term_out(value)
        else:
            out[name] = [tuple(scope.term_out(t) for t in v) if isinstance(v, tuple) else scope.term_out(v)
                         for v in value]  # type: ignore[union-attr]
    return out  # type: ignore[return-value]


def _guard(scope: GraphScope, generation: str | None) -> str:
    """The WHERE of a guarded push: the project's generation is still the one the run started from."""
    if generation is None:
        return f"FILTER NOT EXISTS {{ GRAPH {scope.control} {{ {scope.project} {_GENERATION} ?any }} }}"
    return f"GRAPH {scope.control} {{ {scope.project} {_GENERATION} {Literal(generation)} }}"


def _blocks(quads: Iterable[Quad]) -> str:
    """Quads as ``GRAPH <g> { … }`` blocks (a template or a DATA block), serialised by pyoxigraph."""
    by_graph: dict[str, list[str]] = {}
    for q in quads:
        key = str(q.graph_name) if isinstance(q.graph_name, NamedNode) else ""
        by_graph.setdefault(key, []).append(f"{q.subject} {q.predicate} {q.object} .")
    return "\n".join(f"GRAPH {g} {{\n" + "\n".join(t) + "\n}" if g else "\n".join(t) for g, t in by_graph.items())
