"""The public façade: open a project's index, ingest, search, assemble, query, describe.

    from acms import Index
    with Index.open("path/to/project") as idx:
        idx.index()
        print(idx.assemble("how is the budget enforced", budget=2000).rendered)

``Index`` is the face of :mod:`acms.service`: the CLI, ``acms serve``, the MCP server and ``acms eval``
all go through it. ``mode`` says how it holds the store (see :mod:`acms.service.session`): ``write``
(the default: the one writer, for the Index's lifetime), ``read`` (one reader among many) or
``shared`` (a long-lived process: the lock per call, so ``acms index`` can run beside it).

Every read first looks whether indexed files changed on disk (:mod:`acms.service.freshness`: sizes and
mtimes, hashes only where those moved) and acts by the ``refresh`` setting: ``auto`` refreshes the
changed files first (a short write; a reader lets go of its share for it), ``warn`` answers from the
index as it is and names them (``Index.stale``, the assembled context's notice), ``off`` does not look.
A store this process cannot write, or one another writer holds for longer than ``REFRESH_WAIT``, is
answered as ``warn`` would.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import socket
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from acms.config import Settings, load_settings
from acms.paths import index_location, is_remote, project_root
from acms.removal import removals_settled
from acms.retrieval.drift import Drift
from acms.retrieval.search import Mode as SearchMode
from acms.retrieval.search import SearchResult, Searcher
from acms.service.progress import Progress
from acms.service.session import Mode, Session, open_session
from acms.service import endpoint  # the SPARQL endpoint's store work: acms serve runs it in its worker processes
from acms.service.identity import indexed_project, project_identity, project_name
from acms.errors import AcmsError, UsageError
from acms.service.freshness import Manifest, Staleness, check, last_run, look_by_stats
from acms.sparql import catalog
from acms.sparql.bind import term_from_text
from acms.sparql.catalog import QuerySpec
from acms.sparql.dataset import DefaultGraph, dataset_arguments
from acms.sparql.guard import check_query, refuse_update
from acms.sparql.results import DEFAULT_MAX_ROWS, QueryResult, collect
from acms.sparql.runner import QueryLimits
from acms.temporal.history import EntityHistory, entity_history, resolve
from acms.terms import Term
from acms.store.http_client import Endpoints
from acms.store.layout import IndexLayout
from acms.store.remote import RemoteTarget
from acms.store.protocol import Bindings, GraphStore, Row, SupportsOwnership
from acms.strategies.registry import StrategyRegistry

if TYPE_CHECKING:  # the ingest stack is imported by the writer only (``index``), not by every reader, and
    # the assembling stack (the request's jsonschema: ~40 ms) by the commands that assemble
    from collections.abc import Callable

    from acms.assembly.protocol import RenderRequest
    from acms.retrieval.refit_ahead import RefitAhead
    from acms.service.assembly import Assembler, AssemblyResult

    from acms.service.describe import Description
    from acms.service.embeddings import Embeddings
    from acms.service.export import Exporter
    from acms.service.indexing import IndexReport
    from acms.service.inspect import Health, Stats, Validation
    from acms.service.ontologies import Checked, Ontologies
    from acms.service.plans import Plans
    from acms.service.queries import Answer
    from acms.service.tiers import Tiers
    from acms.service.watch import Follower, Refreshed

REFRESH_WAIT = 5.0  # seconds a read waits for the index's writer lock to refresh, before it answers as ``warn``


def store_dir(root: Path, settings: Settings, store: str | Path | None = None) -> Path | str:
    """The index directory: ``store`` when given, else the ``store`` setting (relative to the root); an
    ``http(s)://`` URL (a SPARQL 1.1 engine) is returned as it is."""
    return index_location(root, settings.store, store)


def remote_target(url: str, root: Path, settings: Settings) -> RemoteTarget:
    """The project in the SPARQL engine at ``url``, with the ``store_*`` settings."""
    endpoints = Endpoints(url, settings.store_query_url, settings.store_update_url, settings.store_data_url,
                          settings.store_auth_env, settings.store_timeout, settings.store_retries)
    owner = f"{socket.gethostname()}:{root.resolve()}"  # which root's index it is, in a store many share
    return RemoteTarget(endpoints, project_name(root, settings), owner, project_identity(root))


