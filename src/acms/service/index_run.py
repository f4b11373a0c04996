"""The index run: list → read → diff → parse → emit → rules → versions → validate → store,
then history, tiers, the secrets policy, embeddings and caches; one object (``IndexRun``) carries the
settings, the IRI minter, the timings, the progress reporter and the transaction plan.

A run lands whole or not at all. The files' batch (the replaced files' old triples out, the new ones
in, the directory tree, the IndexRun record) is one store transaction, written only after the batch
passed validation; history, tiers, the secrets policy and the vectors follow as their own writes. All
of it runs inside ``store.atomic()``: the embedded store takes a checkpoint of the index first and a
pending-run marker that readers honour (they read the checkpoint while it exists), and the next
writer puts the checkpoint back (see :mod:`acms.store.run_marker`). So a crash or an error in any
phase, ``kill -9`` included, leaves the previous complete index, for readers at once and for the
store itself at the next write. A first index, and a run that redoes every file (an ontology or
extractor migration), are not one transaction but stream group by group inside the same bracket
(:mod:`acms.service.index_stream`, :mod:`acms.service.index_reindex`), unless an extension has rules.

Incremental and idempotent: a file whose content hash is already stored is not touched; an unchanged
project writes no file triples. One odd file never blocks a project: a file that vanishes or keeps
changing while it is read is skipped with its reason, and a file whose triples violate the shapes is
quarantined (``IndexReport.quarantined``): left out, with the rest of the batch written.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pyoxigraph import NamedNode, Quad

from acms import __version__
from acms.config import Settings
from acms.decisions.ingest import adr_batch
from acms.errors import ProviderError
from acms.index.scratch import sweep
from acms.ingest import emit
from acms.ingest.fragments import FragmentSpec
from acms.ingest.model import Extraction, SourceFile
from acms.ingest.pipeline import entities_of, extract_all, git_head, read_sources, vanished
from acms.ingest.resolve import resolve_edges
from acms.ingest.version import extractor_version
from acms.ingest.relink import mentioning, moved_names
from acms.ingest.symbols import SymbolRows, entity_rows
from acms.ingest.walker import Listing, escape_path, list_files
from acms.memory import collect_if_busy, collecting_rarely, release_freed, young_collections
from acms.ontology import extensions as ontology_extensions
from acms.ontology import rules as ontology_rules
from acms.ontology.versioning import Migration, uko_version
from acms.ingest.attributes import marks_for
from acms.ingest.copies import mark_copies
from acms.ontology.versioning import plan as plan_migration
from acms.privacy.at_rest import apply_policy
from acms.retrieval.caches import BUILD_STEPS as CACHE_STEPS
from acms.retrieval.caches import CacheDelta, DerivedCaches
from acms.retrieval import embedding_ahead
from acms.retrieval.corpus_spill import beside, read_texts, remove_spills, spill_path
from acms.retrieval.embedding_store import active_model, embed_missing, prune_kept_models, remove_staged_models
from acms.service.freshness import Staleness, last_run, manifest_after_run, stored_hashes, walk_settings
from acms.service.identity import project_name
from acms.service.progress import NullProgress, Progress
from acms.sparql import catalog
from acms.store.layout import IndexLayout
from acms.store.oxigraph import ontology_quads
from acms.store.protocol import Bindings, GraphStore
from acms.temporal import git_history, tiers, versions
from acms.validation.batch import check_batch, describe, quarantine_warning, rejection, split_by_file
from acms.vocab import GRAPH_META, GRAPH_ONTOLOGY, PROV, TIER_WARM, UKO, IriMinter

__all__ = ["IndexReport", "IndexRun", "index_project"]



@dataclass
class IndexReport:
    root: str
    files_listed: int = 0
    files_indexed: int = 0
    files_unchanged: int = 0
    files_removed: int = 0
    files_relinked: int = 0  # unchanged files linked again: a name they mention was added, removed or moved
    changed_paths: list[str] = field(default_factory=list)  # the files re-indexed or removed (an incremental run)
    entities: int = 0
    fragments: int = 0
    triples_written: int = 0
    skipped: dict[str, list[str]] = field(default_factory=dict)
    parse_errors: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    used_git: bool = False
    up_to_date: bool = False
    embedded: int = 0
    embedding_model: str = ""
    warnings: list[str] = field(default_factory=list)
    versions_archived: int = 0
    hot_entities: int = 0
    history: git_history.HistoryReport | None = None
    ontology: list[str] = field(default_factory=list)  # ontology migrations and extension changes
    derived: int = 0  # triples added by extension rules
    secrets_removed: dict[str, dict[str, int]] = field(default_factory=dict)  # path -> kind -> count (read now)
    texts_rescrubbed: int = 0  # stored texts (history too) rewritten because the secrets policy changed
    first_run: bool = False  # nothing was stored before this run
    # Files that failed the shapes: not written (an older stored version is removed); path -> the
    # first violation's focus node, shape and message.
    quarantined: dict[str, str] = field(default_factory=dict)
    copies: int = 0  # files recorded as near-identical copies of another (uko:copyOf)

    def skipped_counts(self) -> dict[str, int]:
        return {reason: len(paths) for reason, paths in sorted(self.skipped.items())}


@dataclass
class Plan:
    """The files' transaction: what the run deletes (update text and bindings) and what it inserts."""

    deletes: list[tuple[str, Bindings | None]]
    quads: list[Quad]
    new_iris: dict[str, NamedNode]
    replaced_files: list[NamedNode]
    archived: versions.Archive
    derived: list[Quad]  # what the extension rules added (part of ``quads``)


