"""A first index, streamed: files are read, scrubbed and extracted (in a process pool),
emitted, validated and written group by group,
so peak memory is flat in the size of the project (a whole-batch first index of the standard
library peaked at 4.5 GB, and 4x the standard library would have needed ~18 GB).

Why it is still all or nothing: the run is inside ``store.atomic()`` (:mod:`acms.store.run_marker`):
the index is checkpointed before the first group is written and a pending-run marker makes readers
read the checkpoint until the run's last write has landed; a crash or an error at any group rolls
the whole run back. A first index has no checkpoint to speak of (an empty store), so the readers of a
failed first index see an empty index, as before.

What is validated where (against the same compiled shapes as the whole batch was):

- a file: its triples on their own, in the extraction worker that read it (:mod:`acms.ingest.emitted`:
  every node they describe is the file's, the project node *promised*: it is written with the directory
  tree, at the end); a file that violates the shapes is quarantined (left out), as before;
- the ADR files' group (a decision links across files and reads the store), a migration's groups and a
  run with extension checks: the group's triples in the writer, with the classes of what they link to
  from the store; a file that violates the shapes is left out and the rest of the group re-checked;
- the cross-file edges (calls, imports, inherits, references), resolved once every file is
  extracted: their subjects' stored classes make them focus nodes, and the constraints on those
  predicates are checked (``check_links``), in groups of ``EDGE_GROUP``;
- the directory tree (the project, its directories, what they contain) as one batch.

ADR files are put in the last group, all together, so their ``supersedes`` links see each other.
Extension rules see "the files of this batch" (:mod:`acms.ontology.rules`): with rules configured a
first index is not streamed (one batch, as before), so rules that link two files still see both.
Only what cross-file resolution needs is kept between groups: each Python file's symbols without
docstrings, signatures or decorators, and its imports.

A run that redoes every file of an existing index (an ontology migration) streams here too: its
``OldIndex`` (:class:`acms.service.indexing.reindex.StreamedReindex`) replaces the ontology graph
first, deletes each group's old triples just before the group is loaded, and the files not read again
before the edges.

The write mode :class:`StreamedFirstIndex` is this loop in the indexing process; the child process
(:mod:`acms.service.indexing.child`) and the re-index run the same loop.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from itertools import chain
from typing import Protocol

from pyoxigraph import NamedNode, Quad, RdfFormat, parse, serialize

from acms.decisions.adr import is_adr_path
from acms.decisions.ingest import AdrBatch, adr_batch
from acms.ingest import emit
from acms.ingest.model import Extraction, SourceFile
from acms.ingest.emitted import EmitSettings, EmittedFile
from acms.ingest.pipeline import Extracted, ExtractorPool, Reading, ReadGroup, slim
from acms.ingest.resolve import resolve_edges
from acms.ingest.symbols import SymbolRows, wins
from acms.ingest.walker import ListedFile, Listing, escape_path
from acms.memory import release_freed
from acms.ontology import rules as ontology_rules
from acms.retrieval.corpus_spill import SpillWriter, spill_path
from acms.service.indexing.context import RunContext
from acms.sparql import catalog
from acms.store.oxigraph import load_nquads
from acms.validation.batch import (check_batch, check_lines, check_links, describe, quarantine_warning, rejection,
                                   split_by_file)
from acms.vocab import RDF, TIER_WARM, UKO

__all__ = ["GROUP_BYTES", "GROUP_FILES", "OldIndex", "StreamedFirstIndex", "prepare_spill", "stream_first_index"]

# Files per group, and bytes of source, at most. A group is one bulk load, and RocksDB compacts after
# each: with a standard library's index at 1.45M quads, 192 files / 2 MB -> 384 / 4 MB
# cut the compaction threads' CPU 16.0 / 14.4 -> 10.3 / 10.1 s and all processes' 88.5 / 84.1 -> 82.0
# / 80.5 s (interleaved runs); `bench/ingest.py --scale 1,4` 1x 49.0 s, 4x 203.9 s, 737 / 889 MB for
# all processes. A group's bulk load and staging grow with it: 768 / 8 MB compacted less still (~7 s)
# but took 1,046 / 1,383 MB.
GROUP_FILES = 384
GROUP_BYTES = 4 << 20
EDGE_GROUP = 20_000  # edges validated and written at once
# Groups the workers read and extract ahead of the one being written. With their lower priority
# (pipeline.WORKER_NICENESS) one group ahead left the writer waiting for them 6.9 / 8.5 s of a 1x
# standard library, two 4.8 / 3.8 s (files' phases 52.3 / 46.0 -> 44.1 / 46.6 s, interleaved runs; the
# peak of all processes no higher: 740 / 766 -> 742 / 700 MB). The one `--scale 1,4` run with two took
# 470.8 s at 4x (4.70x its 1x of 100.1 s) at 948 MB; one ahead, an hour before and right after:
# 362.9 s (4.02x) / 924 MB and 473.9 s (3.81x, the 1x 124.4 s) / 926 MB. The machine's speed moved
# more than the setting can; two is left for a 4x A/B on a quieter machine.
GROUPS_AHEAD = 1


class Written(Protocol):
    """What the old index's side reads of a file about to be loaded (an ``emit.FileBatch``, or a file
    emitted in a worker): its entities, and its quads or their N-Quads text (asked for only when its
    content changed)."""

    @property
    def entities(self) -> dict[str, NamedNode]: ...

    @property
    def quads(self) -> list[Quad]: ...

    def nquads(self) -> bytes: ...


class OldIndex(Protocol):
    """The old index's side of a streamed run that redoes every file of an existing index: called
    around the groups (:class:`acms.service.indexing.reindex.StreamedReindex`)."""

    fresh: bool  # the old index was set aside (started over): the store holds none of its files' triples

    def begin(self) -> None: ...

    def before_load(self, sources: Sequence[SourceFile], kept: dict[str, Written]) -> None: ...

    def finish(self) -> None: ...


class _EmittedBatch:
    """A file emitted in a worker, as the old index's side reads it (its quads parsed when asked)."""

    def __init__(self, done: EmittedFile) -> None:
        self._done = done

    @property
    def entities(self) -> dict[str, NamedNode]:
        return self._done.entities

    @property
    def quads(self) -> list[Quad]:
        return list(parse(self._done.nquads, format=RdfFormat.N_QUADS))

    def nquads(self) -> bytes:
        return self._done.nquads


