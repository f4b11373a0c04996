"""The one-batch write: the files that changed since the last run, as ONE store transaction.

read → diff → parse → relink → emit → link → rules → versions → validate → store. An incremental run is
small, so the whole batch is held at once: the replaced files' old triples go out and the new ones
come in with the directory tree and the IndexRun record in one ``store.replace``, written only after
the batch passed validation. Extension rules see "the files of this batch", so a run with rules is
one batch even when it redoes every file.

Incremental and idempotent: a file whose content hash is already stored is not touched; an unchanged
project writes no file triples. One odd file never blocks a project: a file that vanishes or keeps
changing while it is read is skipped with its reason, and a file whose triples violate the shapes is
quarantined (``IndexReport.quarantined``): left out, with the rest of the batch written.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence

from pyoxigraph import Literal, NamedNode, Quad

from acms.decisions.ingest import adr_batch
from acms.ingest import emit
from acms.ingest.emitted import CheckedBatch, EmitSettings
from acms.ingest.fragments import FragmentSpec
from acms.ingest.model import Extraction, SourceFile
from acms.ingest.pipeline import entities_of, extract_all, in_workers, read_sources, vanished
from acms.ingest.relink import (
    Texts,
    mentioning,
    module_names,
    module_twins,
    moved_names,
    python_reach,
    reaches_python_names,
    renamed_modules,
)
from acms.ingest.resolve import links_by_name, resolve_edges
from acms.ingest.link_outlines import LinkOutlines
from acms.ingest.unchanged_modules import UnchangedModules
from acms.ingest.symbols import SymbolRows, entity_rows
from acms.ingest.walker import Listing, escape_path, language_for
from acms.ontology import rules as ontology_rules
from acms.ontology.versioning import Migration
from acms.retrieval.cache_delta import CacheDelta, Written
from acms.retrieval.caches import DerivedCaches
from acms.service.freshness import last_run
from acms.service.indexing.context import Plan, RunContext
from acms.service.indexing.old_quads import OldQuads, stay_hot
from acms.sparql import catalog
from acms.store.protocol import Bindings, GraphStore, SupportsFileRewrite
from acms.temporal import versions
from acms.temporal.revisions import archived_times
from acms.temporal.versions import fragment_parts
from acms.validation.batch import check_batch, check_emitted, check_links, describe, quarantine_warning, rejection, split_by_file
from acms.validation.shapes import CompiledCheck, Violation
from acms.vocab import GRAPH_ONTOLOGY, TIER_HOT, TIER_WARM

__all__ = ["OneBatch", "StoredFiles"]


class StoredFiles(Mapping[str, tuple[NamedNode, str]]):
    """Path -> (file IRI, content hash) of the files the graph holds.

    Read whole (``ingest/stored-files.rq``: ~50-100 ms a standard library), or, after a look whose
    hashes are the graph's (:mod:`acms.service.freshness`), made of the look's unchanged files' hashes
    with only the files a run touches read (``ingest/stored-files-of.rq``), their IRIs as they are asked for."""

    def __init__(self, store: GraphStore, unchanged: Mapping[str, str] | None = None, paths: Iterable[str] = ()) -> None:
        """``unchanged``: path -> hash of graph files not to read (None: read every file); ``paths``:
        the others worth asking about (changed, added, removed: the graph holds some of them)."""
        self._store = store
        self._rows: dict[str, tuple[NamedNode, str]] = {}
        self._asked: set[str] = set()
        self._unchanged = None if unchanged is None else dict(unchanged)
        if unchanged is None:
            self._rows = {str(r["path"].value): (r["file"], str(r["hash"].value))
                          for r in store.select(catalog.text("ingest/stored-files"))}
        else:
            self.fetch(paths)

    def fetch(self, paths: Iterable[str]) -> None:
        """Read these paths' rows now, in one query (each asked for later would be a query of its own)."""
        if self._unchanged is None:
            return
        wanted = sorted(p for p in paths if p not in self._asked)
        if not wanted:
            return
        self._asked.update(wanted)
        for r in self._store.select(catalog.text("ingest/stored-files-of"), {"path": [Literal(p) for p in wanted]}):
            self._rows[str(r["path"].value)] = (r["file"], str(r["hash"].value))  # type: ignore[index]

    def __getitem__(self, path: str) -> tuple[NamedNode, str]:
        if path not in self._rows and self._unchanged is not None and path in self._unchanged:
            self.fetch([path])
        return self._rows[path]

    def __contains__(self, path: object) -> bool:
        return path in self._rows or (self._unchanged is not None and path in self._unchanged)

    def __iter__(self) -> Iterator[str]:
        yield from self._rows
        if self._unchanged is not None:
            yield from (p for p in self._unchanged if p not in self._rows)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __bool__(self) -> bool:
        return bool(self._rows or self._unchanged)

    def hashes(self) -> dict[str, str]:
        """Path -> content hash of every file, without asking for any IRI."""
        out = dict(self._unchanged or {})
        out.update((p, h) for p, (_, h) in self._rows.items())
        return out


