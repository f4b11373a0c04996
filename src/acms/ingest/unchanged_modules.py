"""The Python modules a run did not extract, read when its edges' resolution passes through them.

A run that extracts only the changed files (a refresh, an ``acms index`` after edits) resolves their
names against the symbol table of every file; but what another module's imports bind and what its
classes inherit are in that module's code, not in the table: ``from a import X``, where
``a/__init__.py`` imports ``X`` from ``b.c``, needs ``a``'s imports, and ``self.helper()`` in a class
derived from one defined elsewhere needs that class's bases. A first index has every file's
extraction; here the ones a lookup passes through are read and parsed again by the first index's
Python extraction. Nothing of them is written (their own edges did not change), only the links that
resolve through them, so they are not scrubbed.

Each is first looked up among the outlines earlier runs kept (:mod:`acms.ingest.link_outlines`, by the
content hash the graph holds of it): a 300-file branch switch of the standard library passes through
315 of them, 5.9 MB whose parsing took ~3.5 s of CPU. What is not kept there is parsed: a run that parses
in worker processes has the modules its files import parsed in two more (``prefetch``) while it relinks
(its files are emitted in the workers that parsed them; with one, the switch took 0.5-0.7 s longer); the
others when first asked for; the run then keeps their outlines. A long-lived process (a server
refreshing after every save) also keeps what it parsed while the file's size and mtime stay
(``MEMO_SIZE`` modules).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection, Iterable, Mapping
from concurrent.futures import Future, ProcessPoolExecutor

from acms.ingest.extractors import PARSE_MAX_BYTES, python_extraction
from acms.ingest.kept import MISSING, ByFileVersion
from acms.ingest.model import Extraction
from acms.ingest.link_outlines import LinkOutlines, link_outline, link_outline_key
from acms.ingest.python_extractor import module_name_for, module_names
from acms.ingest.walker import ListedFile, SkipReason, language_for, read_source
from acms.lifetime import helper_result, helper_start, pool_context

__all__ = ["UnchangedModules"]

PREFETCH_MIN = 16  # modules worth starting worker processes for (each ~5-10 ms to parse)


class UnchangedModules:
    """Module name -> the extraction of the project's Python file of that name that the run did not read
    (``context`` of :func:`acms.ingest.python_resolver.resolve_edges`); None for any other name."""

    def __init__(self, files: Iterable[ListedFile], all_paths: Collection[str], read: Collection[str],
                 max_file_bytes: int | None, outlines: LinkOutlines | None = None,
                 hashes: Mapping[str, str] | None = None) -> None:
        """``read``: the paths the run extracted itself. ``outlines``: the kept outlines, found by each
        file's content hash in ``hashes`` (the graph's: a file the run did not read is as indexed)."""
        self._files = {f.path: f for f in files if f.path not in read and language_for(f.path) == "python"}
        self._all_paths = all_paths if isinstance(all_paths, set) else set(all_paths)
        self._max_bytes = max_file_bytes
        self._outlines, self._hashes = outlines, hashes or {}
        self._paths: dict[str, str] | None = None  # module name -> path, built on the first question
        self._parsed: dict[str, Extraction | None] = {}  # path -> what the outlines or the workers gave
        self._pool: ProcessPoolExecutor | None = None
        self._futures: list[Future[list[tuple[str, Extraction | None]]]] = []
        self.extracted: list[str] = []  # the paths parsed in this process, for tests
        self.parsed: dict[str, Extraction] = {}  # outline key -> the outline of a module parsed here or in the workers

    def _path_of(self, module: str) -> str | None:
        if self._paths is None:
            names = _module_names(self._all_paths)
            self._paths = {}
            for path in sorted(self._files):
                self._paths.setdefault(names.get(path) or module_name_for(path, self._all_paths), path)
        return self._paths.get(module)

    def _key(self, path: str, module: str) -> str | None:
        digest = self._hashes.get(path)
        return None if not digest else link_outline_key(digest, module, path)

    def _kept(self, wanted: Mapping[str, str]) -> None:
        """The kept outlines of ``wanted`` (path -> module name) into ``_parsed``."""
        if self._outlines is None:
            return
        keys = {key: path for path, module in wanted.items() if (key := self._key(path, module)) is not None}
        for key, ext in self._outlines.get(keys).items():
            self._parsed[keys[key]] = ext

    def prefetch(self, extractions: Iterable[Extraction], workers: int) -> None:
        """Start parsing, in ``workers`` processes, the modules the extractions import (and the packages
        around them): those their names' resolution passes through first."""
        wanted: set[str] = set()
        for ext in extractions:
            for imp in ext.imports if ext.language == "python" else ():
                parts = (f"{imp.module}.{imp.name}" if imp.name and imp.name != "*" else imp.module).split(".")
                wanted.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        modules = {p: m for m in sorted(wanted) if (p := self._path_of(m)) is not None}
        self._kept(modules)
        paths = sorted(p for p in modules if p not in self._parsed)
        if len(paths) < PREFETCH_MIN:
            return
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=pool_context(), initializer=helper_start,
                                         initargs=(os.getpid(),))
        size = max(8, len(paths) // (workers * 4))
        self._futures = [self._pool.submit(_parse, [self._files[p] for p in paths[i:i + size]], self._all_paths,
                                           self._max_bytes) for i in range(0, len(paths), size)]

    def __call__(self, module: str) -> Extraction | None:
        self._settle()
        path = self._path_of(module)
        if path is None:
            return None
        if path not in self._parsed:
            self._kept({path: module})
        if path in self._parsed:
            return self._parsed[path]
        self.extracted.append(path)
        ext = _parse_one(self._files[path], self._all_paths, self._max_bytes)
        self._note(path, ext)
        return ext

    def _note(self, path: str, ext: Extraction | None) -> None:
        """A module parsed: its outline, to keep for the next runs."""
        if ext is not None and ext.module and (key := self._key(path, ext.module)) is not None:
            self.parsed[key] = ext

    def _settle(self) -> None:
        """What the workers parsed, once they are done; the pool is let go then."""
        if self._pool is None:
            return
        try:
            for future in self._futures:
                for path, ext in helper_result(future, "a worker parsing the modules linking reads"):
                    self._parsed[path] = ext
                    self._note(path, ext)
        finally:
            self.close()

    def close(self) -> None:
        """Stop the workers (a failed run: what they parse is not waited for)."""
        pool, self._pool, self._futures = self._pool, None, []
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


MEMO_SIZE = 512  # modules a long-lived process keeps parsed (a server refreshing after every save)
# what resolution reads of a module, by file version (and module name): a process that refreshes again
# and again (acms mcp, acms serve, acms watch) parsed the same modules a saved file imports on every
# save (~0.1 s of a standard library module's refresh)
_parsed: ByFileVersion[Extraction | None] = ByFileVersion(MEMO_SIZE)
_names_lock = threading.Lock()
_names_memo: list[tuple[frozenset[str], dict[str, str]]] = []  # the last project listing's module names


def _module_names(all_paths: set[str]) -> dict[str, str]:
    """Path -> module name of each Python file among ``all_paths``; a long-lived process keeps those of
    the last listing (a save changes no path: naming ~1,900 modules took ~40 ms of each refresh of a
    standard library module)."""
    key = frozenset(all_paths)
    with _names_lock:
        if _names_memo and _names_memo[0][0] == key:
            return _names_memo[0][1]
    names = module_names([p for p in all_paths if language_for(p) == "python"], all_paths)
    with _names_lock:
        _names_memo[:] = [(key, names)]
    return names


def _parse_one(listed: ListedFile, all_paths: set[str], max_bytes: int | None) -> Extraction | None:
    key = _parsed.key(listed, module_name_for(listed.path, all_paths))
    kept = _parsed.get(key, MISSING)
    if kept is not MISSING:
        return kept  # type: ignore[return-value]  (not MISSING: a kept extraction, or None)
    got = read_source(listed, max_bytes)
    if isinstance(got, SkipReason) or got.size > PARSE_MAX_BYTES:  # not parsed by a first index either
        return None  # (or gone, or turned odd, since it was listed: the next run sees it)
    ext = link_outline(python_extraction(listed.path, got.text, all_paths))
    _parsed.keep(key, ext, listed, got.size)
    return ext


def _parse(files: list[ListedFile], all_paths: set[str], max_bytes: int | None) -> list[tuple[str, Extraction | None]]:
    """A worker's share: each file's extraction with only what resolution reads of it, so little is sent back."""
    return [(listed.path, _parse_one(listed, all_paths, max_bytes)) for listed in files]