class StreamedFirstIndex:
    """The write mode of a first index (no file stored yet, no extension rules), in this process."""

    def write(self, run: RunContext, listing: Listing) -> None:
        prepare_spill(run)
        stream_first_index(run, listing)


def prepare_spill(run: RunContext) -> None:
    """A first index spills its corpus rows for the caches' build, when the run has a cache directory."""
    if run.layout is not None:  # the caches' build reads the files' corpus rows from a spill
        run.corpus_spill = spill_path(run.layout.cache, run.stamp)
        run.spill_whole = not run.store.ask(catalog.text("index/any-searchable-fragment"))


def groups(files: list[ListedFile]) -> Iterator[list[ListedFile]]:
    """The listed files in groups of at most ``GROUP_FILES`` files and ``GROUP_BYTES`` bytes; every ADR
    file in the last group."""
    adrs = [f for f in files if is_adr_path(f.path)]
    rest = [f for f in files if not is_adr_path(f.path)]
    group: list[ListedFile] = []
    size = 0
    for f in rest:
        if group and (len(group) >= GROUP_FILES or size + f.size > GROUP_BYTES):
            yield group
            group, size = [], 0
        group.append(f)
        size += f.size
    if group:
        yield group
    if adrs:
        yield adrs


def stream_first_index(run: RunContext, listing: Listing, reindex: OldIndex | None = None) -> None:
    """Write every listed file into the (empty) store of ``run``, group by group; then edges and tree.
    ``reindex``: the store holds an index whose every file is redone (:mod:`acms.service.indexing.reindex`
    clears its old triples group by group). A first index, and a re-index that started over, spill their
    corpus rows to ``run.corpus_spill`` (:mod:`acms.retrieval.corpus_spill`), complete only if this returns."""
    if reindex is not None:
        reindex.begin()
        if run.corpus_spill is not None and reindex.fresh:  # the store holds only what was not the files'
            run.spill_whole = not run.store.ask(catalog.text("index/any-searchable-fragment"))
    spill = SpillWriter(run.corpus_spill) if run.corpus_spill is not None and (reindex is None or reindex.fresh) else None
    try:
        _stream(run, listing, reindex, spill)
    except BaseException:
        if spill is not None:
            spill.discard()
        raise
    if spill is not None:
        spill.close()