class Index:
    """One project's index, held as ``mode`` says (default: the one writer, for its lifetime)."""

    def __init__(self, root: Path, settings: Settings, store_dir: Path | str | None = None, *,
                 mode: Mode | str = Mode.WRITE, wait: float | None = None, command: str = "",
                 create: bool = True, registry: StrategyRegistry | None = None) -> None:
        self.root = root
        self.settings = settings
        self._local = threading.local()
        self._follower: Follower | None = None  # the watcher following the project, once one is made
        location = store_dir if store_dir is not None else index_location(root, settings.store)
        self._location, self._wait, self._command = location, wait, command
        self.remote = remote_target(location, root, settings) if isinstance(location, str) and is_remote(location) else None
        if self.remote is not None:  # the index is in the engine; derived caches stay on this machine
            cache = Path(settings.store_cache)
            self.layout = IndexLayout(self.remote.cache_root(cache if cache.is_absolute() else root / cache))
        else:
            self.layout = IndexLayout(Path(location))
        self.registry = registry or StrategyRegistry.default()
        self.session: Session = open_session(
            self.layout, mode, wait=settings.lock_wait if wait is None else wait,
            command=command or f"acms ({Mode(mode).value})", create=create and Mode(mode) is Mode.WRITE,
            remote=self.remote,
        )
        self._assembler: Assembler | None = None  # made on first use (``assembler``)

    @classmethod
    def open(cls, project: str | Path, *, store: str | Path | None = None, mode: Mode | str = Mode.WRITE,
             wait: float | None = None, strategies_dirs: Iterable[Path] = (), create: bool = True,
             command: str = "", settings: Settings | None = None, **overrides: Any) -> Index:
        """The one way to open an index. ``settings``: already loaded (the CLI's, with its flags), else read
        from the project; ``overrides``: settings (``hot_days=3``), checked against their types like any
        other source. ``create``: a ``write`` Index may start a new index; otherwise a missing one is
        ``StoreMissing``."""
        return cls.opener(project, store=store, mode=mode, wait=wait, strategies_dirs=strategies_dirs,
                          create=create, command=command, settings=settings, **overrides)()

    @classmethod
    def opener(cls, project: str | Path, *, store: str | Path | None = None, mode: Mode | str = Mode.WRITE,
               wait: float | None = None, strategies_dirs: Iterable[Path] = (), create: bool = True,
               command: str = "", settings: Settings | None = None, **overrides: Any) -> Callable[[], Index]:
        """``open`` for later (a server's first call, from another thread): the project, its settings and
        the strategies are read now, the store is opened by each call."""
        root = project_root(project)
        settings = (settings or load_settings(root)).merged(overrides, "Index.open")
        registry = StrategyRegistry.default(strategies_dirs)
        return functools.partial(cls, root, settings, store_dir(root, settings, store), mode=mode, wait=wait,
                                 command=command, create=create, registry=registry)

    @property
    def location(self) -> Path | str:
        """The index directory, or the URL of the SPARQL engine that holds it."""
        return self._location

    @property
    def project_name(self) -> str:
        """The project's name: the namespace of its IRIs (an index keeps the name it was first made with
        when its folder is renamed), its graphs' name in a shared store."""
        if self.remote is not None:
            return self.remote.project
        with self.reading() as store:
            return project_name(self.root, self.settings, indexed_project(store))

    # -- the store, for one unit of work --------------------------------------------------------
    @property
    def store(self) -> GraphStore:
        """The store held for the Index's lifetime (``read`` and ``write`` modes)."""
        return self.session.store

    @contextmanager
    def reading(self) -> Iterator[GraphStore]:
        with self.session.reading() as store:
            yield store

    @contextmanager
    def writing(self) -> Iterator[GraphStore]:
        with self.session.writing() as store:
            yield store

    @property
    def assembler(self) -> Assembler:
        """The assembling service over this index's session, made on first use: a command that only
        writes or queries (``acms index``, ``sparql``, ``stats``) does not import the assembling stack."""
        if self._assembler is None:
            from acms.service.assembly import Assembler

            self._assembler = Assembler(self.session, self.settings, self.registry)
        return self._assembler

    @property
    def searcher(self) -> Searcher:
        """The current Searcher (``read`` and ``write`` modes)."""
        return self.assembler.searcher(self.store)

    # -- the two orchestrations ------------------------------------------------------------------
    def index(self, *, history: int = 0, progress: Progress | None = None, rehash: bool = False,
              force: bool = False, defer_refit: bool = False) -> IndexReport:
        """One index run: lands whole or not at all (see :mod:`acms.service.indexing`). Once a run left its
        manifest, only the files whose size or mtime moved are read (as a refresh reads them); ``rehash``:
        every file is read and hashed. ``force``: in a shared remote store, replace the project's graphs
        even when another project root indexed them under the same name (refused otherwise).
        ``defer_refit``: an LSA refit that is due is left for later, as a refresh leaves it (an agent's
        call in the middle of its work: :mod:`acms.retrieval.drift`)."""
        from acms.service.indexing import IndexRun

        with self.session.writing() as store:
            if force and isinstance(store, SupportsOwnership):
                store.claim()
            looked = None if rehash or Manifest.load(self.layout.cache) is None else \
                check(self.root, self.settings, store, self.layout.cache)
            return IndexRun(self.root, store, self.settings, self.layout, history=history, progress=progress,
                            looked=looked, defer_refit=defer_refit).run()

    # -- following the files on disk ---------------------------------------------------------------
    @property
    def stale(self) -> tuple[str, ...]:
        """The indexed files this thread's last read found changed on disk and answered without
        (``refresh = warn``, or a refresh that could not run); () when it answered from fresh files."""
        return getattr(self._local, "stale", ())

    def look(self, wait: float | None = None, *, saved: Collection[str] = ()) -> Staleness:
        """Which indexed files changed on disk, without changing the index (files a look had to read to tell
        them unchanged are recorded in its manifest, so the next look need not read them). ``saved``: what
        a watcher reported changed (absolute paths); when each is a file the last run listed, those are
        looked at by a stat each, without a walk (``look_by_stats``)."""
        with self.session.reading(wait) as store:
            return self._own_look(store, saved)

    def _own_look(self, store: GraphStore, saved: Collection[str]) -> Staleness:
        if saved:  # the manifest read once: whether the saved files were all listed, and their stats
            looked = look_by_stats(self.root, self.settings, self.layout.cache, last_run(store), saved)
            if looked is not None:
                return looked
        return check(self.root, self.settings, store, self.layout.cache)

    def refresh(self, *, progress: Progress | None = None, wait: float | None = None,
                looked: Staleness | None = None, on_look: Callable[[Staleness], object] | None = None,
                saved: Collection[str] = (), refit: bool = False) -> IndexReport | None:
        """Re-index what changed on disk since the last run, reading only the files whose size or
        mtime moved; None when nothing changed (found under a reader's share: no writer's lock is taken).
        The same write as ``index`` (whole or not at all), but for the LSA model: a refit that falls due is
        left due (``report.refit_due``: ``index`` fits again, as ``refit`` does) unless the drift passed
        ``REFIT_CAP`` (:mod:`acms.retrieval.drift`). ``looked``: a look just taken (a read's): used
        when the index is still in the state it looked against, else the files are looked at again under
        the writer's lock (another writer ran between).
        ``on_look``: hears the look the refresh went by (what a watcher names as skipped comes from it).
        ``saved``: what a watcher reported changed, for the refresh's own look (``look``).
        ``refit``: fit the model again if a refit is due (a watcher, idle): outside the writer's lock, by a
        worker (:mod:`acms.retrieval.refit_ahead`), landed with the files' refresh when the graph is still as
        the worker read it, else left due."""
        from acms.service.indexing import IndexRun

        if self.session.mode is Mode.READ:
            return self._refresh_beside_reader(progress, wait, looked, on_look, saved, refit)
        made = self._refit_ahead(wait) if refit and Drift.pending(self.layout.cache) else None
        try:
            own = looked is None
            if looked is None:  # looked at under a reader's share: finding nothing changed blocks no reader
                looked = self.look(wait, saved=saved)
                if not looked.stale and made is None:
                    if on_look is not None:
                        on_look(looked)
                    return None
            with self.session.writing(wait) as store:
                if not looked.run or looked.run != last_run(store):  # another writer ran since: look again, alike
                    # (a read's look, while a watcher follows, is a stat of each indexed file; the walk of
                    # this refresh's own look is what finds new files)
                    looked = self._own_look(store, saved) if own else self._read_look(store)
                if on_look is not None:
                    on_look(looked)
                if not looked.stale and made is None:
                    return None
                return IndexRun(self.root, store, self.settings, self.layout, progress=progress, looked=looked,
                                defer_refit=True, refit_ahead=made).run()
        finally:
            if made is not None:
                made.close()

    def _refit_ahead(self, wait: float | None) -> RefitAhead | None:
        """The LSA model refitted for the graph as it is now, the texts read under a reader's share and the
        work done by a worker while no lock is held; None when the provider is not LSA or the worker failed
        (the refit stays due)."""
        from acms.retrieval.refit_ahead import RefitAhead

        if self.settings.embedding_provider != "lsa":
            return None
        try:
            with self.session.reading(wait) as store:
                made = RefitAhead(store, self.layout, self.settings, last_run(store))
        except OSError:  # its folder could not be written: the refit stays due
            return None
        try:
            made.ahead.result()
        except (AcmsError, OSError):
            made.close()
            return None
        return made

    def _refresh_beside_reader(self, progress: Progress | None, wait: float | None, looked: Staleness | None,
                               on_look: Callable[[Staleness], object] | None,
                               saved: Collection[str], refit: bool) -> IndexReport | None:
        """A reader holds its share for its lifetime: it lets go, refreshes as a writer, takes it again."""
        self.session.close()
        writer: Index | None = None
        try:
            writer = Index(self.root, self.settings, self._location, mode=Mode.WRITE, command=self._command,
                           create=False, registry=self.registry,
                           wait=self.settings.lock_wait if wait is None else wait)
            return writer.refresh(progress=progress, looked=looked, on_look=on_look, saved=saved, refit=refit)
        finally:
            if writer is not None:
                writer.session.close()  # not close(): what it moved aside is removed while this reader answers
            self.session = open_session(self.layout, Mode.READ, wait=self.settings.lock_wait if self._wait is None
                                        else self._wait, command=self._command or "acms (read)", remote=self.remote)
            self._assembler = None  # the next read's is made over the new session

    def follower(self, on_refresh: Callable[[Refreshed], object]) -> Follower:
        """What follows the project (``acms watch``, and beside ``acms mcp`` and ``acms serve``): saves
        gathered for the ``watch_debounce_ms`` setting, then one ``refresh``; the index directory is not
        watched; an LSA refit the refreshes left due is made once the project is quiet (``REFIT_IDLE_S``).
        ``start()`` it; ``on_refresh`` hears of each refresh."""
        from acms.service.watch import Follower

        self._follower = Follower(self.root, self.refresh, debounce_ms=self.settings.watch_debounce_ms,
                                  ignore=[self.layout.root], on_refresh=on_refresh,
                                  refit_due=lambda: Drift.pending(self.layout.cache))
        return self._follower

    def freshen(self) -> tuple[str, ...]:
        """Apply the ``refresh`` setting now, as every read does first: the stale files it answers
        without (see ``stale``). For callers that read ``store`` directly."""
        self._local.stale = ()
        if self.settings.refresh == "off":
            return ()
        with self.session.reading() as store:
            looked = self._read_look(store)
        if not looked.stale:
            return ()
        if self.settings.refresh == "auto" and self._writable():
            try:
                self.refresh(wait=REFRESH_WAIT, looked=looked)
                return ()
            except (AcmsError, OSError):
                pass  # another writer holds the index, or this one cannot be written: answer, and say so
        self._local.stale = tuple(looked.paths)
        return self._local.stale

    def _read_look(self, store: GraphStore) -> Staleness:
        """The look a read takes. While a watcher follows the project it reports new files, so the files
        indexed are looked at by a stat each, not a walk (the walk was ~0.1 s of a standard library's first
        answer after a save, and a read that waited for the watcher's refresh walked again)."""
        follower = self._follower
        if follower is not None and follower.watching:
            looked = look_by_stats(self.root, self.settings, self.layout.cache, last_run(store))
            if looked is not None:
                return looked
        return check(self.root, self.settings, store, self.layout.cache)

    def _writable(self) -> bool:
        return self.remote is not None or os.access(self.layout.root, os.W_OK)

    # -- operation groups and whole-index operations ----------------------------------------------
    @functools.cached_property
    def ontology(self) -> Ontologies:
        """UKO and the extensions: list, add, remove, describe a term (``Index.check_extension``: no index)."""
        from acms.service.ontologies import Ontologies

        return Ontologies(self)

    @functools.cached_property
    def tiers(self) -> Tiers:
        """Counts and policy of the hot/warm/cold tiers, rebalance, the one-tier check."""
        from acms.service.tiers import Tiers

        return Tiers(self)

    @functools.cached_property
    def plans(self) -> Plans:
        """Plans and the decisions recorded in them (and the ADRs found in the project)."""
        from acms.service.plans import Plans

        return Plans(self)

    @functools.cached_property
    def embeddings(self) -> Embeddings:
        """The stored vectors: status, migration to another provider."""
        from acms.service.embeddings import Embeddings

        return Embeddings(self)

    @functools.cached_property
    def export(self) -> Exporter:
        """The graph or part of it as RDF or for graph viewers."""
        from acms.service.export import Exporter

        return Exporter(self)

    def stats(self) -> Stats:
        """Counts per class, named graph and language; store size; the last index run."""
        from acms.service.inspect import stats

        return stats(self)

    @functools.cached_property
    def _health(self) -> Health:
        from acms.service.inspect import Health

        return Health(self)

    def health(self) -> dict[str, Any]:
        """``{"status": "ok", "quads": N, "model": id or None}``, the quads counted once per write."""
        return self._health()

    def validate(self) -> Validation:
        """The whole store against the shapes, with pyshacl (slow: for a check, not for every run)."""
        from acms.service.inspect import validate

        return validate(self)

    @staticmethod
    def check_extension(ref: str, project: str | Path = ".", *, reasoner: bool = True) -> Checked:
        """Check an ontology extension (a shipped name or a folder) without loading it anywhere."""
        from acms.service.ontologies import check

        return check(ref, project_root(project), reasoner=reasoner)

    def search(self, text: str, mode: str = "hybrid", k: int = 10) -> SearchResult:
        self.freshen()
        return self.assembler.search(text, SearchMode(mode), k)

    def assemble(self, task: str, budget: int = 4000, **request: Any) -> AssemblyResult:
        """``request`` takes any render_request.v0 field (strategy, focus, privacy_mode, filters, …);
        ``format="json"`` gives the render_context_reply.v0 in ``.assembled.rendered``."""
        output = "json" if request.get("format") == "json" else None
        if output:
            request["format"] = "markdown"
        data = {"version": "v0", "id": "00000000-0000-4000-8000-000000000000", "intent": task,
                "request_id": request.pop("request_id", "api"),
                "budgets": {"tokens_max": budget, "time_ms": request.pop("time_ms", 5000)}, **request}
        from acms.assembly.protocol import parse_request

        return self.render(parse_request(data), output)

    def render(self, request: RenderRequest, output: str | None = None) -> AssemblyResult:
        stale = self.freshen()
        return self.assembler.render(request, output, stale)

    @property
    def query_limits(self) -> QueryLimits:
        """How far a user's query may go (settings ``query_timeout``, ``query_memory_mb``): it runs in a
        child process that is stopped when it passes either (:mod:`acms.sparql.runner`)."""
        return QueryLimits(self.settings.query_timeout, self.settings.query_memory_mb)

    def query(self, sparql: str, bindings: Bindings | None = None) -> list[Row]:
        """A SELECT over the index, through the same guard as ``acms sparql`` and ``/sparql``
        (no SERVICE, capped length and nesting), within ``query_limits``."""
        check_query(sparql)
        refuse_update(sparql)
        self.freshen()
        with self.session.reading() as store:
            return store.select(sparql, bindings, limits=self.query_limits)

    def sparql(self, text: str, bindings: Bindings | None = None, *, max_rows: int = DEFAULT_MAX_ROWS,
               allow_service: bool = False, default_graph: DefaultGraph | str = DefaultGraph.CURRENT) -> QueryResult:
        """Any read query (SELECT, ASK, CONSTRUCT, DESCRIBE) through the same guard and with the same
        default graph as ``acms sparql`` (the current tiers unless the query has FROM), at most
        ``max_rows`` rows or triples (``truncated`` says when there were more)."""
        check_query(text, allow_service=allow_service)
        refuse_update(text)
        self.freshen()
        return self._collect(text, bindings, max_rows, **dataset_arguments(text, DefaultGraph(default_graph)))

    def answer(self, text: str, bindings: Bindings | None = None, *, fmt: str = "table", trusted: bool = False,
               allow_service: bool = False, default_graph: DefaultGraph | str = DefaultGraph.CURRENT,
               whole_store: bool = False) -> Answer:
        """A read query's whole answer in ``fmt`` (SPARQL results json/csv/tsv/xml, turtle, ntriples,
        jsonld, or a ``table``'s cells), within ``query_limits``. ``trusted``: shipped with acms (a saved
        query), so the guard on a user's text is skipped; ``whole_store``: every project of a shared store."""
        from acms.service.queries import render

        if not trusted:
            check_query(text, allow_service=allow_service)
        refuse_update(text)
        self.freshen()
        dataset = {"whole_store": True} if whole_store else dataset_arguments(text, DefaultGraph(default_graph))
        with self.session.reading() as store:
            return render(store.query_raw(text, bindings or None, limits=self.query_limits, **dataset), fmt,
                          store.prefixes())

    @staticmethod
    def saved_query(name: str) -> QuerySpec:
        """One saved exploration query by name (a UsageError naming the near ones otherwise)."""
        return catalog.saved(name)

    @staticmethod
    def strategies(dirs: Iterable[Path] = ()) -> list[dict[str, Any]]:
        """The strategies (built-in and those in ``dirs``): quality, needs, phases and their shares."""
        return StrategyRegistry.default(dirs).describe()

    @staticmethod
    def check_query(text: str, *, allow_service: bool = False) -> None:
        """The guard on a user's query (no SERVICE unless allowed, capped length and nesting, no
        update), before any index is opened."""
        check_query(text, allow_service=allow_service)
        refuse_update(text)

    @staticmethod
    def bindings(given: Mapping[str, str]) -> dict[str, Term]:
        """``--bind`` values typed: ``<iri>`` an IRI, an integer xsd:integer, anything else a string."""
        return {name: term_from_text(name, value) for name, value in given.items()}

    @staticmethod
    def prestart() -> None:
        """Start the bounded query runner's process now, while the index opens (``acms sparql``)."""
        from acms.sparql.runner import prestart

        prestart()

    @staticmethod
    def saved_queries() -> list[QuerySpec]:
        """The saved exploration queries (``queries/explore/``), by name."""
        return sorted((s for s in catalog.all_queries().values() if s.folder == "explore"), key=lambda s: s.name)

    def run_saved(self, name: str, bindings: Mapping[str, str | Term] | None = None, *,
                  max_rows: int = DEFAULT_MAX_ROWS) -> QueryResult:
        """A saved exploration query; text values are typed like ``--bind`` (``<iri>``, integer, string)."""
        spec = catalog.saved(name)
        given = dict(bindings or {})
        declared = [p for p, _ in spec.params]
        missing = [p for p in declared if p not in given]
        unknown = sorted(set(given) - set(declared))
        if missing or unknown:
            problem = f"missing: {', '.join(missing)}" if missing else f"unknown: {', '.join(unknown)}"
            raise UsageError(f"saved query {name!r} takes {', '.join(declared) or 'no parameters'}; {problem}")
        terms = {k: term_from_text(k, v) if isinstance(v, str) else v for k, v in given.items()}
        self.freshen()
        if spec.scope == "store":  # across projects, on purpose: a shared store answers for all of them
            return self._collect(spec.text, terms, max_rows, whole_store=True)
        return self._collect(spec.text, terms, max_rows)

    def _collect(self, text: str, bindings: Bindings | None, max_rows: int, **dataset: Any) -> QueryResult:
        with self.session.reading() as store:
            limits = dataclasses.replace(self.query_limits, max_rows=max_rows)
            return collect(store.query_raw(text, bindings or None, limits=limits, **dataset), max_rows)

    def describe(self, entity: str) -> Description:
        """Kind, location, signature, docstring, callers, callees, members and a history summary of one
        entity (a qualified name, a path, ``path::Qualified.name``, a unique short name or an IRI); one
        only the history holds (removed by an edit) has no ``location``."""
        from acms.service.describe import describe  # decisions and validation: only this command's

        self.freshen()
        with self.session.reading() as store:
            return describe(store, entity)

    def history(self, entity: str) -> list[EntityHistory]:
        """Every stored version of the entities ``entity`` names and the commits that touched them."""
        self.freshen()
        with self.session.reading() as store:
            return [entity_history(store, e) for e in resolve(store, entity)]

    def warm(self) -> None:
        """Open the store and load the search caches now, so that the first request is fast too."""
        with self.session.reading() as store:
            caches = self.assembler.searcher(store).caches
            caches.keyword()
            caches.ranking()

    def close(self) -> None:
        """Let go of the store; what the index's last writes moved aside is gone once this returns (a
        refresh removes it in a thread, :mod:`acms.removal`), so the index directory may be copied."""
        self.session.close()
        removals_settled()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: tuple[type[BaseException], BaseException, TracebackType] | Any) -> None:
        self.close()


__all__ = ["Index", "Mode", "endpoint", "project_root", "store_dir"]
