"""``acms index``: list → diff against the store → extract → fragment → emit → validate → write.

Incremental and idempotent: a file whose content hash is already stored is not touched; an
unchanged project writes nothing at all. Everything a run changes (the replaced files' old triples
out, the new ones in, the directory tree, the IndexRun record) is one store transaction, and only
after the batch passed validation.

One odd file never blocks a project: a file that vanishes or keeps changing while it is read is
skipped with its reason (``SkipReason``), a name that is not valid UTF-8 or holds control characters
is stored escaped (``walker.escape_path``), and a file whose triples violate the shapes is quarantined
(``IndexReport.quarantined``): left out, with the rest of the batch written in that one transaction.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pyoxigraph import NamedNode, Quad

from acms import __version__
from acms.config import Settings
from acms.decisions.ingest import adr_batch
from acms.ingest import emit
from acms.ingest.doc_extractor import extract_markdown, extract_rst
from acms.ingest.fragments import FragmentSpec, code_fragments, doc_fragments, window_fragments
from acms.ingest.model import Extraction, SourceFile
from acms.ingest.python_extractor import extract_python, module_name_for, resolve_edges
from acms.ingest.python_fallback import extract_python_fallback
from acms.ingest.walker import Listing, SkipReason, WalkSettings, escape_path, language_for, list_files, read_source
from acms.ontology import extensions as ontology_extensions
from acms.ontology import rules as ontology_rules
from acms.ontology.versioning import plan as plan_migration
from acms.ontology.versioning import uko_version
from acms.sparql import catalog
from acms.store.layout import IndexLayout
from acms.store.oxigraph import ontology_quads
from acms.store.protocol import GraphStore
from acms.temporal import git_history, tiers, versions
from acms.tokens import count_many
from acms.validation.batch import check_batch, describe, rejection, split_by_file
from acms.vocab import GRAPH_META, GRAPH_ONTOLOGY, PROV, TIER_WARM, UKO, IriMinter, slug

Progress = Callable[[str, int, int], None]  # phase, done, total


@dataclass
class IndexReport:
    root: str
    files_listed: int = 0
    files_indexed: int = 0
    files_unchanged: int = 0
    files_removed: int = 0
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

    def skipped_counts(self) -> dict[str, int]:
        return {reason: len(paths) for reason, paths in sorted(self.skipped.items())}


class _Clock:
    def __init__(self, report: IndexReport) -> None:
        self.report = report

    def phase(self, name: str) -> _Phase:
        return _Phase(self.report.timings, name)


class _Phase:
    def __init__(self, timings: dict[str, float], name: str) -> None:
        self.timings, self.name = timings, name

    def __enter__(self) -> None:
        self.start = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.timings[self.name] = self.timings.get(self.name, 0.0) + time.perf_counter() - self.start


SCRUBBED = b"\0acms-secrets-scrubbed/2"  # in the content hash: turning scrubbing on or off re-reads every file


def _read_sources(listing: Listing, report: IndexReport, max_file_bytes: int | None = None,
                  keep_secrets: bool = False) -> list[SourceFile]:
    """Read every listed file once; one that vanished, changed while read, or is no text is skipped.

    Secrets are replaced by ``[REDACTED:kind]`` here, before anything is extracted, so no fragment,
    ADR, export, search hit or SPARQL answer can hold one (``store_secrets`` turns this off)."""
    from acms.privacy.secrets import scrub  # the detector stack is only imported by the writer

    sources = []
    for listed in listing.files:
        got = read_source(listed, max_file_bytes)
        if isinstance(got, SkipReason):
            report.skipped.setdefault(got.value, []).append(listed.path)
            continue
        text = got.text
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass") + (b"" if keep_secrets else SCRUBBED)).hexdigest()
        if not keep_secrets:
            scrubbed = scrub(text, listed.path)
            if scrubbed.findings:
                text = scrubbed.text
                report.secrets_removed[listed.path] = scrubbed.kinds
        sources.append(SourceFile(listed.path, text, got.size, digest, language_for(listed.path)))
    for paths in report.skipped.values():
        paths.sort()
    return sources


def _extract(source: SourceFile, all_paths: set[str], window: int) -> tuple[Extraction | None, list[FragmentSpec]]:
    if source.language == "python":
        ext = extract_python(source.path, source.text, module_name_for(source.path, all_paths))
        if ext.parse_error is None:
            return ext, code_fragments(source, ext)
        # ast rejects it (Python 2, a syntax error): tree-sitter's definitions, else text windows
        recovered = extract_python_fallback(source.path, source.text, ext.module or "")
        if recovered is not None:
            return recovered, code_fragments(source, recovered)
        return ext, window_fragments(source, window)
    if source.language in ("markdown", "rst"):
        ext = (extract_markdown if source.language == "markdown" else extract_rst)(source.path, source.text)
        return ext, doc_fragments(source, ext, window)
    return None, window_fragments(source, window)


PARALLEL_MIN_FILES = 64


def _extract_chunk(chunk: list[SourceFile], all_paths: set[str], window: int) -> list[tuple[Extraction | None, list[FragmentSpec]]]:
    return [_extract(source, all_paths, window) for source in chunk]


def _extract_all(sources: list[SourceFile], all_paths: set[str], window: int) -> Iterator[tuple[Extraction | None, list[FragmentSpec]]]:
    """Parse in worker processes when there is enough work: ast is CPU-bound and holds the GIL."""
    workers = min(os.cpu_count() or 1, 4)
    if len(sources) < PARALLEL_MIN_FILES or workers < 2:
        for source in sources:
            yield _extract(source, all_paths, window)
        return
    size = max(16, len(sources) // (workers * 8))
    chunks = [sources[i : i + size] for i in range(0, len(sources), size)]
    ctx = multiprocessing.get_context("forkserver" if sys.platform != "win32" else "spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        for results in pool.map(_extract_chunk, chunks, [all_paths] * len(chunks), [window] * len(chunks)):
            yield from results


def git_head(root: Path) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    head = out.stdout.strip()
    return head if out.returncode == 0 and len(head) == 40 else None


def index_project(
    root: Path,
    store: GraphStore,
    settings: Settings,
    progress: Progress | None = None,
    layout: IndexLayout | None = None,
    history: int = 0,
) -> IndexReport:
    """Index ``root``; ``history`` > 0 also ingests that many recent commits (git checkouts only)."""
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    root = root.resolve()
    report = IndexReport(root=str(root))
    clock = _Clock(report)
    minter = IriMinter(settings.project_name or root.name)
    extensions = ontology_extensions.configured(settings.extensions, root)
    desired_ontology = ontology_extensions.ontology_quads(extensions)
    full_ontology = ontology_quads(desired_ontology)  # UKO + the configured extensions
    migration = plan_migration(store, full_ontology)
    if not migration:  # a new index, or nothing changed: (re)loading here mixes nothing
        store.ensure_ontology(desired_ontology)
    report.ontology = list(migration.reasons)

    with clock.phase("listing"):
        walk = WalkSettings(
            max_file_bytes=settings.max_file_bytes,
            max_total_bytes=settings.max_total_bytes or None,
            exclude=tuple(settings.exclude) + (f"/{settings.store}/",),
            include_hidden=settings.include_hidden,
        )
        listing = list_files(root, walk)
        report.used_git = listing.used_git
        report.skipped = {r.value: list(p) for r, p in listing.skipped.items() if p}
        sources = _read_sources(listing, report, settings.max_file_bytes, settings.store_secrets)
        report.files_listed = len(sources)

    with clock.phase("diff"):
        stored = {
            str(r["path"].value): (r["file"], str(r["hash"].value))
            for r in store.select(catalog.text("ingest/stored-files"))
        }
        changed = [s for s in sources if stored.get(s.path, (None, ""))[1] != s.sha256]
        report.first_run = not stored
        if migration.reindex:  # the ontology changed: rebuild every file's triples under the new one
            changed = list(sources)
        current = {s.path for s in sources}
        removed = sorted(p for p in stored if p not in current)
        report.files_unchanged = len(sources) - len(changed)
        report.files_removed = len(removed)
    if not changed and not removed:
        report.up_to_date = True
        _temporal(store, root, minter, settings, report, clock, history, progress)
        report.seconds = time.perf_counter() - t0
        return report

    all_paths = {s.path for s in sources}
    extractions: dict[str, Extraction] = {}
    specs: dict[str, list[FragmentSpec]] = {}
    with clock.phase("parsing"):
        for i, (source, (ext, frags)) in enumerate(zip(changed, _extract_all(changed, all_paths, settings.window_lines))):
            if ext is not None:
                extractions[source.path] = ext
                if ext.parse_error:
                    report.parse_errors[source.path] = ext.parse_error
            specs[source.path] = frags
            if progress:
                progress("parsing", i + 1, len(changed))

    with clock.phase("tokenizing"):
        flat = [spec.text for source in changed for spec in specs[source.path]]
        counts = iter(count_many(flat))

    generated_at = started.isoformat().replace("+00:00", "Z")
    with clock.phase("emitting"):
        emitted: dict[str, emit.FileBatch] = {}
        for source in changed:
            frags = specs[source.path]
            token_counts = [next(counts) for _ in frags]
            emitted[source.path] = emit.emit_file(
                minter, source, extractions.get(source.path), frags, token_counts, TIER_WARM, generated_at,
                secrets=report.secrets_removed.get(source.path),
            )
    checks = list(ontology_rules.all_checks(extensions)) if extensions else None

    # Validate the whole batch; on failure blame the files the violations' focus nodes belong to,
    # quarantine them (not written; a stored older version goes, as for a skipped file) and rebuild the
    # cross-file parts (edges, tree, decisions, rules, versions) without them. Each round drops at least
    # one file. Still all-or-nothing: a violation no changed file can be blamed for (the tree, an archived
    # version), or one the extension rules' derived triples cause (a broken extension, not an odd file).
    while True:
        batch = _build_batch(store, minter, root, changed, removed, current, stored, emitted, extractions,
                             all_paths, extensions, full_ontology, started, generated_at, report, clock)
        with clock.phase("shacl"):
            violations = check_batch(store, batch.quads, checks)
            if violations and batch.derived:
                derived = set(batch.derived)
                own = check_batch(store, [q for q in batch.quads if q not in derived], checks)
                if set(violations) - set(own):
                    raise rejection(sorted(set(violations) - set(own), key=violations.index), batch.quads)
        if not violations:
            break
        split = split_by_file(violations, batch.quads, {s.path for s in changed})
        if split.unattributed or not split.by_file:
            raise rejection(violations, batch.quads)
        for path, found in sorted(split.by_file.items()):
            report.quarantined[path] = describe(found)
            report.parse_errors.pop(path, None)
        changed = [s for s in changed if s.path not in split.by_file]
        current -= split.by_file.keys()
        removed = sorted(set(removed) | {p for p in split.by_file if p in stored})
        names = sorted(split.by_file)
        report.warnings.append(
            f"{len(names)} file(s) quarantined (they fail the shapes and were not written): "
            + ", ".join(names[:10]) + (f" and {len(names) - 10} more (--verbose lists them)" if len(names) > 10 else "")
        )
        if not changed and not removed:  # nothing left to write: the store stays as it is
            report.files_indexed = report.entities = report.fragments = report.derived = 0
            report.versions_archived = 0
            report.up_to_date = True
            _temporal(store, root, minter, settings, report, clock, history, progress)
            report.seconds = time.perf_counter() - t0
            return report
    quads, new_iris, replaced_files, archived = batch.quads, batch.new_iris, batch.replaced_files, batch.archived

    deletes: list[tuple[str, dict[str, object] | None]] = list(archived.updates)
    if replaced_files:
        gone = _vanished(store, replaced_files, set(new_iris.values()) | {minter.file(s.path) for s in changed})
        deletes.append((catalog.text("ingest/delete-file-contents.ru"), {"file": replaced_files}))
        deletes.append((catalog.text("ingest/delete-files.ru"), {"file": replaced_files}))
        if gone:
            deletes.append((catalog.text("ingest/delete-incoming.ru"), {"gone": gone}))
    deletes.append((catalog.text("ingest/delete-tree.ru"), None))
    reload: list[Quad] = []
    if migration:  # the new ontology graph goes in with the re-indexed files: one transaction
        deletes.append((f"DROP SILENT GRAPH {GRAPH_ONTOLOGY}", None))
        reload = full_ontology

    report.triples_written = len(quads)
    report.seconds = time.perf_counter() - t0
    run_quads = _index_run(minter, report, started, git_head(root) if listing.used_git else None)
    with clock.phase("store"):
        if not stored and not migration:
            store.load(quads + run_quads, bulk=True)
        else:
            store.replace(deletes, quads + run_quads + reload)
        store.flush()
    _temporal(store, root, minter, settings, report, clock, history, progress)
    if layout is not None and settings.embed_on_index:
        with clock.phase("embeddings"):
            _embed(store, layout, settings, report)
    if layout is not None:
        with clock.phase("caches"):
            _warm_caches(store, layout, settings, report)
    report.seconds = time.perf_counter() - t0
    return report


@dataclass
class _Batch:
    """Everything one index run would write for the files it keeps."""

    quads: list[Quad]
    new_iris: dict[str, NamedNode]
    replaced_files: list[NamedNode]
    archived: versions.Archive
    derived: list[Quad]  # what the extension rules added (part of ``quads``)


def _build_batch(
    store: GraphStore,
    minter: IriMinter,
    root: Path,
    changed: list[SourceFile],
    removed: list[str],
    current: set[str],
    stored: dict[str, tuple[NamedNode, str]],
    emitted: dict[str, emit.FileBatch],
    extractions: dict[str, Extraction],
    all_paths: set[str],
    extensions: list[ontology_extensions.Extension],
    full_ontology: list[Quad],
    started: datetime,
    generated_at: str,
    report: IndexReport,
    clock: _Clock,
) -> _Batch:
    """The batch for ``changed`` (already emitted one by one) plus the parts that span files."""
    keep = {s.path for s in changed}
    replaced_files = [stored[p][0] for p in [s.path for s in changed] + removed if p in stored]
    kept_extractions = {p: e for p, e in extractions.items() if p in keep}
    with clock.phase("emitting"):
        batches = [emitted[s.path] for s in changed]
        quads: list[Quad] = [q for b in batches for q in b.quads]
        new_iris: dict[str, NamedNode] = {qn: iri for b in batches for qn, iri in b.entities.items()}
        symbols = _symbol_table(store, replaced_files)
        symbols.update({s.qualname: (new_iris[s.qualname], s.kind.value)
                        for e in kept_extractions.values() for s in e.symbols if s.qualname in new_iris})
        code = {p: e for p, e in kept_extractions.items() if e.parse_error is None and e.module}
        kinds = {qn: kind for qn, (_, kind) in symbols.items()}
        quads += emit.emit_edges(resolve_edges(code, kinds), symbols, TIER_WARM)
        quads += emit.emit_tree(minter, escape_path(root.name), escape_path(str(root)), sorted(current), TIER_WARM)
        adrs = adr_batch(store, minter, changed, all_paths, TIER_WARM, generated_at)  # decisions/ingest.py
        quads += adrs.quads
        new_iris.update(adrs.entities)
        report.files_indexed = len(changed)
        report.entities = sum(len(b.entities) for b in batches) + sum(
            len(e.sections) for e in kept_extractions.values()
        )
        report.fragments = sum(b.fragment_count for b in batches)
    derived: list[Quad] = []
    if extensions:  # extension rules over the batch: what they derive is validated and written with it
        with clock.phase("rules"):
            derived = ontology_rules.derive_for_batch(full_ontology, quads, extensions)
            report.derived = len(derived)
            quads += derived

    with clock.phase("versions"):  # what this run supersedes goes to cold, validated with the batch
        archived = versions.archive(store, replaced_files, quads, _stamp(started), generated_at)
        quads += archived.quads
        report.versions_archived = len(archived.entities)
    return _Batch(quads, new_iris, replaced_files, archived, derived)


def _stamp(started: datetime) -> str:
    """The suffix of this run's IRIs (index run, archived versions)."""
    return started.strftime("%Y%m%dT%H%M%S%fZ")