def _stream(run: RunContext, listing: Listing, reindex: OldIndex | None, spill: SpillWriter | None) -> None:
    report, store, settings, progress = run.report, run.store, run.settings, run.progress
    all_paths = {f.path for f in listing.files}
    checks = None  # the shipped shapes: a streamed run has no extensions with rules (see the module doc)
    if run.extensions:
        checks = list(ontology_rules.all_checks(run.extensions))
    project = run.minter.project()
    promised = [(project, UKO.Project)]
    code: dict[str, Extraction] = {}  # path -> slim extraction (Python modules that parsed)
    symbols: dict[str, tuple[NamedNode, str]] = {}  # qualified name -> (IRI, class local name)
    run.symbols = SymbolRows("", {})  # every entity's (qualified name, class): left for the next run's linking
    written: list[str] = []  # paths whose triples are in the store
    report.first_run = reindex is None
    report.files_listed = 0
    done = 0

    # Emitted and validated beside the extraction (acms.ingest.emitted): a first index, or a re-index that
    # started over (the store holds none of the old files' triples), with the shipped shapes, but for the
    # ADR files' group. A re-index that deletes as it goes validates against a store still holding them.
    emitting = (EmitSettings(run.minter, TIER_WARM.value, run.generated_at, spill is not None)
                if (reindex is None or reindex.fresh) and checks is None else None)
    progress.start("indexing", len(listing.files))
    with ExtractorPool(all_paths, settings.window_lines) as pool:
        pending: deque[Reading] = deque()
        for group in [*groups(listing.files), *[None] * GROUPS_AHEAD]:  # the workers read and extract ahead
            if group is not None:
                with run.timed("reading"):  # at once in a worker; here when the project is too small for the pool
                    here = None if any(is_adr_path(f.path) for f in group) else emitting
                    pending.append(pool.submit_files(group, settings.max_file_bytes, settings.store_secrets, here))
            if len(pending) > (GROUPS_AHEAD if group is not None else 0):
                with run.timed("reading"):  # reading, scrubbing and parsing, in the workers: waited for here
                    got = pending.popleft().result()
                for reason, paths in got.skipped.items():
                    report.skipped.setdefault(reason, []).extend(paths)
                report.secrets_removed.update(got.secrets_removed)
                report.files_listed += len(got.sources)
                if got.emitted is not None:
                    _write_emitted(run, got, promised, code, symbols, written, spill, reindex)
                else:
                    _write_group(run, got.sources, got.extracted, all_paths, checks, promised, code, symbols, written,
                                 reindex, spill)
                done += len(got.sources) + sum(len(p) for p in got.skipped.values())
                progress.update(done)
                del got
            release_freed()  # the written group's texts and triples: memory stays flat in the project's size
    progress.finish("indexing")
    for paths in report.skipped.values():
        paths.sort()

    report.files_indexed = len(written)
    if reindex is not None:
        reindex.finish()
    if not written:  # every file quarantined, or nothing to index: the store stays as it is
        report.up_to_date = not listing.files
        return
    with run.timed("linking"):
        kinds = {qn: kind for qn, (_, kind) in symbols.items()}
        edges = emit.emit_edges(resolve_edges(code, kinds, all_paths), symbols, TIER_WARM)
        code.clear()
        tree = emit.emit_tree(run.minter, escape_path(run.root.name), escape_path(str(run.root)), sorted(written),
                              TIER_WARM)
    # the class of every entity an edge links: each was written by this run with that one class (a first
    # index, or a re-index that started over: the store held none of the old files' triples); a re-index
    # that deleted as it went asks the store (a standard library's migration: ~1.6 s)
    known = ({iri.value: UKO[kind].value for iri, kind in symbols.values()}
             if reindex is None or reindex.fresh else None)
    for start in range(0, len(edges), EDGE_GROUP):
        part = edges[start : start + EDGE_GROUP]
        with run.timed("validation"):
            violations = check_links(store, part, checks, known)
        if violations:
            raise rejection(violations, part)
        with run.timed("store"):
            store.load(part, bulk=True)
    with run.timed("validation"):
        violations = check_batch(store, tree, checks)
    if violations:
        raise rejection(violations, tree)
    report.triples_written += len(edges) + len(tree)
    with run.timed("store"):
        store.load(tree + run.index_run_quads(), bulk=True)
        store.flush()