class IndexRun:
    """One run of ``acms index`` over one store (held for writing by the caller)."""

    def __init__(self, root: Path, store: GraphStore, settings: Settings, layout: IndexLayout | None = None, *,
                 history: int = 0, progress: Progress | None = None, looked: Staleness | None = None) -> None:
        """``looked``: a look at the files just before (:mod:`acms.service.freshness`, a live refresh):
        its listing is the run's and the files it found unchanged are not read again."""
        self.root = root.resolve()
        self.looked = looked
        self.listing: Listing | None = None
        self.hashes: dict[str, str] = {}  # path -> content hash of every file the graph holds after the run
        self.listed_ns = 0
        self._stored_symbols: SymbolRows | None = None  # the symbol table before the run (cache or store)
        self.symbols: SymbolRows | None = None  # ... and after it, left for the next run
        self.store, self.settings, self.layout, self.history = store, settings, layout, history
        self.progress: Progress = progress or NullProgress()
        self.adopt(datetime.now(UTC), IndexReport(root=str(self.root)), None)
        self.minter = IriMinter(project_name(self.root, settings))
        self.extensions = ontology_extensions.configured(settings.extensions, self.root)
        self.full_ontology = ontology_quads(ontology_extensions.ontology_quads(self.extensions))
        # A streamed first index's corpus rows, for the caches' build (:mod:`acms.retrieval.corpus_spill`)
        self.corpus_spill: Path | None = None
        # What this run changed, for updating the derived caches rather than building them again
        self.cache_delta: CacheDelta | None = None
        self._spill_whole = False  # it will hold every searchable fragment: the store had none before
        self._tiers_moved = False
        self._t0 = time.perf_counter()

    def adopt(self, started: datetime, report: IndexReport, head: str | None) -> None:
        """Continue another process's run (:mod:`acms.service.index_child`): its start time (so the
        IRIs and times it mints are the run's), its report so far and the git HEAD it indexes."""
        self.started = started
        self.generated_at = started.isoformat().replace("+00:00", "Z")
        self.stamp = started.strftime("%Y%m%dT%H%M%S%fZ")  # the suffix of this run's IRIs
        self.report = report
        self.head = head  # the git HEAD the run indexed, recorded on its IndexRun

    @contextmanager
    def phase(self, name: str, total: int | None = None) -> Iterator[None]:
        self.progress.start(name, total)
        young = young_collections()
        with self.timed(name):
            yield
            collect_if_busy(young)  # a heavy phase's cycles (the collector runs rarely in an index)
            release_freed()  # the next phase starts from what this one keeps, not from its peak
        self.progress.finish(name)

    def update(self, done: int, total: int | None = None) -> None:
        self.progress.update(done, total)

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        """Add the time spent inside to the phase ``name`` (a streamed run enters each phase per group)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            timings = self.report.timings
            timings[name] = timings.get(name, 0.0) + time.perf_counter() - start

    # -- the run ----------------------------------------------------------------------------------
    def run(self) -> IndexReport:
        if self.layout is not None:  # a spill, a staged model, a cache half built that a killed run left
            remove_spills(self.layout.cache)
            remove_staged_models(self.layout.cache)
            prune_kept_models(self.store, self.layout)
            sweep(self.layout.cache)
        try:
            with collecting_rarely(), self.store.atomic():
                self._files()
                self._after_files()
        finally:
            if self.corpus_spill is not None:
                remove_spills(self.corpus_spill.parent)
        self._leave_manifest()
        self.report.seconds = time.perf_counter() - self._t0
        return self.report

    def _leave_manifest(self) -> None:
        """What the next look at the files compares them with (written after the run landed: a run
        killed before leaves the previous manifest, whose state is then not the store's, so not trusted)."""
        if self.layout is None or self.listing is None:
            return
        hashes = self.hashes or stored_hashes(self.store)  # a streamed run read its files in workers
        run = last_run(self.store)
        manifest_after_run(run, self.listing, self.listed_ns, hashes, self.settings.store_secrets).save(self.layout.cache)
        if self.symbols is not None:
            SymbolRows(run, self.symbols.rows).save(self.layout.cache)

    def _files(self) -> None:
        """The files' transaction (nothing when nothing changed, or every changed file is quarantined)."""
        report, store, settings = self.report, self.store, self.settings
        migration = plan_migration(store, self.full_ontology)
        self._extraction_changed(migration)
        if not migration:  # a new index, or nothing changed: (re)loading here mixes nothing
            store.ensure_ontology(ontology_extensions.ontology_quads(self.extensions))
        report.ontology = list(migration.reasons)

        with self.phase("listing"):
            if self.looked is not None:
                listing, self.listed_ns = self.looked.listing, self.looked.listed_ns
            else:
                self.listed_ns = time.time_ns()
                listing = list_files(self.root, walk_settings(settings))
            self.listing = listing
            report.used_git = listing.used_git
            report.skipped = {r.value: list(p) for r, p in listing.skipped.items() if p}
        self.head = git_head(self.root) if listing.used_git else None
        if self._streams(migration):
            from acms.service.index_child import separate, stream_in_child
            from acms.service.index_stream import stream_first_index

            reindex = None
            if migration.reindex:  # every file is redone: the old index is cleared group by group
                from acms.service.index_reindex import StreamedReindex

                reindex = StreamedReindex(self)
            elif self.layout is not None:  # the caches' build reads the files' corpus rows from a spill
                self.corpus_spill = spill_path(self.layout.cache, self.stamp)
                self._spill_whole = not self.store.ask(catalog.text("index/any-searchable-fragment"))
            if reindex is None and separate(self, listing):
                stream_in_child(self, listing)  # the later phases then start from a heap that never held the files
            else:
                stream_first_index(self, listing, reindex)
            return
        stored = {
            str(r["path"].value): (r["file"], str(r["hash"].value))
            for r in store.select(catalog.text("ingest/stored-files"))
        }
        with self.phase("reading", len(listing.files)):
            # A file whose content hash is stored is not scrubbed and its text not kept (scrubbing
            # every file made an unchanged re-index of the standard library 10 s); unless every file is redone.
            known = None if migration.reindex else {path: digest for path, (_, digest) in stored.items()}
            trusted = None if migration.reindex or self.looked is None else {
                path: digest for path, digest in self.looked.unchanged.items() if known and known.get(path) == digest}
            sources = read_sources(listing, report.skipped, report.secrets_removed, settings.max_file_bytes,
                                   settings.store_secrets, self.progress.update, unchanged=known, trusted=trusted)
            report.files_listed = len(sources)
            self.hashes = {s.path: s.sha256 for s in sources}

        with self.phase("diff"):
            changed = [s for s in sources if stored.get(s.path, (None, ""))[1] != s.sha256]
            report.first_run = not stored
            if migration.reindex:  # the ontology changed: rebuild every file's triples under the new one
                changed = list(sources)
            current = {s.path for s in sources}
            removed = sorted(p for p in stored if p not in current)
            report.files_unchanged = len(sources) - len(changed)
            report.files_removed = len(removed)
            if stored:
                report.changed_paths = sorted({*(s.path for s in changed), *removed})
        if not changed and not removed:
            report.up_to_date = True
            return

        all_paths = {s.path for s in sources}
        extractions: dict[str, Extraction] = {}
        specs: dict[str, list[FragmentSpec]] = {}
        with self.phase("parsing", len(changed)):
            self._extract(changed, all_paths, extractions, specs)
        if stored and not migration.reindex:
            again, gone = self._relink(changed, removed, stored, listing, all_paths, extractions, specs)
            changed += again
            if gone:  # relink candidates that vanished or turned odd since the look: out, as any skipped file
                removed = sorted({*removed, *gone})
                current -= set(gone)
                for path in gone:
                    self.hashes.pop(path, None)
                report.files_removed = len(removed)
            report.changed_paths = sorted({*report.changed_paths, *(s.path for s in again), *gone})

        with self.phase("emitting", len(changed)):
            emitted: dict[str, emit.FileBatch] = {}
            for i, source in enumerate(changed):
                emitted[source.path] = emit.emit_file(
                    self.minter, source, extractions.get(source.path), specs[source.path], TIER_WARM,
                    self.generated_at, secrets=report.secrets_removed.get(source.path),
                )
                self.progress.update(i + 1)
        checks = list(ontology_rules.all_checks(self.extensions)) if self.extensions else None

        # Validate the whole batch; on failure blame the files the violations' focus nodes belong to,
        # quarantine them (not written; a stored older version goes, as for a skipped file) and rebuild the
        # cross-file parts (edges, tree, decisions, rules, versions) without them. Each round drops at least
        # one file. Still all-or-nothing: a violation no changed file can be blamed for (the tree, an archived
        # version), or one the extension rules' derived triples cause (a broken extension, not an odd file).
        while True:
            plan = self._plan(changed, removed, current, stored, emitted, extractions, all_paths, migration)
            with self.phase("validation", len(plan.quads)):
                violations = check_batch(store, plan.quads, checks)
                if violations and plan.derived:
                    derived = set(plan.derived)
                    own = check_batch(store, [q for q in plan.quads if q not in derived], checks)
                    if set(violations) - set(own):
                        raise rejection(sorted(set(violations) - set(own), key=violations.index), plan.quads)
                self.progress.update(len(plan.quads))
            if not violations:
                break
            split = split_by_file(violations, plan.quads, {s.path for s in changed})
            if split.unattributed or not split.by_file:
                raise rejection(violations, plan.quads)
            for path, found in sorted(split.by_file.items()):
                report.quarantined[path] = describe(found)
                report.parse_errors.pop(path, None)
            changed = [s for s in changed if s.path not in split.by_file]
            current -= split.by_file.keys()
            removed = sorted(set(removed) | {p for p in split.by_file if p in stored})
            names = sorted(split.by_file)
            report.warnings.append(quarantine_warning(names))
            if not changed and not removed:  # nothing left to write: the store stays as it is
                report.files_indexed = report.entities = report.fragments = report.derived = 0
                report.versions_archived = 0
                report.up_to_date = True
                return

        report.triples_written = len(plan.quads)
        if self.layout is not None and not migration:  # the caches follow: only these files' rows are read again
            before = DerivedCaches(store, self.layout)
            touched = {f.value for f in plan.replaced_files} | {self.minter.file(s.path).value for s in changed}
            self.cache_delta = CacheDelta(before.text_key, before.state_key, frozenset(touched))
        run_quads = self.index_run_quads()
        with self.phase("store", 1):
            if not stored and not migration:
                store.load(plan.quads + run_quads, bulk=True)
            else:
                reload = self.full_ontology if migration else []  # the new ontology goes in with the files
                store.replace(plan.deletes, plan.quads + run_quads + reload)
            store.flush()
            self.progress.update(1)

    def _after_files(self) -> None:
        """After the files: commits (when asked), the tier policy, the secrets policy, vectors, caches."""
        report, store, settings = self.report, self.store, self.settings
        if self.history > 0:
            with self.phase("history"):
                report.history = git_history.ingest(store, self.root, self.minter, self.history,
                                                    lambda _phase, done, total: self.progress.update(done, total),
                                                    keep_secrets=settings.store_secrets)
        with self.phase("copies"):  # every run, so a refresh keeps them right (acms.ingest.copies)
            listed = {f.path: self.minter.file(f.path) for f in self.listing.files} if self.listing is not None else {}
            report.copies = mark_copies(store, listed, marks_for(self.root, list(listed))).copies
        with self.phase("tiers"):
            rebalanced = tiers.rebalance(store, tiers.Policy.of(settings))
            report.hot_entities, self._tiers_moved = rebalanced.hot_entities, bool(rebalanced.promoted + rebalanced.demoted)
        with self.phase("secrets"):
            report.texts_rescrubbed = apply_policy(store, settings.store_secrets, fresh=report.first_run)
        if self.layout is None:
            return
        # The keyword and ranking caches before the embeddings (they do not depend on them): after a
        # files' phase in a child process this heap is still clean, and the caches' build is the
        # run's largest. A first index's embedding is made meanwhile in a worker.
        ahead = self._embedding_ahead() if settings.embed_on_index else None
        try:
            with self.phase("caches", CACHE_STEPS):
                self._warm_caches(self.layout)
            if settings.embed_on_index:  # phases of its own: fitting (a new model), embeddings
                self._let_go()
                self._embed(self.layout, ahead)
        finally:
            if ahead is not None:
                ahead.close()
        with self.phase("vectors", 1):
            self._warm_vectors(self.layout)

    def _symbols_before(self) -> SymbolRows:
        """The project's symbol table as the run found it: the one the last run left, else the store's."""
        if self._stored_symbols is None:
            run = last_run(self.store)
            cached = SymbolRows.load(self.layout.cache, run) if self.layout is not None else None
            self._stored_symbols = cached or SymbolRows.from_store(self.store, run)
        return self._stored_symbols

    def _extract(self, sources: list[SourceFile], all_paths: set[str], extractions: dict[str, Extraction],
                 specs: dict[str, list[FragmentSpec]]) -> None:
        for i, (source, (ext, frags)) in enumerate(zip(sources, extract_all(sources, all_paths, self.settings.window_lines))):
            if ext is not None:
                extractions[source.path] = ext
                if ext.parse_error:
                    self.report.parse_errors[source.path] = ext.parse_error
            specs[source.path] = frags
            self.progress.update(i + 1)

    def _relink(self, changed: list[SourceFile], removed: list[str], stored: dict[str, tuple[NamedNode, str]],
                listing: Listing, all_paths: set[str], extractions: dict[str, Extraction],
                specs: dict[str, list[FragmentSpec]]) -> tuple[list[SourceFile], list[str]]:
        """The unchanged files that mention a name this run adds, removes or moves (:mod:`acms.ingest.relink`),
        read and extracted again so that their links are what a first index would make; and those of them
        that vanished or turned odd since the look (skipped with their reason: the run removes them).

        A file read here may have been saved since the look: then its own names may have moved too, and
        the files that mention those are read as well, until no name moves."""
        redo = {s.path for s in changed} | set(removed)  # read (or found gone) already
        again: list[SourceFile] = []
        gone: list[str] = []
        moved_from = [s.path for s in changed] + removed  # files whose defined names may have moved
        with self.phase("relinking"):
            while moved_from:
                replaced = [stored[p][0] for p in moved_from if p in stored]
                before = {str(r["qn"].value) for r in self.store.select(catalog.text("ingest/symbols-of-files"),
                                                                        {"file": replaced})} if replaced else set()
                after = {s.qualname for p in moved_from if p in extractions for s in extractions[p].symbols}
                names = moved_names(before, after)
                if not names:
                    break
                candidates = [f for f in listing.files if f.path in stored and f.path not in redo]
                paths = set(mentioning(candidates, names, self.settings.max_file_bytes))
                skipped: dict[str, list[str]] = {}
                read = read_sources(Listing(listing.root, [f for f in candidates if f.path in paths], {}, listing.used_git),
                                    skipped, self.report.secrets_removed, self.settings.max_file_bytes,
                                    self.settings.store_secrets)
                self._extract(read, all_paths, extractions, specs)
                for reason, lost in skipped.items():
                    self.report.skipped.setdefault(reason, []).extend(lost)
                    gone += lost
                redo |= paths
                again += read
                self.hashes.update((s.path, s.sha256) for s in read)
                moved_from = [s.path for s in read if s.sha256 != stored[s.path][1]] + [p for ps in skipped.values() for p in ps]
        for paths in self.report.skipped.values():
            paths.sort()
        self.report.files_relinked = sum(1 for s in again if s.sha256 == stored[s.path][1])
        return again, sorted(gone)

    def _plan(self, changed: list[SourceFile], removed: list[str], current: set[str],
              stored: dict[str, tuple[NamedNode, str]], emitted: dict[str, emit.FileBatch],
              extractions: dict[str, Extraction], all_paths: set[str], migration: Migration) -> Plan:
        """The transaction for ``changed`` (already emitted one by one) plus the parts that span files."""
        store, minter, report = self.store, self.minter, self.report
        keep = {s.path for s in changed}
        replaced_files = [stored[p][0] for p in [s.path for s in changed] + removed if p in stored]
        kept_extractions = {p: e for p, e in extractions.items() if p in keep}
        with self.phase("linking"):  # what spans files: edges, the directory tree, decisions
            batches = [emitted[s.path] for s in changed]
            quads: list[Quad] = [q for b in batches for q in b.quads]
            new_iris: dict[str, NamedNode] = {qn: iri for b in batches for qn, iri in b.entities.items()}
            old_entities = entities_of(store, replaced_files)
            added = entity_rows((new_iris[s.qualname].value, s.qualname, s.kind.value)
                                for e in kept_extractions.values() for s in e.symbols if s.qualname in new_iris)
            self.symbols = self._symbols_before().replaced((e.value for e in old_entities), added)
            symbols = self.symbols.table()
            code = {p: e for p, e in kept_extractions.items() if e.parse_error is None and e.module}
            kinds = {qn: kind for qn, (_, kind) in symbols.items()}
            quads += emit.emit_edges(resolve_edges(code, kinds, all_paths), symbols, TIER_WARM)
            quads += emit.emit_tree(minter, escape_path(self.root.name), escape_path(str(self.root)), sorted(current),
                                    TIER_WARM)
            adrs = adr_batch(store, minter, changed, all_paths, TIER_WARM, self.generated_at)
            quads += adrs.quads
            new_iris.update(adrs.entities)
            report.files_indexed = len(changed) - report.files_relinked
            report.entities = sum(len(b.entities) for b in batches) + sum(
                len(e.sections) for e in kept_extractions.values()
            )
            report.fragments = sum(b.fragment_count for b in batches)
        derived: list[Quad] = []
        if self.extensions:  # extension rules over the batch: what they derive is validated and written with it
            with self.phase("rules"):
                derived = ontology_rules.derive_for_batch(self.full_ontology, quads, self.extensions)
                report.derived = len(derived)
                quads += derived

        with self.phase("versions"):  # what this run supersedes goes to cold, validated with the batch
            archived = versions.archive(store, replaced_files, quads, self.stamp, self.generated_at)
            quads += archived.quads
            report.versions_archived = len(archived.entities)

        deletes: list[tuple[str, Bindings | None]] = list(archived.updates)
        if replaced_files:
            gone = vanished(store, replaced_files, set(new_iris.values()) | {minter.file(s.path) for s in changed},
                            old_entities)
            deletes.append((catalog.text("ingest/delete-file-contents.ru"), {"file": replaced_files}))
            deletes.append((catalog.text("ingest/delete-files.ru"), {"file": replaced_files}))
            if gone:
                deletes.append((catalog.text("ingest/delete-incoming.ru"), {"gone": gone}))
        deletes.append((catalog.text("ingest/delete-tree.ru"), None))
        if migration:
            deletes.append((f"DROP SILENT GRAPH {GRAPH_ONTOLOGY}", None))
        return Plan(deletes, quads, new_iris, replaced_files, archived, derived)

    def _embed(self, layout: IndexLayout, ahead: embedding_ahead.EmbeddingAhead | None = None) -> None:
        """Vectors for the new fragments; a provider failure is a warning (the graph stays as written)."""
        try:
            done = embed_missing(self.store, layout, self.settings, self, self._spilled_texts(), ahead)
        except ProviderError as exc:
            self.report.warnings.append(f"vectors not computed: {exc.message}")
            return
        if done is not None:
            self.report.embedded, self.report.embedding_model = done.embedded, done.model_id

    def _embedding_ahead(self) -> embedding_ahead.EmbeddingAhead | None:
        """A worker fitting and folding a first index's embedding from its spill while the caches are
        built (:mod:`acms.retrieval.embedding_ahead`); None when the embedding is not that one."""
        spill = self._usable_spill()
        if (spill is None or not self._spill_whole or self.settings.embedding_provider != "lsa"
                or self.report.fragments < embedding_ahead.AHEAD_FROM or (os.cpu_count() or 1) < 2
                or active_model(self.store) is not None):
            return None
        hot = {row["frag"].value for row in self.store.select(catalog.text("embeddings/hot-fragments"))}
        return embedding_ahead.EmbeddingAhead(spill, beside(spill, "embedding"), self.settings.embedding_dims, hot)

    def _usable_spill(self) -> Path | None:
        """This run's spill, closed and in place, unless a phase after the files rewrote texts (the secrets
        policy)."""
        spill = self.corpus_spill
        return spill if spill is not None and spill.is_file() and not self.report.texts_rescrubbed else None

    def _spilled_texts(self) -> Callable[[], Iterator[tuple[str, str]]] | None:
        """Every searchable fragment's text, from the spill when it holds them all (the store had none
        before this run; entities the tier policy moved since are placed by the embedding stream)."""
        spill = self._usable_spill()
        return None if spill is None or not self._spill_whole else lambda: read_texts(spill)

    def _let_go(self) -> None:
        """Before a phase that reads the whole index (fitting and embedding, the caches): the embedded
        store is reopened, so RocksDB lets go of what the files' writes left it holding."""
        reopen = getattr(self.store, "reopen", None)
        if reopen is not None:
            reopen()
            release_freed()

    def _warm_caches(self, layout: IndexLayout) -> None:
        """Build the keyword and ranking caches now, so the first search after an index run is not the slow one.
        A first index's spill stands for the store's corpus join unless a later phase rewrote texts."""
        self._let_go()
        spill = self._usable_spill()
        # complete when it holds every searchable fragment and place: the store had none before this
        # run, and no entity changed tier since its files were written (a place query joins two)
        # updated from what the run changed, unless the secrets policy rewrote texts of other files too
        delta = None if self.report.texts_rescrubbed else self.cache_delta
        caches = DerivedCaches(self.store, layout, progress=self.progress.update,  # steps 1 … CACHE_STEPS
                               spill=spill, complete=self._spill_whole and not self._tiers_moved, delta=delta)
        caches.warm()

    def _warm_vectors(self, layout: IndexLayout) -> None:
        """The vector cache, for the model the embeddings used (a first embedding has written it already)."""
        model = active_model(self.store)
        if model is not None:
            delta = None if self.report.texts_rescrubbed else self.cache_delta  # as for the text caches
            DerivedCaches(self.store, layout, delta=delta).vectors(model.model_id)
        self.progress.update(1)

    def _streams(self, migration: Migration) -> bool:
        """Stream this run (:mod:`acms.service.index_stream`): a first index, or a run that redoes every
        file (a migration, :mod:`acms.service.index_reindex`), when no extension has rules (rules see the
        whole batch); every other run is one batch (an incremental run is small)."""
        if any(ext.rules for ext in self.extensions):
            return False
        return migration.reindex or not self.store.ask(catalog.text("ingest/any-file"))

    def _extraction_changed(self, migration: Migration) -> None:
        """Every file is read again when the last run read them another way (``ingest.version``)."""
        rows = self.store.select(catalog.text("index/last-run-extractor"))
        if not rows or migration.reindex:
            return  # a new index, or every file is re-read anyway
        before = rows[0].get("extractor")
        if before is None or before.value != extractor_version():
            migration.reasons.append(f"extraction changed ({before.value if before is not None else 'unrecorded'} → "
                                     f"{extractor_version()}): every file re-read")
            migration.reindex = True

    def index_run_quads(self) -> list[Quad]:
        """The IndexRun record of this run (meta graph)."""
        head = self.head
        r, run, g = self.report, self.minter.index_run(self.stamp), GRAPH_META
        ended = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        q = [
            Quad(run, emit.A, UKO.IndexRun, g),
            Quad(run, PROV.startedAtTime, emit.time_lit(self.generated_at), g),
            Quad(run, PROV.endedAtTime, emit.time_lit(ended), g),
            Quad(run, UKO.acmsVersion, emit.lit(__version__), g),
            Quad(run, UKO.ukoVersion, emit.lit(uko_version()), g),
            Quad(run, UKO.extractorVersion, emit.lit(extractor_version()), g),
            Quad(run, UKO.filesIndexed, emit.int_lit(r.files_indexed), g),
            Quad(run, UKO.filesUnchanged, emit.int_lit(r.files_unchanged), g),
            Quad(run, UKO.filesRemoved, emit.int_lit(r.files_removed), g),
            Quad(run, UKO.filesSkipped,
                 emit.int_lit(sum(len(v) for v in r.skipped.values()) + len(r.quarantined)), g),
            Quad(run, UKO.triplesWritten, emit.int_lit(r.triples_written), g),
        ]
        if head:
            q.append(Quad(run, UKO.gitHead, emit.lit(head), g))
        return q


def index_project(root: Path, store: GraphStore, settings: Settings, progress: Progress | None = None,
                  layout: IndexLayout | None = None, history: int = 0) -> IndexReport:
    """Index ``root``; ``history`` > 0 also ingests that many recent commits (git checkouts only)."""
    return IndexRun(root, store, settings, layout, history=history, progress=progress).run()
