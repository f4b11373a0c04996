"""The first stage's derived cache: window and path postings plus where every fragment sits.

Built from the graph's current ``micro`` fragments (``search/corpus.rq``) in one pass and saved
beside the keyword index, keyed by the same graph state, so it is rebuilt whenever an index run
changes the graph. Three parts:

- ``windows``: BM25 over 40-line windows of each file (see :mod:`acms.ranking.windows`);
- ``paths``: BM25 over each file's path (folders and file name split like identifiers);
- ``where``: fragment IRI → (file number, start line, end line, 1 for a class body, 2 for a module
  header, else 0), to map
  fragment scores to files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from acms.errors import StoreError, StoreMissing
from acms.index.keyword import KeywordIndex, atomic_directory
from acms.ranking.roles import Role, role_of
from acms.ranking.windows import file_lines, windows

__all__ = ["CONTAINER", "FragmentRow", "RankingIndex"]

CONTAINER = {"Class": 1, "Module": 2}

FORMAT = "acms.ranking-index/3"


@dataclass(frozen=True)
class FragmentRow:
    frag: str
    path: str
    start: int
    end: int
    text: str
    container: int = 0  # CONTAINER: 1 a class (its body encloses its methods), 2 a module header


class RankingIndex:
    """Immutable; ``build`` from fragments or ``load`` from a cache directory."""

    def __init__(self, files: list[str], window_file: np.ndarray, window_lines: np.ndarray,
                 windows_index: KeywordIndex, paths_index: KeywordIndex,
                 where: dict[str, tuple[int, int, int, int]], key: str = "") -> None:
        self.files = files
        self.roles = [role_of(p) for p in files]
        self.window_file = window_file  # window number → file number
        self.window_lines = window_lines  # window number → (start, end)
        self.windows = windows_index
        self.paths = paths_index
        self.where = where
        self.key = key
        self._aligned: tuple[KeywordIndex, np.ndarray] | None = None

    @classmethod
    def build(cls, rows: Iterable[FragmentRow]) -> RankingIndex:
        rows = list(rows)
        lines = file_lines((r.path, r.start, r.text) for r in rows)
        files = sorted(lines)
        number = {p: i for i, p in enumerate(files)}
        wfile: list[int] = []
        wlines: list[tuple[int, int]] = []
        texts: list[str] = []
        for path in files:
            for w in windows(path, lines[path]):
                wfile.append(number[path])
                wlines.append((w.start, w.end))
                texts.append(w.text)
        windows_index = KeywordIndex.build([str(i) for i in range(len(texts))], texts)
        paths_index = KeywordIndex.build(files, files)
        where = {r.frag: (number[r.path], r.start, r.end, int(r.container)) for r in rows}
        return cls(files, np.asarray(wfile, dtype=np.int64), np.asarray(wlines, dtype=np.int64).reshape(-1, 2),
                   windows_index, paths_index, where)

    def aligned(self, fragments: KeywordIndex) -> np.ndarray:
        """``(file number, start, end, container)`` per id of ``fragments`` (file -1 when not in ``where``), memoised."""
        if self._aligned is None or self._aligned[0] is not fragments:
            rows = [self.where.get(f, (-1, 0, 0, 0)) for f in fragments.ids]
            self._aligned = (fragments, np.asarray(rows, dtype=np.int64).reshape(-1, 4))
        return self._aligned[1]

    def roles_array(self, factors: dict[Role, float]) -> np.ndarray:
        return np.asarray([factors[r] for r in self.roles], dtype=np.float64)

    # -- persistence ----------------------------------------------------------------------
    def save(self, directory: Path, *, key: str) -> None:
        with atomic_directory(Path(directory)) as tmp:
            self.windows.save(tmp / "windows")
            self.paths.save(tmp / "paths")
            np.save(tmp / "window_file.npy", self.window_file)
            np.save(tmp / "window_lines.npy", self.window_lines)
            meta = {"format": FORMAT, "key": key, "files": self.files,
                    "where": {f: list(v) for f, v in self.where.items()}}
            (tmp / "meta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
        self.key = key

    @classmethod
    def load(cls, directory: Path) -> RankingIndex:
        """Raises ``StoreMissing`` (no cache) or ``StoreError`` (unreadable, other format): rebuild."""
        directory = Path(directory)
        if not (directory / "meta.json").is_file():
            raise StoreMissing(f"no ranking index at {directory}")
        try:
            meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
            if meta.get("format") != FORMAT:
                raise StoreError(f"the ranking index at {directory} has another format; rebuild it")
            return cls(meta["files"], np.load(directory / "window_file.npy", mmap_mode="r"),
                       np.load(directory / "window_lines.npy", mmap_mode="r"),
                       KeywordIndex.load(directory / "windows"), KeywordIndex.load(directory / "paths"),
                       {f: (v[0], v[1], v[2], v[3]) for f, v in meta["where"].items()}, key=str(meta.get("key", "")))
        except StoreError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"the ranking index at {directory} is unreadable ({exc}); rebuild it") from exc