def _write_group(run: RunContext, sources: list[SourceFile], results: list[Extracted], all_paths: set[str],
                 checks: list | None, promised: list[tuple[NamedNode, NamedNode]], code: dict[str, Extraction],
                 symbols: dict[str, tuple[NamedNode, str]], written: list[str],
                 reindex: OldIndex | None = None, spill: SpillWriter | None = None) -> None:
    """Emit, validate (quarantining files that fail) and write one group of files (read and extracted)."""
    report, store = run.report, run.store
    batches: dict[str, emit.FileBatch] = {}
    extractions: dict[str, Extraction] = {}
    with run.timed("emitting"):
        for source, (ext, frags) in zip(sources, results, strict=True):
            if ext is not None:
                extractions[source.path] = ext
                if ext.parse_error:
                    report.parse_errors[source.path] = ext.parse_error
            batches[source.path] = emit.emit_file(
                run.minter, source, ext, frags, TIER_WARM, run.generated_at,
                secrets=report.secrets_removed.get(source.path),
            )
        adrs = adr_batch(store, run.minter, sources, all_paths, TIER_WARM, run.generated_at)
    keep = list(sources)
    # The group as N-Quads text, validated as text (validation.native) and bulk-loaded by Oxigraph
    # without a Python object per quad; the Quad objects are only made when a file must be quarantined
    # (or a line is in another graph).
    with run.timed("validation"):
        lines = chain((line for s in keep for line in batches[s.path].lines), (f"{q} .\n" for q in adrs.quads))
        found = check_lines(store, lines, TIER_WARM, checks, promised)
    quads: list[Quad] | None = None
    if found == []:
        written_quads = sum(len(batches[s.path].lines) for s in keep) + len(adrs.quads)
    else:
        keep, quads = _quarantine(run, keep, batches, adrs, all_paths, checks, promised)
        written_quads = len(quads)
    if reindex is not None:  # the old versions of the group's files go first (quarantined ones too)
        reindex.before_load(sources, {s.path: batches[s.path] for s in keep})
    if not written_quads:
        return
    with run.timed("store"):
        if quads is None:  # the bytes made only now: validation's own index of the lines is gone by now
            data = b"".join(batches[s.path].nquads() for s in keep)
            if adrs.quads:
                data += serialize(adrs.quads, format=RdfFormat.N_QUADS)
            load_nquads(store, data)
            del data
        else:
            store.load(quads, bulk=True)
    report.triples_written += written_quads
    if spill is not None:
        rows = [row for s in keep for row in batches[s.path].corpus]
        others = [text for s in keep for text in batches[s.path].other_texts]
        if adrs.quads or quads is not None:  # the decisions' texts, from what was written (quarantine redoes the ADRs)
            known = {row[0] for row in rows} | {frag for frag, _ in others}
            others += [t for t in _micro_texts(adrs.quads if quads is None else quads) if t[0] not in known]
        places = None  # after a quarantine (or for a batch made otherwise) the store is asked for every place
        made = [m for s in keep if (m := batches[s.path].places) is not None]
        if quads is None and len(made) == len(keep):
            decisions = _quad_places(adrs.quads)
            places = emit.Places([path for m in made for path in m.paths] + decisions.paths,
                                 [o for m in made for o in m.owners] + decisions.owners)
        spill.add(rows, others, places)
    for s in keep:
        batch, ext = batches[s.path], extractions.get(s.path)
        run.keep_outline(s.path, s.sha256, ext)
        _landed(run, s.path, None if ext is None else slim(ext), batch.entities,
                len(ext.sections) if ext is not None else 0, batch.fragment_count, code, symbols, written)


