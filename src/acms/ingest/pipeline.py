"""Ingest's steps for one run: read the listed files, extract them (in worker processes when there
are many), and the store lookups the batch needs (symbol table, vanished entities). The run that
strings them together is :class:`acms.service.indexing.IndexRun`.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from pyoxigraph import NamedNode

from acms.ingest.digest import content_digest
from acms.ingest.extractors import extract
from acms.ingest.fragments import FragmentSpec
from acms.ingest.model import Extraction, SourceFile
from acms.ingest.walker import ListedFile, Listing, SkipReason, language_for, read_source
from acms.lifetime import helper_result, helper_start, pool_context
from acms.sparql import catalog
from acms.store.protocol import GraphStore

if TYPE_CHECKING:
    from acms.ingest.emitted import CheckedBatch, EmitSettings, EmittedFile



def read_sources(listing: Listing, skipped: dict[str, list[str]], secrets_removed: dict[str, dict[str, int]],
                 max_file_bytes: int | None = None, keep_secrets: bool = False,
                 progress: Callable[[int], object] | None = None,
                 unchanged: Mapping[str, str] | None = None,
                 trusted: Mapping[str, str] | None = None) -> list[SourceFile]:
    """Read every listed file once; one that vanished, changed while read, or is no text is skipped
    (its path added to ``skipped`` under the reason).

    Secrets are replaced by ``[REDACTED:kind]`` here, before anything is extracted, so no fragment,
    ADR, export, search hit or SPARQL answer can hold one (``store_secrets`` turns this off); what was
    removed is counted in ``secrets_removed``. ``unchanged`` (path -> stored content hash): a file whose
    hash is the stored one comes back with an empty text, neither scrubbed nor kept (the run does not
    re-extract it). ``trusted`` (path -> stored content hash): files a look at their size and mtime
    found unchanged (:mod:`acms.service.freshness`), not read at all; they come back as unchanged ones do."""
    from acms.privacy import scrub  # the detector stack is only imported by the writer

    sources = []
    for i, listed in enumerate(listing.files):
        if progress is not None and i % 64 == 0:
            progress(i)
        if trusted is not None and listed.path in trusted:
            sources.append(SourceFile(listed.path, "", listed.size, trusted[listed.path], language_for(listed.path)))
            continue
        got = read_source(listed, max_file_bytes)
        if isinstance(got, SkipReason):
            skipped.setdefault(got.value, []).append(listed.path)
            continue
        text = got.text
        digest = content_digest(text, keep_secrets)
        if unchanged is not None and unchanged.get(listed.path) == digest:
            sources.append(SourceFile(listed.path, "", got.size, digest, language_for(listed.path)))
            continue
        if not keep_secrets:
            scrubbed = scrub(text, listed.path)
            if scrubbed.findings:
                text = scrubbed.text
                secrets_removed[listed.path] = scrubbed.kinds
        sources.append(SourceFile(listed.path, text, got.size, digest, language_for(listed.path)))
    for paths in skipped.values():
        paths.sort()
    if progress is not None:
        progress(len(listing.files))
    return sources


PARALLEL_MIN_FILES = 64


Extracted = tuple[Extraction | None, list[FragmentSpec]]  # a file's extraction and fragments


def extract_chunk(chunk: list[SourceFile], all_paths: set[str], window: int) -> list[Extracted]:
    return [extract(source, all_paths, window) for source in chunk]


def worker_count() -> int:
    """The worker processes a pool of this run's extraction starts: every core, at most four."""
    return min(os.cpu_count() or 1, 4)


def in_workers(files: int) -> bool:
    """Whether ``extract_all`` parses that many files in worker processes (the caller waits meanwhile)."""
    return files >= PARALLEL_MIN_FILES and worker_count() >= 2


