"""The Python modules a run did not extract, read when its edges' resolution passes through them.

A run that extracts only the changed files (a refresh, an ``acms index`` after edits) resolves their
names against the symbol table of every file; but what another module's imports bind and what its
classes inherit are in that module's code, not in the table: ``from a import X``, where
``a/__init__.py`` imports ``X`` from ``b.c``, needs ``a``'s imports, and ``self.helper()`` in a class
derived from one defined elsewhere needs that class's bases. A first index has every file's
extraction; here the few a lookup passes through are read and parsed again, on first use, by the
first index's Python extraction. Nothing of them is written (their own edges did not change), only the
links that resolve through them, so they are not scrubbed. A 300-file branch switch of the standard
library reads ~170 of them, ~5 ms each.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from acms.ingest.extractors import PARSE_MAX_BYTES, python_extraction
from acms.ingest.model import Extraction
from acms.ingest.python_extractor import module_name_for
from acms.ingest.walker import ListedFile, SkipReason, language_for, read_source

__all__ = ["UnchangedModules"]


class UnchangedModules:
    """Module name -> the extraction of the project's Python file of that name that the run did not read
    (``context`` of :func:`acms.ingest.python_resolver.resolve_edges`); None for any other name."""

    def __init__(self, files: Iterable[ListedFile], all_paths: Collection[str], read: Collection[str],
                 max_file_bytes: int | None) -> None:
        """``read``: the paths the run extracted itself."""
        self._files = {f.path: f for f in files if f.path not in read and language_for(f.path) == "python"}
        self._all_paths = all_paths if isinstance(all_paths, set) else set(all_paths)
        self._max_bytes = max_file_bytes
        self._paths: dict[str, str] | None = None  # module name -> path, built on the first question
        self.extracted: list[str] = []  # the paths read, for the run's report and tests

    def __call__(self, module: str) -> Extraction | None:
        if self._paths is None:
            self._paths = {}
            for path in sorted(self._files):
                self._paths.setdefault(module_name_for(path, self._all_paths), path)
        path = self._paths.get(module)
        if path is None:
            return None
        got = read_source(self._files[path], self._max_bytes)
        if isinstance(got, SkipReason) or got.size > PARSE_MAX_BYTES:  # not parsed by a first index either
            return None  # (or gone, or turned odd, since it was listed: the next run sees it)
        self.extracted.append(path)
        return python_extraction(path, got.text, self._all_paths)