def _write_emitted(run: RunContext, got: ReadGroup, promised: list[tuple[NamedNode, NamedNode]],
                   code: dict[str, Extraction], symbols: dict[str, tuple[NamedNode, str]], written: list[str],
                   spill: SpillWriter | None, reindex: OldIndex | None = None) -> None:
    """Write one group emitted and validated in the workers (quarantining the files that fail)."""
    report, store = run.report, run.store
    assert got.emitted is not None
    kept: list[tuple[SourceFile, Extraction | None, EmittedFile]] = []
    quarantined: list[str] = []
    for source, (ext, _), done in zip(got.sources, got.extracted, got.emitted, strict=True):
        for phase, seconds in done.seconds.items():
            key = f"{phase} (per file)"  # where the file was read: a pool worker, or here for a small project
            report.timings[key] = report.timings.get(key, 0.0) + seconds
        if ext is not None and ext.parse_error:
            report.parse_errors[source.path] = ext.parse_error
        violations = done.violations
        if violations is None:  # a link only the store can type: decided here, as in a group
            with run.timed("validation"):
                lines = [f"{line}\n" for line in done.nquads.decode("utf-8").split("\n")[:-1]]  # not splitlines:
                violations = check_lines(store, lines, TIER_WARM, None, promised)  # a literal may hold U+2028
            if violations is None:
                violations = check_batch(store, list(parse(done.nquads, format=RdfFormat.N_QUADS)), None, promised)
        if violations:
            quads = list(parse(done.nquads, format=RdfFormat.N_QUADS))
            split = split_by_file(violations, quads, {source.path})
            if split.unattributed or not split.by_file:
                raise rejection(violations, quads)
            report.quarantined[source.path] = describe(violations)
            report.parse_errors.pop(source.path, None)
            quarantined.append(source.path)
            continue
        kept.append((source, ext, done))
    if quarantined:
        report.warnings.append(quarantine_warning(quarantined))
    if reindex is not None:  # the old versions of the group's files go first (quarantined ones too)
        reindex.before_load(got.sources, {source.path: _EmittedBatch(done) for source, _, done in kept})
    if not kept:
        return
    with run.timed("store"):
        load_nquads(store, b"".join(done.nquads for _, _, done in kept))
    report.triples_written += sum(done.quads for _, _, done in kept)
    if spill is not None:
        spill.add_records(done.spill for _, _, done in kept)
    for source, ext, done in kept:
        run.keep_outline(source.path, source.sha256, ext)
        _landed(run, source.path, ext, done.entities, done.sections, done.fragment_count, code, symbols, written)