class OneBatch:
    """The write mode of an incremental run (and of any run when an extension has rules)."""

    def __init__(self, migration: Migration) -> None:
        """``migration``: what changed in the ontology or the extraction since the last run; when it
        redoes every file, every file is read, re-extracted and replaced, and the ontology reloaded."""
        self.migration = migration
        self._stored_symbols: SymbolRows | None = None  # the symbol table before the run (cache or store)
        self._old_quads: list[Quad] | None = None  # the replaced files' quads, read once by the plan
        self._old: OldQuads | None = None  # where they are read from, file by file (a store that rewrites by a diff)
        self._context: UnchangedModules | None = None  # the modules not extracted, for linking
        self._outlines: LinkOutlines | None = None  # what linking reads of the modules, kept by earlier runs
        self._checked: dict[str, CheckedBatch] = {}  # path -> its batch, emitted and validated where it was parsed

    def stored(self, store: GraphStore) -> StoredFiles:
        """The files the graph holds: every one, read here."""
        return StoredFiles(store)

    def trusted(self, known: Mapping[str, str] | None) -> dict[str, str] | None:
        """Path -> content hash of the files not to read again (``known``: the stored hashes, None when
        every file is redone). A plain run reads and hashes every listed file."""
        return None

    def write(self, run: RunContext, listing: Listing) -> None:
        """The files' transaction (nothing when nothing changed, or every changed file is quarantined)."""
        self._outlines = LinkOutlines(run.layout.cache) if run.layout is not None else None
        try:
            self._write(run, listing)
        finally:
            if self._context is not None:  # its workers, if the run failed before linking let them go
                self._context.close()
                run.outlines.update(self._context.parsed)
                self._context = None
            if self._outlines is not None:
                self._outlines.close()

    def _write(self, run: RunContext, listing: Listing) -> None:
        report, store, settings, migration = run.report, run.store, run.settings, self.migration
        stored = self.stored(store)
        run.revised = {}  # nothing archived unless the plan says so
        self._old = OldQuads(store) if stored and not migration and isinstance(store, SupportsFileRewrite) else None
        with run.phase("reading", len(listing.files)):
            # A file whose content hash is stored is not scrubbed and its text not kept (scrubbing
            # every file made an unchanged re-index of the standard library 10 s); unless every file is redone.
            hashes = stored.hashes()
            known = None if migration.reindex else hashes
            trusted = self.trusted(known)
            sources = read_sources(listing, report.skipped, report.secrets_removed, settings.max_file_bytes,
                                   settings.store_secrets, run.progress.update, unchanged=known, trusted=trusted)
            report.files_listed = len(sources)
            run.hashes = {s.path: s.sha256 for s in sources}

        with run.phase("diff"):
            changed = [s for s in sources if hashes.get(s.path, "") != s.sha256]
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
        relinked: list[SourceFile] = []  # unchanged files read only for their links (``_plan``)
        extractions: dict[str, Extraction] = {}
        specs: dict[str, list[FragmentSpec]] = {}
        if self._old is not None and not migration.reindex and in_workers(len(changed)):
            self._old.read_ahead([stored[p][0] for p in [*(s.path for s in changed), *removed] if p in stored])
        with run.phase("parsing", len(changed)):
            try:
                self._extract(run, changed, all_paths, extractions, specs)
            except BaseException:
                if self._old is not None:
                    with contextlib.suppress(BaseException):  # the extraction's failure is the one to report
                        self._old.settle()
                raise
        if stored and not migration.reindex:
            # what linking reads of the Python modules this run did not extract (another module's imports, a base
            # class defined elsewhere); with many files, those they import are parsed by two workers while the
            # run relinks (the old quads' reading ahead ends with the parsing), the others when a lookup passes
            # through
            self._context = UnchangedModules(listing.files, all_paths, set(extractions), settings.max_file_bytes,
                                             self._outlines, hashes)
            if in_workers(len(changed)):
                self._context.prefetch(extractions.values(), 2)
            again, links_only, gone = self._relink(run, changed, removed, stored, listing, all_paths, extractions,
                                                   specs)
            if run.extensions:  # the rules may read any file's whole batch
                links_only = set()
            relinked = [s for s in again if s.path in links_only]
            changed += [s for s in again if s.path not in links_only]
            if gone:  # relink candidates that vanished or turned odd since the look: out, as any skipped file
                removed = sorted({*removed, *gone})
                current -= set(gone)
                for path in gone:
                    run.hashes.pop(path, None)
                report.files_removed = len(removed)
            report.changed_paths = sorted({*report.changed_paths, *(s.path for s in again), *gone})

        with run.phase("emitting", len(changed)):
            emitted: dict[str, emit.FileBatch] = {}
            for i, source in enumerate(changed):
                checked = self._checked.get(source.path)
                emitted[source.path] = checked.batch if checked is not None else emit.emit_file(
                    run.minter, source, extractions.get(source.path), specs[source.path], TIER_WARM,
                    run.generated_at, secrets=report.secrets_removed.get(source.path),
                )
                run.progress.update(i + 1)
        checks = list(ontology_rules.all_checks(run.extensions)) if run.extensions else None

        # Validate the whole batch; on failure blame the files the violations' focus nodes belong to,
        # quarantine them (not written; a stored older version goes, as for a skipped file) and rebuild the
        # cross-file parts (edges, tree, decisions, rules, versions) without them. Each round drops at least
        # one file. Still all-or-nothing: a violation no changed file can be blamed for (the tree, an archived
        # version), or one the extension rules' derived triples cause (a broken extension, not an odd file).
        while True:
            plan = self._plan(run, changed, removed, current, stored, emitted, extractions, all_paths, migration,
                              relinked)
            with run.phase("validation", len(plan.quads)):
                violations = self._violations(store, plan, [emitted[s.path] for s in changed], checks,
                                              {} if checks is not None else self._checked)
                if violations and plan.derived:
                    derived = set(plan.derived)
                    own = check_batch(store, [q for q in plan.quads if q not in derived], checks)
                    if set(violations) - set(own):
                        raise rejection(sorted(set(violations) - set(own), key=violations.index), plan.quads)
                run.progress.update(len(plan.quads))
            if not violations:
                break
            if relinked:  # blame needs every file's batch: the files linked again are written whole, as edited
                for source in relinked:
                    emitted[source.path] = emit.emit_file(run.minter, source, extractions.get(source.path),
                                                          specs[source.path], TIER_WARM, run.generated_at,
                                                          secrets=report.secrets_removed.get(source.path))
                changed, relinked = changed + relinked, []
                continue
            split = split_by_file(violations, plan.quads, {s.path for s in changed})
            if split.unattributed or not split.by_file:
                raise rejection(violations, plan.quads)
            for path, found in sorted(split.by_file.items()):
                report.quarantined[path] = describe(found)
                report.parse_errors.pop(path, None)
                run.hashes.pop(path, None)  # not in the graph: the manifest says so (a look trusts its hashes)
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
        run.revised = archived_times(plan.archived.quads)
        if run.layout is not None and not migration:  # the caches follow: only these files' rows are read again
            before = DerivedCaches(store, run.layout)
            touched = {f.value for f in plan.replaced_files} | {run.minter.file(s.path).value for s in changed}
            run.cache_delta = CacheDelta(before.text_key, before.state_key, frozenset(touched),
                                         self._written([emitted[s.path] for s in changed], plan))
        run_quads = run.index_run_quads()
        with run.phase("store", 1):
            if not stored and not migration:
                store.load(plan.quads + run_quads, bulk=True)
            elif not migration and isinstance(store, SupportsFileRewrite):  # most of a file's quads stay
                n = plan.before
                files = 2 if plan.replaced_files else 0  # _plan's order: ``before``, the files' two deletes, the rest
                rewrite = store.rewrite_files(plan.deletes[:n], plan.replaced_files, plan.deletes[n + files:],
                                              plan.quads + run_quads, old=self._old_quads)
                self._old_quads = self._old = None
                if run.cache_delta is not None and run.cache_delta.written is not None and rewrite is not None:
                    written = run.cache_delta.written  # the embedding asks only for the texts of these
                    run.cache_delta = dataclasses.replace(run.cache_delta, unembedded=frozenset(
                        {row[0] for row in written.rows}.union(written.others).difference(rewrite.vectors_kept)))
            else:
                reload = run.full_ontology if migration else []  # the new ontology goes in with the files
                store.replace(plan.deletes, plan.quads + run_quads + reload)
            # no flush here: the run's bracket flushes when it lands (a flush is ~20 ms whatever it writes)
            run.progress.update(1)

    @staticmethod
    def _written(batches: list[emit.FileBatch], plan: Plan) -> Written | None:
        """What the caches' update may take from the files' batches instead of reading them back: None when
        the run wrote more of them than their batches hold (decisions of ADR files, what extension rules
        derived)."""
        if plan.derived or any(key.startswith("adr:") for key in plan.new_iris) or \
                any(b.places is None for b in batches):
            return None
        return Written([row for b in batches for row in b.corpus],
                       [frag for b in batches for frag, _ in b.other_texts],
                       [b.places for b in batches if b.places is not None])

    @staticmethod
    def _violations(store: GraphStore, plan: Plan, batches: list[emit.FileBatch],
                    checks: list[CompiledCheck] | None, checked: Mapping[str, CheckedBatch]) -> list[Violation]:
        """``check_batch`` of the plan's quads, the files' part (the first ones, in ``batches``' order) read as
        the N-Quads text it was emitted as (``check_emitted``: no term printed again for each quad).

        ``checked``: files a worker emitted and validated on their own, as a streamed first index's are
        (:mod:`acms.ingest.emitted`): their verdicts stand, the rest of the batch is checked with their
        nodes' classes (what it links to there), and the quads about their nodes outside their batches
        (the cross-file edges) are checked on the constraints of those links' predicates (``check_links``),
        as a first index checks its edges."""
        emitted = sum(len(b.lines) for b in batches)
        if all(len(b.quads) == len(b.lines) for b in batches):
            judged = [checked[b.path] for b in batches if b.path in checked and checked[b.path].batch is b
                      and checked[b.path].violations is not None]
            if not judged:
                found = check_emitted(store, (line for b in batches for line in b.lines), TIER_WARM,
                                      plan.quads[emitted:], checks)
                if found is not None:
                    return found
                return check_batch(store, plan.quads, checks)
            found = [v for c in judged for v in c.violations or ()]
            described = {node: cls for c in judged for node, cls in c.types}
            own = {id(c.batch) for c in judged}
            rest = plan.quads[emitted:]
            links = [q for q in rest if str(q.subject) in described]
            others = [q for q in rest if str(q.subject) not in described] if links else rest
            lines = (line for b in batches if id(b) not in own for line in b.lines)
            main = check_emitted(store, lines, TIER_WARM, others, checks, described)
            if main is not None:
                found += main
                if links:
                    found += check_links(store, links, checks, {n[1:-1]: c[1:-1] for n, c in described.items()})
                return sorted(set(found), key=lambda v: (*v.key(), v.value or ""))
        return check_batch(store, plan.quads, checks)

    def _symbols_before(self, run: RunContext) -> SymbolRows:
        """The project's symbol table as the run found it: the one the last run left, else the store's."""
        if self._stored_symbols is None:
            last = last_run(run.store)
            cached = SymbolRows.load(run.layout.cache, last) if run.layout is not None else None
            self._stored_symbols = cached or SymbolRows.from_store(run.store, last)
        return self._stored_symbols

    def _extract(self, run: RunContext, sources: list[SourceFile], all_paths: set[str], extractions: dict[str, Extraction],
                 specs: dict[str, list[FragmentSpec]], *, emit_too: bool = True) -> None:
        """Extract ``sources`` into ``extractions`` and ``specs`` (the fragments to cut), noting parse errors.
        Where workers parse them, they emit and validate each one too (``self._checked``), unless not
        ``emit_too`` (files read again for their links: most keep their triples)."""
        emitting = EmitSettings(run.minter, TIER_WARM.value, run.generated_at, False) if emit_too else None
        for i, (source, (ext, frags, checked)) in enumerate(zip(sources, extract_all(
                sources, all_paths, run.settings.window_lines, emitting, run.report.secrets_removed))):
            if ext is not None:
                extractions[source.path] = ext
                if ext.parse_error:
                    run.report.parse_errors[source.path] = ext.parse_error
            run.keep_outline(source.path, source.sha256, ext)
            specs[source.path] = frags
            if checked is not None:
                self._checked[source.path] = checked
                for phase, seconds in checked.seconds.items():
                    key = f"{phase} (per file)"  # in a pool worker, beside the other files' parsing
                    run.report.timings[key] = run.report.timings.get(key, 0.0) + seconds
            run.progress.update(i + 1)

    def _relink(self, run: RunContext, changed: list[SourceFile], removed: list[str], stored: StoredFiles,
                listing: Listing, all_paths: set[str], extractions: dict[str, Extraction],
                specs: dict[str, list[FragmentSpec]]) -> tuple[list[SourceFile], set[str], list[str]]:
        """The unchanged files that mention a name this run adds, removes or moves (:mod:`acms.ingest.relink`),
        read and extracted again so that their links are what a first index would make; the paths of those
        whose text is the stored one and whose module no ``__init__`` renamed (only their links can change:
        their entities, fragments and texts are what the store holds); and those that vanished or turned
        odd since the look (skipped with their reason: the run removes them).

        A file read here may have been saved since the look: then its own names may have moved too, and
        the files that mention those are read as well, until no name moves. With every file read, those
        that define a module of the same name are read too (``module_twins``), and the files an added or
        removed ``__init__`` renames (``renamed_modules``)."""
        redo = {s.path for s in changed} | set(removed)  # read (or found gone) already
        again: list[SourceFile] = []
        gone: list[str] = []
        moved_from = [s.path for s in changed] + removed  # files whose defined names may have moved
        fresh = list(moved_from)  # files read (or gone) whose module twins are not looked for yet
        added = [s.path for s in changed if s.path not in stored]
        before_paths = (all_paths - set(added)) | set(removed)  # the files the run started from
        renamed = renamed_modules(added, removed, stored, before_paths, all_paths)
        renamed_all = set(renamed)
        texts = Texts()  # the unchanged Python files' texts as the relinking read them
        with run.phase("relinking"):
            while moved_from or fresh or renamed:
                from_python = [p for p in moved_from if language_for(p) == "python"]
                from_others = [p for p in moved_from if language_for(p) != "python"]
                before_python, before_others = self._names_of(run, from_python, stored), self._names_of(run, from_others, stored)
                after_python, after_others = ({s.qualname for p in group if p in extractions for s in extractions[p].symbols}
                                              for group in (from_python, from_others))
                names = moved_names(before_python | before_others, after_python | after_others)
                # a tree-sitter file links within its family's modules: a name a Python file moved reaches it only
                # where a qualified name begins with one of their module names (both name modules by path)
                python_moved = before_python ^ after_python
                others_names = moved_names(before_others, after_others) | (
                    moved_names(python_moved, ()) if reaches_python_names(python_moved, all_paths | before_paths) else set())
                twins = module_twins(run.store, module_names(fresh, extractions, before_paths))
                candidates = [f for f in listing.files if f.path in stored and f.path not in redo
                              and (f.path in twins or run.extensions or links_by_name(f.path))]  # rules may read any file's batch
                python_files = [f for f in candidates if language_for(f.path) == "python"]
                other_files = [f for f in candidates if language_for(f.path) != "python"]
                max_bytes = run.settings.max_file_bytes
                paths = set(mentioning(python_files, names, max_bytes, texts)) if names else set()
                if paths and not run.extensions:  # a Python file only if its names may resolve through a moved module
                    paths &= python_reach([f for f in python_files if f.path in paths],
                                          module_names(moved_from, extractions, before_paths), all_paths, max_bytes, texts)
                wanted = names if run.extensions else others_names  # the rules may read any file's batch
                paths |= set(mentioning(other_files, wanted, max_bytes, texts)) if wanted else set()
                paths |= {f.path for f in candidates if f.path in twins or f.path in renamed}
                if not paths:
                    break
                stored.fetch(paths)  # their file IRIs, in one query
                skipped: dict[str, list[str]] = {}
                read = read_sources(Listing(listing.root, [f for f in candidates if f.path in paths], {}, listing.used_git),
                                    skipped, run.report.secrets_removed, run.settings.max_file_bytes,
                                    run.settings.store_secrets)
                self._extract(run, read, all_paths, extractions, specs, emit_too=False)
                for reason, lost in skipped.items():
                    run.report.skipped.setdefault(reason, []).extend(lost)
                    gone += lost
                redo |= paths
                again += read
                run.hashes.update((s.path, s.sha256) for s in read)
                moved_from = [s.path for s in read if s.sha256 != stored[s.path][1] or s.path in renamed] + \
                    [p for ps in skipped.values() for p in ps]
                fresh = [s.path for s in read]
                renamed = set()
        for paths in run.report.skipped.values():
            paths.sort()
        run.report.files_relinked = sum(1 for s in again if s.sha256 == stored[s.path][1])
        links_only = {s.path for s in again if s.sha256 == stored[s.path][1] and s.path not in renamed_all}
        return again, links_only, sorted(gone)

    def _names_of(self, run: RunContext, paths: list[str], stored: StoredFiles) -> set[str]:
        """The qualified names the stored versions of ``paths`` defined."""
        replaced = [stored[p][0] for p in paths if p in stored]
        if not replaced:
            return set()
        if self._old is not None:  # the files' quads, read here once for the whole run
            return self._old.names(replaced)
        return {str(r["qn"].value) for r in run.store.select(catalog.text("ingest/symbols-of-files"), {"file": replaced})}

    @staticmethod
    def _tree(run: RunContext, current: set[str], stored: StoredFiles) -> emit.TreeWrite | None:
        """What the run writes of the project and directory nodes: None when they stay (the stored tree is
        the one this run would write). A file added or gone rewrites the nodes whose quads that changes
        (``emit.tree_changes``: a new module of the standard library rewrote ~3,200 quads, validated and
        diffed against the store's, for ~30 that changed). The project folder renamed or moved, or
        extension rules (they may read the tree), rewrite every node."""
        name, root = escape_path(run.root.name), escape_path(str(run.root))
        moved = bool(run.extensions) or not run.store.ask(catalog.text("ingest/project-root-is"),
                                                          {"name": Literal(name), "root": Literal(root)})
        if moved:
            return emit.TreeWrite(emit.emit_tree(run.minter, name, root, sorted(current), TIER_WARM), None)
        if current == set(stored):
            return None
        return emit.tree_changes(run.minter, name, root, sorted(stored), sorted(current), TIER_WARM)

    @staticmethod
    def _links_again(store: GraphStore, relinked: Sequence[SourceFile], stored: StoredFiles,
                     code: Mapping[str, Extraction], symbols: Mapping[str, tuple[NamedNode, str]],
                     edges: list[Quad]) -> tuple[list[Quad], list[tuple[object, object, object]]]:
        """The batch's links without those the files linked again hold already, and those of their old
        links it lacks (to delete): most of a relinked file's links stay, and are neither deleted nor written
        (a 284-file relink: 38k links, ~5 s to delete and write again). Their links go where their entities
        are: a hot entity's to the hot tier."""
        hot = {r["e"] for r in store.select(catalog.text("rules/entities-in-tier"), {"tier": TIER_HOT})}
        owned = {held[0] for s in relinked if s.path in code for sym in code[s.path].symbols
                 if (held := symbols.get(sym.qualname)) is not None}
        edges = stay_hot(edges, {e for e in hot if e in owned})
        old = {Quad(r["s"], r["p"], r["o"], r["g"])  # type: ignore[arg-type]
               for r in store.select(catalog.text("ingest/file-links"), {"file": [stored[s.path][0] for s in relinked]})}
        new = set(edges)
        return [q for q in edges if q not in old], [(q.subject, q.predicate, q.object) for q in old if q not in new]

    def _plan(self, run: RunContext, changed: list[SourceFile], removed: list[str], current: set[str],
              stored: StoredFiles, emitted: dict[str, emit.FileBatch],
              extractions: dict[str, Extraction], all_paths: set[str], migration: Migration,
              relinked: Sequence[SourceFile] = ()) -> Plan:
        """The transaction for ``changed`` (already emitted one by one) plus the parts that span files.
        ``relinked``: unchanged files read for their links only: the links they lose are deleted and those
        they gain written, the rest of their quads stays (rewriting them whole, as edited files, cost a
        284-file relink of the standard library ~50 s)."""
        store, minter, report = run.store, run.minter, run.report
        keep = {s.path for s in changed}
        replaced_files = [stored[p][0] for p in [s.path for s in changed] + removed if p in stored]
        kept_extractions = {p: e for p, e in extractions.items() if p in keep}
        linked_again = {s.path for s in relinked}
        with run.phase("linking"):  # what spans files: edges, the directory tree, decisions
            batches = [emitted[s.path] for s in changed]
            quads: list[Quad] = [q for b in batches for q in b.quads]
            new_iris: dict[str, NamedNode] = {qn: iri for b in batches for qn, iri in b.entities.items()}
            old_entities = entities_of(store, replaced_files) if self._old is None else self._old.entities(replaced_files)
            # each file's own IRIs: two files of the batch may define one qualified name (tests/test_x.py and
            # tests/contrib/test_x.py, both module test_x), and the table must hold both to pick the winner
            added = entity_rows((emitted[p].entities[s.qualname].value, s.qualname, s.kind.value)
                                for p, e in kept_extractions.items() for s in e.symbols if s.qualname in emitted[p].entities)
            run.symbols = self._symbols_before(run).replaced((e.value for e in old_entities), added)
            symbols = run.symbols.table()
            code = {p: e for p, e in extractions.items() if (p in keep or p in linked_again)
                    and e.parse_error is None and e.module}
            kinds = symbols.kinds()
            edges = emit.emit_edges(resolve_edges(code, kinds, all_paths, self._context), symbols, TIER_WARM)
            stale_links: list[tuple[object, object, object]] = []
            if linked_again:
                edges, stale_links = self._links_again(store, relinked, stored, code, symbols, edges)
            quads += edges
            tree = self._tree(run, current, stored)
            if tree is not None:
                quads += tree.quads
            adrs = adr_batch(store, minter, changed, all_paths, TIER_WARM, run.generated_at)
            quads += adrs.quads
            new_iris.update(adrs.entities)
            report.files_indexed = len(changed) + len(relinked) - report.files_relinked
            report.entities = sum(len(b.entities) for b in batches) + sum(
                len(e.sections) for e in kept_extractions.values()
            )
            report.fragments = sum(b.fragment_count for b in batches)
        derived: list[Quad] = []
        if run.extensions:  # extension rules over the batch: what they derive is validated and written with it
            with run.phase("rules"):
                derived = ontology_rules.derive_for_batch(run.full_ontology, quads, run.extensions)
                report.derived = len(derived)
                quads += derived

        with run.phase("versions"):  # what this run supersedes goes to cold, validated with the batch
            # A store that writes by a diff has read the files' quads once (OldQuads, from relinking on): the
            # old texts, then the diff (nothing writes them before the store phase; the versions' updates
            # touch the cold tier only).
            self._old_quads = None
            old_fragments = None
            # the batch's fragment parts, gathered once (the graph names stay_hot changes are not part of them)
            new_fragments = fragment_parts(quads) if replaced_files else None
            if replaced_files and self._old is not None:
                self._old_quads = self._old.quads(replaced_files)
                old_fragments = self._old.fragments(replaced_files)
                if not run.extensions:  # the files' hot entities stay hot: the tier policy keeps them or moves them
                    quads = stay_hot(quads, self._old.hot(replaced_files), new_fragments.owners)  # type: ignore[union-attr]
            archived = versions.archive(store, replaced_files, new_fragments if new_fragments is not None else quads,
                                        run.stamp, run.generated_at, old_fragments)
            quads += archived.quads
            report.versions_archived = len(archived.entities)

        # In this order (write() hands a store that rewrites by a diff the parts around the files' two deletes)
        deletes: list[tuple[str, Bindings | None]] = list(archived.updates)
        if stale_links:  # before the files' deletes: it takes none of their quads, so none is looked for again after it
            deletes.append((catalog.text("ingest/delete-links.ru"), {"s p o": stale_links}))
        before = len(deletes)
        if replaced_files:
            written = {iri for b in batches for iri in b.entities.values()} | set(new_iris.values())
            gone = vanished(store, replaced_files, written | {minter.file(s.path) for s in changed},
                            old_entities)
            deletes.append((catalog.text("ingest/delete-file-contents.ru"), {"file": replaced_files}))
            deletes.append((catalog.text("ingest/delete-files.ru"), {"file": replaced_files}))
            if gone:
                deletes.append((catalog.text("ingest/delete-incoming.ru"), {"gone": gone}))
        if tree is not None:  # bound to the nodes it removes: rewrite_files then looks again at their kept quads only
            nodes = tree.nodes if tree.nodes is not None else [
                row["node"] for row in store.select(catalog.text("ingest/tree-nodes"))]
            if nodes:
                deletes.append((catalog.text("ingest/delete-tree.ru"), {"s": nodes}))
        if migration:
            deletes.append((f"DROP SILENT GRAPH {GRAPH_ONTOLOGY}", None))
        return Plan(deletes, quads, new_iris, replaced_files, archived, derived, before)
