"""The embedded on-disk store: pyoxigraph directly (oxrdflib would cost ~14x on SELECTs, see DESIGN).

Converts pyoxigraph's errors where they are seen: a held lock becomes ``StoreLocked``, a parser
``SyntaxError`` becomes ``QuerySyntaxError``. Every logical change is one pyoxigraph call (``update``,
``extend``, ``bulk_extend``), each of which is all-or-nothing.
"""

from __future__ import annotations

import gc
import shutil
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pyoxigraph as ox
from pyoxigraph import NamedNode, Quad

from acms import resources
from acms.errors import QuerySyntaxError, StoreError, StoreLocked, StoreMissing, query_failed
from acms.sparql.bind import bind
from acms.sparql.functions import QUERY_FUNCTIONS
from acms.sparql.runner import QueryLimits, run_bounded
from acms.store import run_marker, usage
from acms.store.compaction import lower_compaction_threads
from acms.store.lock import DEFAULT_WAIT, lock_for
from acms.store.protocol import Bindings, CustomFunctions, GraphStore, RawResult, Rewrite, Row, Solution, SupportsBulkLoad
from acms.store.results import answer
from acms.terms import Term
from acms.vocab import GRAPH_ONTOLOGY, PREFIXES, RDF, TIER_HOT, TIER_WARM, UKO

Tracer = Callable[[str, float], None]

# quads from which ``replace`` bulk-loads (~0.15 s fixed, ~8 µs a quad) rather than extends (~20 µs a quad)
BULK_FROM = 10_000
_DCT_IDENTIFIER = NamedNode("http://purl.org/dc/terms/identifier")
_VANN_PREFIX = NamedNode("http://purl.org/vocab/vann/preferredNamespacePrefix")
_VANN_URI = NamedNode("http://purl.org/vocab/vann/preferredNamespaceUri")
_CURRENT = (TIER_HOT, TIER_WARM)