def _temporal(store: GraphStore, root: Path, minter: IriMinter, settings: Settings, report: IndexReport,
              clock: _Clock, history: int, progress: Progress | None = None) -> None:
    """After the files are written: commits (when asked), then the tier policy over the result."""
    if history > 0:
        with clock.phase("history"):
            report.history = git_history.ingest(store, root, minter, history, progress,
                                                keep_secrets=settings.store_secrets)
    with clock.phase("tiers"):
        report.hot_entities = tiers.rebalance(store, tiers.Policy.of(settings)).hot_entities
    with clock.phase("secrets"):
        from acms.privacy.at_rest import apply_policy

        report.texts_rescrubbed = apply_policy(store, settings.store_secrets, fresh=report.first_run)


def _embed(store: GraphStore, layout: IndexLayout, settings: Settings, report: IndexReport) -> None:
    """Vectors for the new fragments; a provider failure is a warning (the graph is already written)."""
    from acms.errors import ProviderError
    from acms.retrieval.embedding_store import embed_missing

    try:
        done = embed_missing(store, layout, settings)
    except ProviderError as exc:
        report.warnings.append(f"vectors not computed: {exc.message}")
        return
    if done is not None:
        report.embedded, report.embedding_model = done.embedded, done.model_id


def _warm_caches(store: GraphStore, layout: IndexLayout, settings: Settings, report: IndexReport) -> None:
    """Build the derived caches now, so the first search after an index run is not the slow one."""
    from acms.retrieval.caches import DerivedCaches
    from acms.retrieval.embedding_store import active_model

    caches = DerivedCaches(store, layout)
    caches.keyword()
    caches.ranking()
    model = active_model(store)
    if model is not None:
        caches.vectors(model.model_id)