def _landed(run: RunContext, path: str, ext: Extraction | None, entities: dict[str, NamedNode], sections: int,
            fragments: int, code: dict[str, Extraction], symbols: dict[str, tuple[NamedNode, str]],
            written: list[str]) -> None:
    """A file whose triples are in the store: counted, and what linking needs of it kept (``ext``
    slimmed already: :func:`acms.ingest.pipeline.slim`)."""
    written.append(path)
    run.report.entities += len(entities) + sections
    run.report.fragments += fragments
    if ext is not None:
        rows = run.symbols.rows if run.symbols is not None else {}
        for sym in ext.symbols:
            if sym.qualname in entities:
                entity = entities[sym.qualname]
                held = symbols.get(sym.qualname)
                if wins(entity.value, sym.kind.value, None if held is None else (held[0].value, held[1])):
                    symbols[sym.qualname] = (entity, sym.kind.value)
                row = rows.get(entity.value)
                if row is None or sym.kind.value < row[1]:  # as symbols.entity_rows keeps one class per entity
                    rows[entity.value] = (sym.qualname, sym.kind.value)
        if ext.parse_error is None and ext.module:
            code[path] = ext


def _quad_places(quads: list[Quad]) -> emit.Places:
    """What the ranking places are made of among ``quads`` (an ADR group's decisions), as ``emit_file``
    says it of a file's triples."""
    types: dict[str, list[str]] = {}
    held: dict[str, list[str]] = {}
    defines: dict[str, list[str]] = {}
    lods: dict[str, str] = {}
    paths = []
    for q in quads:
        s, p, o = q.subject.value, q.predicate, q.object.value
        if p == RDF.type:
            types.setdefault(s, []).append(o)
        elif p == UKO.hasFragment:
            held.setdefault(s, []).append(o)
        elif p == UKO.defines:
            defines.setdefault(s, []).append(o)
        elif p == UKO.lod:
            lods[s] = o
        elif p == UKO.path:
            paths.append((s, o))
    owners = []
    for owner, frags in sorted(held.items()):
        micro = sorted(f for f in frags if lods.get(f) == "micro")
        inners = [inner for inner in defines.get(owner, ()) if UKO.Function.value in types.get(inner, ())]
        for cls in types.get(owner, ()):  # a decision is no Python function: its language does not count
            owners.append((owner, cls, inners, "", micro, sorted(f for f in frags if lods.get(f) == "macro")))
    return emit.Places(paths, owners)


def _micro_texts(quads: list[Quad]) -> list[tuple[str, str]]:
    """(fragment, text) of the micro fragments among ``quads`` (an ADR batch's decisions)."""
    micro = {q.subject.value for q in quads if q.predicate == UKO.lod and q.object.value == "micro"}
    return [(q.subject.value, q.object.value) for q in quads if q.predicate == UKO.text and q.subject.value in micro]


def _quarantine(run: RunContext, keep: list[SourceFile], batches: dict[str, emit.FileBatch], adrs: AdrBatch,
                all_paths: set[str], checks: list | None, promised: list[tuple[NamedNode, NamedNode]]
                ) -> tuple[list[SourceFile], list[Quad]]:
    """Validate the group as Quad objects, leaving out each file that fails the shapes until the rest
    conforms: the files kept and their quads."""
    report, store = run.report, run.store
    while True:
        quads = [q for s in keep for q in batches[s.path].quads] + adrs.quads
        with run.timed("validation"):
            violations = check_batch(store, quads, checks, promised)
        if not violations:
            return keep, quads
        split = split_by_file(violations, quads, {s.path for s in keep})
        if split.unattributed or not split.by_file:
            raise rejection(violations, quads)
        for path, found in sorted(split.by_file.items()):
            report.quarantined[path] = describe(found)
            report.parse_errors.pop(path, None)
        names = sorted(split.by_file)
        report.warnings.append(quarantine_warning(names))
        keep = [s for s in keep if s.path not in split.by_file]
        if any(is_adr_path(p) for p in names):  # an ADR's decision may link to the one left out
            adrs = adr_batch(store, run.minter, keep, all_paths, TIER_WARM, run.generated_at)