class OxigraphStore:
    """A pyoxigraph Store: read-write for the one writer, read-only for any number of readers.

    Opening takes the index's reader/writer lock (:mod:`acms.store.lock`), waiting up to ``wait``
    seconds, and ``close`` releases it, so a reader never reads while another process writes.
    """

    parallel_reads = True  # queries from several threads at once, each without the GIL (acms.store.parallel)

    def __init__(self, path: Path | None, *, tracer: Tracer | None = None, read_only: bool = False,
                 wait: float | None = None, command: str = "") -> None:
        self.path = path
        self.tracer = tracer
        self.read_only = read_only
        self.command = command
        self._prefixes: dict[str, str] | None = None
        self.opened = path  # the directory the handle reads: a reader may read the last run's checkpoint
        self._bracketed = False  # inside atomic(): its checkpoint makes the bracket whole
        self._hold = ExitStack()
        if path is not None:
            lock = lock_for(path.parent)
            wait = DEFAULT_WAIT if wait is None else wait
            self._hold.enter_context(lock.shared(wait) if read_only else lock.exclusive(wait, command))
        try:
            if path is not None and read_only:
                self.opened = run_marker.readable(path)
                self._store = open_handle(self.opened, read_only=True)
                require_index(self._store, path)
            else:
                if path is not None:
                    run_marker.recover(path)  # an index run that did not land: the last complete index back
                self._store = open_handle(path, read_only=read_only)
            if path is not None and not read_only:
                usage.fold(self, path.parent)  # the uses readers logged since the last write
        except BaseException:
            self._hold.close()
            raise

    @classmethod
    def open_existing(cls, path: Path, **kwargs: object) -> OxigraphStore:
        if not path.is_dir() or not any(path.iterdir()):
            raise StoreMissing(f"no index at {path}: run `acms index` first")
        return cls(path, **kwargs)  # type: ignore[arg-type]

    @classmethod
    def attached(cls, raw: ox.Store, path: Path | None, *, read_only: bool = True,
                 opened: Path | None = None) -> OxigraphStore:
        """Wrap a handle whose lock someone else holds (a long-lived reader's, see ``SharedReader``);
        ``opened``: the directory it reads, when not ``path`` (a pending run's checkpoint)."""
        store = cls(None)
        store._store, store.path, store.read_only = raw, path, read_only
        store.opened = opened or path
        return store

    @property
    def raw(self) -> ox.Store:
        """The pyoxigraph store, for the query layer's custom functions and bulk reads."""
        return self._store

    # ------------------------------------------------------------------ queries
    def _run(self, query: str, bindings: Bindings | None, *, limits: QueryLimits | None = None,
             **kwargs: object) -> object:
        text = bind(query, bindings)
        if limits is not None and self.opened is not None and "custom_functions" not in kwargs:
            return self._run_bounded(text, limits, kwargs)
        kwargs["custom_functions"] = {**QUERY_FUNCTIONS, **kwargs.get("custom_functions", {})}  # type: ignore[dict-item]
        start = time.perf_counter()
        try:  # prefixes= rather than PREFIX lines: a syntax error's line:column are those of the caller's text
            return self._store.query(text, prefixes=self.prefixes(), **kwargs)  # type: ignore[arg-type]
        except SyntaxError as exc:
            raise QuerySyntaxError(f"SPARQL syntax error: {exc}") from None
        except (OSError, RuntimeError) as exc:
            raise query_failed(exc) from None
        finally:
            if self.tracer:
                self.tracer(text, time.perf_counter() - start)

    def _run_bounded(self, text: str, limits: QueryLimits, dataset: dict[str, object]) -> object:
        """A user's query in a child process on this index, stopped at ``limits`` (:mod:`acms.sparql.runner`)."""
        assert self.opened is not None
        if not self.read_only:
            self.flush()  # the child opens the files: what this handle wrote must be in them
        start = time.perf_counter()
        try:
            return run_bounded(self.opened, text, prefixes=self.prefixes(), dataset=dataset, limits=limits)
        finally:
            if self.tracer:
                self.tracer(text, time.perf_counter() - start)

    def select(
        self,
        query: str,
        bindings: Bindings | None = None,
        functions: CustomFunctions | None = None,
        *,
        limits: QueryLimits | None = None,
    ) -> list[Row]:
        """``limits``: a user's query, run in a child process that is stopped at them."""
        kwargs: dict[str, object] = {}
        if functions:
            kwargs["custom_functions"] = dict(functions)
        start = time.perf_counter()
        result = self._run(query, bindings, limits=limits, **kwargs)
        if not isinstance(result, ox.QuerySolutions):
            raise QuerySyntaxError("expected a SELECT query")
        names = [v.value for v in result.variables]
        try:
            # a solution iterates its values in the variables' order: 2.5x faster than two lookups by name
            rows = [{n: v for n, v in zip(names, s) if v is not None} for s in result]
        except (OSError, RuntimeError) as exc:
            raise query_failed(exc) from None
        if self.tracer:  # evaluation is lazy: the time that matters includes consuming the rows
            self.tracer(f"(rows consumed) {query[:80]}", time.perf_counter() - start)
        return rows

    def query_raw(self, query: str, bindings: Bindings | None = None, *, limits: QueryLimits | None = None,
                  **kwargs: object) -> RawResult:
        """Any query form, its rows or triples streamed as pyoxigraph evaluates them.
        ``whole_store`` (a cross-project query) changes nothing here: an embedded store holds one project.
        ``limits``: a user's query, run in a child process that is stopped at them (an on-disk index)."""
        kwargs.pop("whole_store", None)
        return answer(self._run(query, bindings, limits=limits, **kwargs))

    def select_stream(self, query: str, bindings: Bindings | None = None) -> Iterator[Solution]:
        """A SELECT's solutions as pyoxigraph evaluates them (``SupportsStreamingSelect``)."""
        result = self._run(query, bindings)
        if not isinstance(result, ox.QuerySolutions):
            raise QuerySyntaxError("expected a SELECT query")
        return result  # type: ignore[return-value]

    def ask(self, query: str, bindings: Bindings | None = None) -> bool:
        result = self._run(query, bindings)
        if not isinstance(result, ox.QueryBoolean):
            raise QuerySyntaxError("expected an ASK query")
        return bool(result)

    def construct(self, query: str, bindings: Bindings | None = None) -> list[Quad]:
        result = self._run(query, bindings)
        if not isinstance(result, ox.QueryTriples):
            raise QuerySyntaxError("expected a CONSTRUCT or DESCRIBE query")
        return [Quad(t.subject, t.predicate, t.object) for t in result]

    # ------------------------------------------------------------------ writes
    @contextmanager
    def atomic(self) -> Iterator[None]:
        """Everything written inside lands whole or not at all: a checkpoint and a pending-run marker
        that readers honour (:mod:`acms.store.run_marker`); an exception rolls back at once."""
        if self.path is None or self.read_only:
            yield
            return
        run_marker.begin(self._store, self.path, self.command)
        self._bracketed = True
        try:
            yield
        except BaseException as exc:
            # a frame of the failure that held the database in a local would keep it open through the
            # roll-back (the checkpoint put back under an open database, the reopen refused as locked):
            # the finished frames let go of their locals first
            traceback.clear_frames(exc.__traceback__)
            self._roll_back()
            raise
        finally:
            self._bracketed = False
        run_marker.commit(self._store, self.path)

    def _roll_back(self) -> None:
        """Close the handle, put the checkpoint back, reopen. If that fails the marker stays: readers
        still read the checkpoint and the next writer restores it."""
        assert self.path is not None
        self.__dict__.pop("_store", None)  # pyoxigraph closes the database when its last reference goes
        gc.collect()  # ... also when a reference cycle held it
        self._prefixes = None
        try:
            run_marker.recover(self.path)
        finally:
            self._store = open_handle(self.path)

    def reopen(self) -> None:
        """Close the database and open it again, before a phase that reads the whole index (the caches):
        RocksDB lets go of what the run's writes and reads left it holding (measured after a standard
        library's first index: 540 -> 364 MB resident; the caches' peak 832 -> 771 MB). The
        same files, so inside ``atomic()`` too; a store in memory or read-only is left as it is."""
        if self.path is None or self.read_only:
            return
        self.flush()
        self.__dict__.pop("_store", None)  # pyoxigraph closes the database when its last reference goes
        self._store = open_handle(self.path)

    @contextmanager
    def lent(self) -> Iterator[Path]:
        """Close the database while another process of this run writes its files (the index lock and
        the run's checkpoint stay with this object), and open it again after, whatever happened:
        a failure inside still rolls back through ``atomic()`` (:mod:`acms.service.indexing.child`)."""
        if not self.can_lend():
            raise StoreError("only an on-disk index open for writing can be lent to another process")
        assert self.path is not None
        self.flush()
        self.__dict__.pop("_store", None)  # pyoxigraph closes the database when its last reference goes
        self._prefixes = None
        try:
            yield self.path
        finally:
            self._store = open_handle(self.path)

    def beside_threads(self) -> bool:
        """Always: see ``SupportsThreads`` (a ``reopen`` is the one call no other thread may be inside)."""
        return True

    def can_lend(self) -> bool:
        """Whether ``lent`` may run: an on-disk index open for writing."""
        return self.path is not None and not self.read_only

    def can_start_over(self) -> bool:
        """Whether ``start_over`` may run: a writer on disk inside ``atomic()`` (a checkpoint to keep)."""
        return self.path is not None and not self.read_only and run_marker.pending(self.path)

    def start_over(self) -> OxigraphStore:
        """Inside ``atomic()``: an empty index in place of this one, and a read-only store on the
        checkpoint (the index as the run found it) to read the old one from. For a run that rewrites
        every file (:mod:`acms.service.indexing.reindex`): nothing to delete quad by quad. An error or a
        crash afterwards rolls back to the checkpoint like any other failed run."""
        if not self.can_start_over():
            raise StoreError("an index can only start over inside an index run (atomic())")
        assert self.path is not None
        old = open_handle(run_marker.checkpoint_of(self.path), read_only=True)
        self.flush()
        self.__dict__.pop("_store", None)  # closed when its last reference goes
        self._prefixes = None
        try:
            shutil.rmtree(self.path)
        except OSError as exc:
            raise StoreError(f"cannot clear the index for the re-index: {exc}") from None
        self._store = open_handle(self.path)
        return OxigraphStore.attached(old, None)

    def update(self, update: str, bindings: Bindings | None = None) -> None:
        text = bind(update, bindings)
        prefixes = self.prefixes()
        self._prefixes = None  # the update may have changed the ontology graph
        start = time.perf_counter()
        try:
            self._store.update(text, prefixes=prefixes)
        except SyntaxError as exc:
            raise QuerySyntaxError(f"SPARQL update syntax error: {exc}") from None
        except (OSError, RuntimeError) as exc:
            raise StoreError(f"update failed: {exc}") from None
        finally:
            if self.tracer:
                self.tracer(text, time.perf_counter() - start)

    def load(self, quads: Iterable[Quad], *, bulk: bool = False) -> int:
        batch = list(quads)
        try:
            (self._store.bulk_extend if bulk else self._store.extend)(batch)
            self._prefixes = None
        except OSError as exc:
            raise StoreError(f"write failed: {exc}") from None
        return len(batch)

    def load_nquads(self, data: bytes) -> None:
        """Bulk-load N-Quads text (a streamed first index's group): Oxigraph parses it, no Python
        object per quad; all-or-nothing like ``load(bulk=True)``. Parsed leniently (IRIs not checked
        again, ~25 % faster): the text is acms' own emission, whose terms were built as pyoxigraph terms."""
        try:
            self._store.bulk_load(data, format=ox.RdfFormat.N_QUADS, lenient=True)
            self._prefixes = None
        except (OSError, SyntaxError) as exc:
            raise StoreError(f"write failed: {exc}") from None

    def drop_graph(self, graph: NamedNode) -> None:
        """Remove a named graph, its name included (one transaction)."""
        try:
            self._store.remove_graph(graph)
        except OSError as exc:
            raise StoreError(f"write failed: {exc}") from None

    def replace(self, deletes: Sequence[tuple[str, Bindings | None]], quads: Sequence[Quad]) -> None:
        """Run the deletes and insert ``quads`` in ONE update request: one transaction (measured atomic).
        Inside ``atomic()`` (whose checkpoint makes the whole bracket land or not) the quads are bulk-loaded
        after the deletes, not sent as SPARQL text: a 300-file change's INSERT DATA took minutes to parse
        and gigabytes to hold."""
        parts = [bind(text, bindings) for text, bindings in deletes]
        if quads and self._bracketed:
            if parts:
                self.update(" ;\n".join(parts))
            try:  # 252k quads of a 300-file change: 2.1 s, against 5.6 s through extend; a bulk load costs
                # ~0.15 s whatever its size, where one file's few thousand quads go through extend in ~10 ms
                (self._store.bulk_extend if len(quads) >= BULK_FROM else self._store.extend)(quads)
            except OSError as exc:
                raise StoreError(f"write failed: {exc}") from None
            return
        if quads:
            parts.append(insert_data(quads))
        if parts:
            self.update(" ;\n".join(parts))

    def rewrite_files(self, before: Sequence[tuple[str, Bindings | None]], files: Sequence[NamedNode],
                      after: Sequence[tuple[str, Bindings | None]], quads: Sequence[Quad],
                      old: Iterable[Quad] | None = None) -> Rewrite | None:
        """``replace`` with the files' deletes (``ingest/delete-file-contents.ru``, ``delete-files.ru``)
        between ``before`` and ``after``, written as a diff (``SupportsFileRewrite``): the files' old quads
        (each node's in the current tiers, each thing ``uko:inFile`` them in its graph) that ``quads`` lacks
        are removed one by one, and only the quads not already there are inserted. A 300-file branch
        switch kept ~150k of ~250k quads: its SPARQL delete read and removed all 245k (4.5-10 s),
        then the load wrote them back. Inside ``atomic()`` only (its checkpoint makes the many calls one
        landing); elsewhere the one-update ``replace``, and None. ``old``: ``file_quads(files)`` as read
        earlier in the run (the versions take the old texts from it), when nothing wrote them since.
        ``after``: deletes that take only quads with one of their bound terms as subject or object (an
        update without bindings: any quad), so only the kept quads with such a term are looked for again."""
        if not self._bracketed:
            from acms.sparql import catalog  # the catalog reads assets; keep it off the import path

            bound: Bindings = {"file": list(files)}
            middle = [(catalog.text("ingest/delete-file-contents.ru"), bound),
                      (catalog.text("ingest/delete-files.ru"), bound)] if files else []
            self.replace([*before, *middle, *after], quads)
            return None
        if before:
            self.update(" ;\n".join(bind(text, b) for text, b in before))
        # No local name for the handle here: a failure's traceback would keep the database open while
        # atomic() rolls back, and the reopen would find it locked.
        # The batch as a dict that keeps its order (the inserts' below), hashed once; a quad's value turns
        # True when the old quads hold it too. A pyoxigraph quad hashes its terms on every call (the fragment
        # texts' too: ~0.35 µs a quad of a 300-file switch), and each term read from it is a new object: the
        # loops below hash and read as little as they can (a second set of the kept quads, and a test of every
        # new quad's predicate for the fragments written again, cost ~0.5 s of a switch).
        new: dict[Quad, bool] = dict.fromkeys(quads, False)
        vector, fragment, a = UKO.vector, UKO.Fragment, RDF.type
        removed = kept = 0
        vectors_kept: set[str] = set()
        try:
            for quad in self.file_quads(files) if old is None else old:
                if quad in new:
                    new[quad] = True
                    kept += 1
                # A fragment the batch writes again under its IRI, in the same graph, has the same text (its
                # IRI holds the text's hash): its vector, of the index's one model, is what embedding it
                # again would give, so it stays (a one-line edit re-embedded every fragment of its file).
                elif quad.predicate == vector and Quad(quad.subject, a, fragment, quad.graph_name) in new:
                    vectors_kept.add(quad.subject.value)
                else:
                    self._store.remove(quad)
                    removed += 1
            adds = [q for q, there in new.items() if not there]
            if after:  # they may take some of the kept quads (an edge to a vanished entity): those come back
                watched = _bound_terms(after)  # None: any kept quad may have been taken
                # the kept quads with a watched term, found from the terms (a test of every kept quad's
                # subject and object cost ~0.8 s of a 300-file switch, for a few hundred terms)
                at_risk = [q for q, there in new.items() if there] if watched is None else list(dict.fromkeys(
                    q for term in watched for q in self._touching(term) if new.get(q)))
                self.update(" ;\n".join(bind(text, b) for text, b in after))
                adds += [q for q in at_risk if q not in self._store]
            (self._store.bulk_extend if len(adds) >= BULK_FROM else self._store.extend)(adds)
        except OSError as exc:
            raise StoreError(f"write failed: {exc}") from None
        self._prefixes = None
        return Rewrite(removed, len(adds), kept, frozenset(vectors_kept))

    def _touching(self, term: object) -> list[Quad]:
        """The quads with ``term`` as subject or object."""
        subject = list(self._store.quads_for_pattern(term, None, None, None)) \
            if isinstance(term, (ox.NamedNode, ox.BlankNode)) else []
        return subject + list(self._store.quads_for_pattern(None, None, term, None))  # type: ignore[arg-type]

    def file_quads(self, files: Sequence[NamedNode]) -> list[Quad]:
        """The quads the files' deletes match (``rewrite_files``), read whole: quad patterns, not a SELECT
        (a 300-file switch's 249k quads: 3.0 s, against 4.4 s for the same rows through SPARQL)."""
        out: list[Quad] = []
        seen: set[tuple[NamedNode, object]] = set()
        for file in files:
            for graph in _CURRENT:
                if (file, graph) not in seen:
                    seen.add((file, graph))
                    out += self._store.quads_for_pattern(file, None, None, graph)
            for link in list(self._store.quads_for_pattern(None, UKO.inFile, file, None)):
                key = (link.subject, link.graph_name)
                if key not in seen:
                    seen.add(key)
                    out += self._store.quads_for_pattern(link.subject, None, None, link.graph_name)
        return out

    def prefixes(self) -> dict[str, str]:
        """The prefixes predeclared for every query: the standard ones plus those of the extensions loaded
        in the ontology graph (``api:`` once web-api is added); a query's own PREFIX declarations win."""
        if self._prefixes is None:
            extra: dict[str, str] = {}
            for q in self._store.quads_for_pattern(None, _DCT_IDENTIFIER, None, GRAPH_ONTOLOGY):
                prefix = next(self._store.quads_for_pattern(q.subject, _VANN_PREFIX, None, GRAPH_ONTOLOGY), None)
                ns = next(self._store.quads_for_pattern(q.subject, _VANN_URI, None, GRAPH_ONTOLOGY), None)
                if prefix is not None and ns is not None and prefix.object.value not in PREFIXES:
                    extra[prefix.object.value] = ns.object.value
            self._prefixes = {**extra, **PREFIXES}
        return self._prefixes

    def ensure_ontology(self, extensions: Sequence[Quad] | None = None) -> bool:
        """Make the ontology graph hold UKO plus the configured extensions' quads; True when (re)loaded.

        ``extensions=None`` (callers that do not know the project's extensions) only loads UKO into an
        empty graph. A list makes the graph exactly UKO + those quads, replacing it in one transaction
        when it differs (a newer UKO, an extension added, changed or removed).
        """
        current = set(self._store.quads_for_pattern(None, None, None, GRAPH_ONTOLOGY))
        if extensions is None:
            if current:
                return False
            self._store.extend(ontology_quads())
            self._prefixes = None
            return True
        desired = ontology_quads(extensions)
        if current == set(desired):
            return False
        self.update(f"DROP SILENT GRAPH {GRAPH_ONTOLOGY} ;\n" + insert_data(desired))
        return True

    def quads(self, graph: NamedNode | ox.DefaultGraph | None = None, predicate: NamedNode | None = None,
              obj: Term | None = None) -> Iterator[Quad]:
        try:
            yield from self._store.quads_for_pattern(None, predicate, obj, graph)  # type: ignore[arg-type]
        except (OSError, RuntimeError) as exc:
            raise StoreError(f"read failed: {exc}") from None

    def named_graphs(self) -> Iterator[NamedNode]:
        yield from self._store.named_graphs()  # type: ignore[misc]

    def has_graph(self, graph: NamedNode) -> bool:
        return bool(self._store.contains_named_graph(graph))

    def count(self, graph: NamedNode | None = None) -> int:
        if graph is None:
            return len(self._store)
        from acms.sparql import catalog  # the catalog reads assets; keep it off the import path

        rows = self.select(catalog.text("stats/graph-size"), {"g": graph})
        return int(rows[0]["n"].value)

    def size_bytes(self) -> int:
        if self.path is None:
            return 0
        return sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file())

    def flush(self) -> None:
        self._store.flush()

    def compact(self) -> None:
        """RocksDB's full compaction (``Store.optimize``, "useful after a batch upload"). After a streamed
        re-index of the standard library (1.2-2.0 s here) a whole ``acms assemble`` took 0.52 instead of
        0.65 s and a 300-file switch 10.1 instead of 10.8 s; after a first index, 0.53 against 0.55 s."""
        try:
            self._store.optimize()
        except OSError as exc:
            raise StoreError(f"compaction failed: {exc}") from None

    def close(self) -> None:
        try:
            if not self.read_only and hasattr(self, "_store"):  # a failed roll-back leaves no handle
                self._store.flush()
        finally:
            self.__dict__.pop("_store", None)
            self._hold.close()