def extract_all(sources: list[SourceFile], all_paths: set[str], window: int,
                emitting: EmitSettings | None = None, secrets: Mapping[str, dict[str, int]] | None = None
                ) -> Iterator[tuple[Extraction | None, list[FragmentSpec], CheckedBatch | None]]:
    """Parse in worker processes when there is enough work: ast is CPU-bound and holds the GIL.
    ``emitting``: the workers also emit and validate each file (``emitted.emit_checked``, with its
    ``secrets``); the third item is None for a file parsed here."""
    workers = worker_count()
    if not in_workers(len(sources)):
        for source in sources:
            yield (*extract(source, all_paths, window), None)
        return
    size = max(16, len(sources) // (workers * 8))
    chunks = [sources[i : i + size] for i in range(0, len(sources), size)]
    with refresh_pool(workers) as pool:
        for future in [pool.submit(_extract_and_emit, chunk, all_paths, window, emitting,
                                   {s.path: secrets[s.path] for s in chunk if s.path in secrets}
                                   if secrets and emitting is not None else {})
                       for chunk in chunks]:
            yield from helper_result(future, "a worker extracting the files")


def refresh_pool(workers: int) -> ProcessPoolExecutor:
    """The pool an incremental run's files are parsed in: its workers at ``WORKER_NICENESS``, as a streamed
    index's (the run reads the replaced files' old quads meanwhile)."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=pool_context(), initializer=_start_niced,
                               initargs=(os.getpid(),))


def _extract_and_emit(chunk: list[SourceFile], all_paths: set[str], window: int, emitting: EmitSettings | None,
                      secrets: dict[str, dict[str, int]]
                      ) -> list[tuple[Extraction | None, list[FragmentSpec], CheckedBatch | None]]:
    extracted = extract_chunk(chunk, all_paths, window)
    if emitting is None:
        return [(ext, frags, None) for ext, frags in extracted]
    from acms.ingest.emitted import emit_checked

    checked = emit_checked(emitting, [(source, ext, frags, secrets.get(source.path))
                                      for source, (ext, frags) in zip(chunk, extracted, strict=True)])
    return [(ext, frags, c) for (ext, frags), c in zip(extracted, checked, strict=True)]


_WORKER: dict[str, object] = {}  # a pool worker's run settings (every listed path, window lines), set once


# The pool's workers run at a lower priority than the process that writes. The writer
# (emit, validate, bulk-load a group) is a streamed index's bottleneck: the workers read ahead
# (``indexing.stream.GROUPS_AHEAD``) and then wait, but at equal priority the three processes shared
# two cores evenly and the writer got about two thirds of one. Measured with one group ahead, standard library, 1x, interleaved runs on the same machine, the files'
# phases (reading + emitting + validation + store + linking): niceness 0: 52.8 / 54.2 s; 5: 47.6 /
# 52.4; 10: 45.9 / 50.4; 19: 51.6 (the workers then fall behind: the writer waited 9.4 s for them).
# It also keeps a large index from starving a server or an agent's commands on the same machine.
WORKER_NICENESS = 10


def _init_worker(all_paths: set[str], window: int, owner: int) -> None:
    """``owner``: the process whose pool this is; the worker ends with it (a ``kill -9`` of ``acms index``
    left the pool's forkserver and workers idle forever, :mod:`acms.lifetime`)."""
    _WORKER["paths"], _WORKER["window"] = all_paths, window
    _start_niced(owner)


def _start_niced(owner: int) -> None:
    """A pool worker's start, at ``WORKER_NICENESS``: the process that waits for it has work of its own
    meanwhile, and a server may answer beside it."""
    helper_start(owner)
    if hasattr(os, "nice"):  # POSIX
        os.nice(WORKER_NICENESS)


def _extract_in_worker(chunk: list[SourceFile]) -> list[Extracted]:
    return extract_chunk(chunk, _WORKER["paths"], _WORKER["window"])  # type: ignore[arg-type]


@dataclass
class ReadGroup:
    """A group of listed files read (secrets scrubbed) and extracted: what ``read_sources`` and
    ``extract_chunk`` give, with the skipped paths and removed secrets they reported."""

    sources: list[SourceFile] = field(default_factory=list)
    skipped: dict[str, list[str]] = field(default_factory=dict)
    secrets_removed: dict[str, dict[str, int]] = field(default_factory=dict)
    extracted: list[Extracted] = field(default_factory=list)
    emitted: list[EmittedFile] | None = None  # each source's triples, when emitted where it was read

    def merge(self, other: ReadGroup) -> None:
        self.sources += other.sources
        for reason, paths in other.skipped.items():
            self.skipped.setdefault(reason, []).extend(paths)
        self.secrets_removed.update(other.secrets_removed)
        self.extracted += other.extracted
        if other.emitted is not None:
            self.emitted = (self.emitted or []) + other.emitted


def read_and_extract(files: list[ListedFile], all_paths: set[str], window: int, max_file_bytes: int | None,
                     keep_secrets: bool, emitting: EmitSettings | None = None) -> ReadGroup:
    """Read, scrub and extract one group of files (in a pool worker, beside the writer);
    ``emitting``: emit and validate them too (:mod:`acms.ingest.emitted`), and keep of each extraction
    only what linking reads."""
    got = ReadGroup()
    listing = Listing(Path("."), files, {}, False)
    got.sources = read_sources(listing, got.skipped, got.secrets_removed, max_file_bytes, keep_secrets)
    got.extracted = extract_chunk(got.sources, all_paths, window)
    if emitting is not None:
        from acms.ingest.emitted import emit_and_check

        got.emitted = emit_and_check(emitting, [(source, ext, frags, got.secrets_removed.get(source.path))
                                                for source, (ext, frags) in zip(got.sources, got.extracted, strict=True)])
        got.extracted = [(None if ext is None else slim(ext), []) for ext, _ in got.extracted]
        got.sources = [dataclasses.replace(source, text="") for source in got.sources]
    return got


def slim(ext: Extraction) -> Extraction:
    """What edge resolution reads of an extraction (symbols' names, nesting, bases and calls; imports)."""
    symbols = [dataclasses.replace(s, signature="", docstring=None, decorators=[]) for s in ext.symbols]
    return dataclasses.replace(ext, symbols=symbols, sections=[])


def _read_in_worker(files: list[ListedFile], max_file_bytes: int | None, keep_secrets: bool,
                    emitting: EmitSettings | None = None) -> ReadGroup:
    from acms.memory import release_freed

    try:
        return read_and_extract(files, _WORKER["paths"], _WORKER["window"], max_file_bytes, keep_secrets,  # type: ignore[arg-type]
                                emitting)
    finally:
        release_freed()  # a long-lived worker: what the chunk's texts and triples took goes back to the system


class ExtractorPool:
    """Extraction on every core for a whole run: one process pool, the listed paths sent once per worker,
    each at ``WORKER_NICENESS`` below the caller.

    ``submit(sources)`` starts the sources' ``(Extraction, fragments)``, in order, so the
    caller can hand in the next group of files while it emits and writes the previous one (the
    streaming first index). Few files, or one core, extract in this process instead.
    """

    def __init__(self, all_paths: set[str], window: int, workers: int | None = None) -> None:
        self.all_paths, self.window = all_paths, window
        self.workers = worker_count() if workers is None else workers
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> ExtractorPool:
        if self.workers >= 2 and len(self.all_paths) >= PARALLEL_MIN_FILES:
            ctx = pool_context()
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx, initializer=_init_worker,
                                             initargs=(self.all_paths, self.window, os.getpid()))
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def submit(self, sources: list[SourceFile]) -> Extracting:
        """Start extracting ``sources``; ``.result()`` waits for them (in order)."""
        if self._pool is None or len(sources) < 2:
            return Extracting([], extract_chunk(sources, self.all_paths, self.window))
        size = max(1, -(-len(sources) // (self.workers * 2)))
        return Extracting([self._pool.submit(_extract_in_worker, sources[i : i + size])
                           for i in range(0, len(sources), size)])


    def submit_files(self, files: list[ListedFile], max_file_bytes: int | None, keep_secrets: bool,
                     emitting: EmitSettings | None = None) -> Reading:
        """Start reading, scrubbing and extracting ``files`` (and emitting and validating them,
        with ``emitting``); ``.result()`` waits for them."""
        if self._pool is None or len(files) < 2:
            return Reading([], read_and_extract(files, self.all_paths, self.window, max_file_bytes, keep_secrets,
                                                emitting))
        size = max(1, -(-len(files) // (self.workers * 2)))
        return Reading([self._pool.submit(_read_in_worker, files[i : i + size], max_file_bytes, keep_secrets,
                                          emitting)
                        for i in range(0, len(files), size)])


class Reading:
    """One group of files being read and extracted in the pool (or done already)."""

    def __init__(self, parts: list[Future[ReadGroup]], done: ReadGroup | None = None) -> None:
        self._parts, self._done = parts, done

    def result(self) -> ReadGroup:
        if self._done is None:
            self._done = ReadGroup()
            for part in self._parts:
                self._done.merge(helper_result(part, "a worker reading the files"))
            self._parts = []
        return self._done


class Extracting:
    """The extraction of one group of files, running in the pool (or done already)."""

    def __init__(self, parts: list[Future[list[Extracted]]], done: list[Extracted] | None = None) -> None:
        self._parts, self._done = parts, done

    def result(self) -> list[Extracted]:
        if self._done is None:
            self._done = [r for part in self._parts for r in helper_result(part, "a worker extracting the files")]
            self._parts = []
        return self._done


def git_head(root: Path) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    head = out.stdout.strip()
    return head if out.returncode == 0 and len(head) == 40 else None


def entities_of(store: GraphStore, files: list[NamedNode]) -> set[NamedNode]:
    """The entities (not fragments) the stored ``files`` hold."""
    if not files:
        return set()
    return {r["entity"] for r in store.select(catalog.text("ingest/entities-of-files"), {"file": files})}  # type: ignore[misc]


def vanished(store: GraphStore, replaced_files: list[NamedNode], keep: set[NamedNode],
             entities: set[NamedNode] | None = None) -> list[NamedNode]:
    """The replaced files and their entities (``entities``, when the caller read them already) that
    ``keep`` does not hold again."""
    old = (entities_of(store, replaced_files) if entities is None else entities) | set(replaced_files)
    return sorted((e for e in old if isinstance(e, NamedNode) and e not in keep), key=lambda n: n.value)