def _symbol_table(store: GraphStore, replaced_files: list[NamedNode]) -> dict[str, tuple[NamedNode, str]]:
    """Qualified name -> (IRI, class) of the stored entities that stay (replaced files' are dropped)."""
    dropped: set[NamedNode] = set()
    if replaced_files:
        rows = store.select(catalog.text("ingest/entities-of-files"), {"file": replaced_files})
        dropped = {r["entity"] for r in rows}  # type: ignore[misc]
    table: dict[str, tuple[NamedNode, str]] = {}
    for row in store.select(catalog.text("ingest/qualified-names")):
        entity = row["entity"]
        if entity not in dropped and isinstance(entity, NamedNode):
            table.setdefault(str(row["qn"].value), (entity, row["kind"].value.rsplit("#", 1)[-1]))
    return table


def _vanished(store: GraphStore, replaced_files: list[NamedNode], keep: set[NamedNode]) -> list[NamedNode]:
    rows = store.select(catalog.text("ingest/entities-of-files"), {"file": replaced_files})
    old = {r["entity"] for r in rows} | set(replaced_files)
    return sorted((e for e in old if isinstance(e, NamedNode) and e not in keep), key=lambda n: n.value)


def _index_run(minter: IriMinter, report: IndexReport, started: datetime, head: str | None) -> list[Quad]:
    stamp = _stamp(started)
    run = minter.index_run(stamp)
    g = GRAPH_META
    ended = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    q = [
        Quad(run, emit.A, UKO.IndexRun, g),
        Quad(run, PROV.startedAtTime, emit.time_lit(started.isoformat().replace("+00:00", "Z")), g),
        Quad(run, PROV.endedAtTime, emit.time_lit(ended), g),
        Quad(run, UKO.acmsVersion, emit.lit(__version__), g),
        Quad(run, UKO.ukoVersion, emit.lit(uko_version()), g),
        Quad(run, UKO.filesIndexed, emit.int_lit(report.files_indexed), g),
        Quad(run, UKO.filesUnchanged, emit.int_lit(report.files_unchanged), g),
        Quad(run, UKO.filesRemoved, emit.int_lit(report.files_removed), g),
        Quad(run, UKO.filesSkipped,
             emit.int_lit(sum(len(v) for v in report.skipped.values()) + len(report.quarantined)), g),
        Quad(run, UKO.triplesWritten, emit.int_lit(report.triples_written), g),
    ]
    if head:
        q.append(Quad(run, UKO.gitHead, emit.lit(head), g))
    return q


__all__ = ["IndexReport", "index_project", "slug"]