def _bound_terms(updates: Sequence[tuple[str, Bindings | None]]) -> set[object] | None:
    """The terms bound in ``updates`` (each a delete whose quads have one of them as subject or object, as
    ``ingest/delete-incoming.ru``'s and a bound ``delete-tree.ru``'s), or None when one has no bindings (it
    may take any quad): which kept quads ``rewrite_files`` must look for again after them. Asking the store
    for every kept one cost ~0.7 s of a 300-file switch (197k quads)."""
    terms: set[object] = set()
    for _, bindings in updates:
        if not bindings:
            return None
        for value in bindings.values():
            if isinstance(value, (list, tuple)):
                for item in value:
                    terms.update(item if isinstance(item, tuple) else (item,))
            else:
                terms.add(value)
    return terms


def in_memory() -> OxigraphStore:
    """A scratch store in memory: a staging area for rules and checks, never locked, never on disk."""
    return OxigraphStore(None)


def open_handle(path: Path | None, *, read_only: bool = False) -> ox.Store:
    """A raw pyoxigraph handle, errors mapped; the caller holds the index lock (see :mod:`acms.store.lock`)."""
    try:
        if path is None:
            return ox.Store()
        if read_only:
            return ox.Store.read_only(str(path))
        path.mkdir(parents=True, exist_ok=True)
        store = ox.Store(str(path))
        prune_info_logs(path)
        lower_compaction_threads()
        return store
    except OSError as exc:
        if "LOCK" in str(exc) or "temporarily unavailable" in str(exc):
            raise StoreLocked(
                f"the index at {path} is in use by another writer (a process that does not take acms's "
                "lock); wait for it to finish"
            ) from None
        raise StoreError(f"cannot open the index at {path}: {exc}") from None


def prune_info_logs(path: Path) -> None:
    """Delete RocksDB's rolled-over info logs (``LOG.old.<time>``, ~140 KB each): every read-write open
    rolls ``LOG`` over and pyoxigraph cannot set ``keep_log_file_num``, so they would pile up beside the
    store. RocksDB never reads them; the current ``LOG`` stays for whoever debugs the store."""
    for old in path.glob("LOG.old.*"):
        old.unlink(missing_ok=True)


def require_index(raw: ox.Store, path: Path) -> None:
    """A reader's check: a store without a single quad holds no index (a first ``acms index`` that did not
    finish was rolled back to it), so searches and contexts would answer as if the project were empty."""
    if next(iter(raw.quads_for_pattern(None, None, None, None)), None) is None:
        raise StoreMissing(f"no index at {path}: the first `acms index` here did not finish; run it again")


def load_nquads(store: GraphStore, data: bytes) -> None:
    """Bulk-load N-Quads text (acms' own emission): parsed by a store that can (``SupportsBulkLoad``),
    or parsed here for any other."""
    if isinstance(store, SupportsBulkLoad):
        store.load_nquads(data)
    else:
        store.load(ox.parse(data, format=ox.RdfFormat.N_QUADS), bulk=True)


def insert_data(quads: Sequence[Quad]) -> str:
    """INSERT DATA text for quads, grouped by graph, serialised by pyoxigraph itself."""
    by_graph: dict[str, list[str]] = {}
    for q in quads:
        key = str(q.graph_name) if isinstance(q.graph_name, NamedNode) else ""
        by_graph.setdefault(key, []).append(f"{q.subject} {q.predicate} {q.object} .")
    blocks = []
    for graph, triples in by_graph.items():
        body = "\n".join(triples)
        blocks.append(f"GRAPH {graph} {{\n{body}\n}}" if graph else body)
    return "INSERT DATA {\n" + "\n".join(blocks) + "\n}"


def ontology_quads(extensions: Iterable[Quad] = ()) -> list[Quad]:
    """UKO parsed by pyoxigraph into the ontology graph, plus the given extension quads.

    Blank nodes become stable IRIs (in file order) so that the graph can be compared with what it
    should hold: a parse mints fresh blank node ids every time.
    """
    text = resources.read_text("ontology", "uko.ttl")
    skolem: dict[str, NamedNode] = {}

    def sk(term: ox.NamedNode | ox.BlankNode | ox.Literal) -> ox.NamedNode | ox.Literal:
        if isinstance(term, ox.BlankNode):
            return skolem.setdefault(term.value, NamedNode(f"https://w3id.org/acms/uko-genid/{len(skolem)}"))
        return term

    quads = [
        Quad(sk(t.subject), t.predicate, sk(t.object), GRAPH_ONTOLOGY)  # type: ignore[arg-type]
        for t in ox.parse(text, format=ox.RdfFormat.TURTLE)
    ]
    return list(dict.fromkeys(quads + [Quad(q.subject, q.predicate, q.object, GRAPH_ONTOLOGY) for q in extensions]))
