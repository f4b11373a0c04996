"""The first stage's derived cache: window and path postings plus where every fragment sits.

Built from the graph's current ``micro`` fragments (``search/corpus.rq``) in one pass and saved
beside the keyword index, keyed by the same graph state, so it is rebuilt whenever an index run
changes the graph. Three parts:

- ``windows``: BM25 over 40-line windows of each file (see :mod:`acms.ranking.windows`);
- ``paths``: BM25 over each file's path (folders and file name split like identifiers);
- ``names``: BM25 over the names of the symbols each file defines (the graph's ``defines`` edges:
  functions, classes, methods; not the module or the file itself, which the path already gives);
- ``frag_ids`` / ``locations``: fragment IRIs (sorted, UTF-8 bytes: a numpy ``str`` array would pad
  each to the longest at four bytes a character, 117 MB at 4x the standard library instead of 29)
  → (file number, start line, end line, 1 for a class body, 2 for a module header, 3 for code in a
  test module, 4 for a Python function that defines functions, else 0), as arrays, to map fragment
  scores to files;
- ``outlines``: per fragment id, the outline (macro fragment) of a class body or of a Python function
  that defines functions, else "", as one UTF-8 blob and offsets (most are ""): what the first stage
  shows for a class whose body gives way to its matching methods (a long function: to its nested one);
- ``qualified``: per fragment id, its symbol's qualified name ("" for none), as one UTF-8 blob and
  offsets (a few bytes a fragment, memory-mapped): what a task that names a symbol is matched against;
- ``dense``: the files whose lines are dense with terms (minified or generated code, see
  ``window_tokens.DENSE_TOKENS_PER_LINE``): source by their path, vendored by their content.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from acms.errors import StoreError, StoreMissing
from acms.index.keyword import KeywordIndex
from acms.index.scratch import atomic_directory
from acms.index.string_column import StringColumn
from acms.ranking.roles import Role, role_of
from acms.index.token_table import TokenizedLines, TokenTable
from acms.ranking.window_tokens import FileWindows, file_windows

__all__ = ["CONTAINER", "NESTING", "TEST_SCOPE", "FragmentPlace", "FragmentRow", "RankingIndex", "StringColumn", "ids_array"]

CONTAINER = {"Class": 1, "Namespace": 1, "Module": 2}  # a namespace (Rust's `mod tests { }`) holds members as a class does
TEST_SCOPE = 3  # the container code of a symbol inside a test module of a source file (roles.in_test_scope)
NESTING = 4  # the container code of a Python function that defines functions (``search/function-outlines.rq``)

FORMAT = "acms.ranking-index/13"
# The names field is not damped by its length: a file that defines the symbol a task names is the
# answer however many other names it defines (BM25's usual b = 0.75 let the many small helpers of a
# JavaScript file outscore the one utility module that defines the name); k1 still saturates a name
# word repeated across many definitions. Dev set, whole pipeline (`auto`), file MRR of httpx,
# werkzeug, jinja, attrs, gin, axios / all, then symbol R@10 of all: b 0.75 .775 .643 .624 .760
# .757 .592 / .684, .619; b 0.3 .794 .637 .619 .759 .747 .661 / .692, .607; b 0 .755 .650 .616 .778
# .752 .667 / .693, .619 (BM25 chunk baseline: .456 .465 .508 .550 .593 .492 / .511).
NAMES_B = 0.0


@dataclass(frozen=True)
class FragmentRow:
    frag: str
    path: str
    start: int
    end: int
    text: str
    container: int = 0  # CONTAINER: 1 a class (its body encloses its methods), 2 a module header; TEST_SCOPE; NESTING
    name: str = ""  # the symbol's name when the fragment is a code symbol's body, else ""
    outline: str = ""  # the outline fragment (macro) of a class body or of a NESTING function's, else ""
    qualified: str = ""  # the symbol's qualified name when the fragment is a code symbol's body, else ""


@dataclass(frozen=True, slots=True)
class FragmentPlace:
    """A ``FragmentRow`` whose text is tokenised: its lines are ``first_line`` … ``first_line + lines - 1``
    of a ``TokenizedLines``."""

    frag: str
    path: str
    start: int
    end: int
    container: int
    name: str
    outline: str
    first_line: int
    lines: int
    qualified: str = ""


def ids_array(ids: Iterable[str]) -> np.ndarray:
    """Fragment IRIs as a numpy array of UTF-8 bytes: sorts and compares as the strings do (UTF-8 keeps
    code point order), at a byte a character. Made by numpy in C when every IRI is ASCII (acms' IRIs
    escape other characters), by a loop otherwise: half the time for a standard library's 73k."""
    if not isinstance(ids, (list, tuple, np.ndarray)):
        ids = list(ids)
    try:
        return np.asarray(ids, dtype=np.bytes_)
    except UnicodeEncodeError:
        return np.asarray([i.encode("utf-8") for i in ids], dtype=np.bytes_)


def _last_of_each(rows: list[FragmentPlace]) -> list[int]:
    """Row numbers sorted by fragment (stable), only the last row of each fragment."""
    order = sorted(range(len(rows)), key=lambda i: rows[i].frag)
    return [i for k, i in enumerate(order) if k + 1 == len(order) or rows[order[k + 1]].frag != rows[i].frag]


class RankingIndex:
    """Immutable; ``build`` from fragments or ``load`` from a cache directory."""

    def __init__(self, files: list[str], window_file: np.ndarray, window_lines: np.ndarray,
                 windows_index: KeywordIndex, paths_index: KeywordIndex, names_index: KeywordIndex,
                 frag_ids: np.ndarray, locations: np.ndarray, outlines: StringColumn | None = None,
                 qualified: StringColumn | None = None, key: str = "", dense: Sequence[int] = ()) -> None:
        """``frag_ids`` sorted (a numpy bytes array of UTF-8 IRIs, ``ids_array``), ``locations`` the
        (file, start, end, container) row of each, ``outlines`` the outline fragment of each ("" for
        none): arrays, so a command loads them in milliseconds rather than parsing a dict. ``dense``:
        the numbers of the files built rather than written (minified, generated): a source file among
        them counts as vendored."""
        self.files = files
        self.dense = sorted(set(dense))
        self.window_file = window_file  # window number → file number
        self.window_lines = window_lines  # window number → (start, end)
        self.windows = windows_index
        self.paths = paths_index
        self.names = names_index
        self.frag_ids = frag_ids
        self.locations = locations
        self.outlines = outlines if outlines is not None else StringColumn.of([""] * len(frag_ids))
        self.qualified = qualified if qualified is not None else StringColumn.of([""] * len(frag_ids))
        self.key = key
        self._aligned: tuple[KeywordIndex, np.ndarray] | None = None
        # per document of the keyword index of the same state (the same rows, ``key``): its position
        # here or -1, set by the caches that build both (None: ``aligned`` compares the ids)
        self.keyword_rows: np.ndarray | None = None

    @property
    def where(self) -> dict[str, tuple[int, int, int, int]]:
        """Fragment IRI → (file number, start, end, container); built on demand (for inspection)."""
        return {f.decode("utf-8"): (int(a), int(b), int(c), int(d))
                for f, (a, b, c, d) in zip(self.frag_ids.tolist(), self.locations.tolist())}

    def frag_id(self, position: int) -> str:
        """The fragment IRI at ``position`` (of ``aligned``'s last column)."""
        return bytes(self.frag_ids[position]).decode("utf-8")

    def position(self, frag: str) -> int:
        """Where ``frag`` sits in ``frag_ids`` (-1 when it is not there)."""
        key = frag.encode("utf-8")
        i = int(np.searchsorted(self.frag_ids, key))
        return i if i < self.frag_ids.size and self.frag_ids[i] == key else -1

    @classmethod
    def build(cls, rows: Iterable[FragmentRow]) -> RankingIndex:
        """From fragments with their texts (tokenised here, once: see ``from_tokens``)."""
        rows = list(rows)
        table = TokenTable()
        places = [
            FragmentPlace(r.frag, r.path, r.start, r.end, r.container, r.name, r.outline, *table.add_lines(r.text),
                          qualified=r.qualified)
            for r in rows
        ]
        return cls.from_tokens(places, table.lines())

    @classmethod
    def from_tokens(cls, rows: list[FragmentPlace], text: TokenizedLines) -> RankingIndex:
        """From fragments whose texts are already tokenised line by line (the caches' one pass over the
        corpus): the same index as ``build`` of the texts. A file's text is rebuilt from its fragments'
        lines, the first fragment in ``rows``' order giving a line (``windows.file_lines``); its windows
        are runs of ``WINDOW`` known lines every ``STRIDE`` (``windows.windows``), whose tokens are the
        lines' tokens end to end."""
        return cls.from_windows(rows, file_windows(rows, text))

    @classmethod
    def from_windows(cls, rows: list[FragmentPlace], windows: FileWindows) -> RankingIndex:
        """``from_tokens`` once the windows are made (``window_tokens.file_windows`` of the same rows):
        the rest needs no token numbers, so the caches let go of them in between."""
        files, windows_index = windows.files, windows.index
        number = {p: i for i, p in enumerate(files)}
        wfile, wlines, dense = windows.window_file, windows.window_lines, windows.dense
        paths_index = KeywordIndex.build(files, files)
        defined: dict[str, list[str]] = {}
        for r in rows:
            if r.name and r.container != CONTAINER["Module"]:
                defined.setdefault(r.path, []).append(r.name)
        names_index = KeywordIndex.build(files, [" ".join(defined.get(p, ())) for p in files], b=NAMES_B)
        del windows
        # where each fragment sits, in fragment order: its last row's, as a dict keyed by fragment kept it
        # (no dicts nor tuples per fragment)
        keep = _last_of_each(rows)
        frag_ids = ids_array([rows[i].frag for i in keep])
        locations = np.zeros((len(keep), 4), dtype=np.int64)
        for column, field_of in enumerate((lambda r: number[r.path], lambda r: r.start, lambda r: r.end,
                                           lambda r: int(r.container))):
            locations[:, column] = np.fromiter((field_of(rows[i]) for i in keep), dtype=np.int64, count=len(keep))
        return cls(files, np.asarray(wfile, dtype=np.int64), np.asarray(wlines, dtype=np.int64).reshape(-1, 2),
                   windows_index, paths_index, names_index, frag_ids, locations,
                   StringColumn.of(rows[i].outline for i in keep), StringColumn.of(rows[i].qualified for i in keep),
                   dense=dense)

    def outline_of(self, frag: str) -> str:
        """The outline fragment of a class body or NESTING function ``frag`` ("" for anything else)."""
        i = self.position(frag)
        return self.outlines[i] if i >= 0 else ""

    def aligned(self, fragments: KeywordIndex) -> np.ndarray:
        """``(file number, start, end, container, position here)`` per id of ``fragments`` (file and
        position -1 when not in ``where``), memoised."""
        if self._aligned is None or self._aligned[0] is not fragments:
            out = np.zeros((len(fragments), 5), dtype=np.int64)
            out[:, 0] = out[:, 4] = -1
            rows = self.keyword_rows
            if rows is not None and self.key and fragments.key == self.key and rows.size == len(fragments):
                found = np.flatnonzero(rows >= 0)  # the caches' positions: no ids encoded and searched (~25 ms)
                out[found, :4] = self.locations[rows[found]]
                out[found, 4] = rows[found]
            elif len(fragments.ids) and self.frag_ids.size:
                wanted = ids_array(fragments.ids)
                pos = np.clip(np.searchsorted(self.frag_ids, wanted), 0, self.frag_ids.size - 1)
                found = self.frag_ids[pos] == wanted
                out[found, :4] = self.locations[pos[found]]
                out[found, 4] = pos[found]
            self._aligned = (fragments, out)
        return self._aligned[1]

    @functools.cached_property
    def roles(self) -> list[Role]:
        """Each file's role, when a ranking first asks (an index run that updates the index never does:
        ~15 ms a standard library's 2,250 files in a fresh process)."""
        built = set(self.dense)
        return [Role.VENDORED if i in built and role is Role.SOURCE else role
                for i, role in enumerate(map(role_of, self.files))]

    def roles_array(self, factors: dict[Role, float]) -> np.ndarray:
        return np.asarray([factors[r] for r in self.roles], dtype=np.float64)

    # -- persistence ----------------------------------------------------------------------
    def save(self, directory: Path, *, key: str) -> None:
        with atomic_directory(Path(directory)) as tmp:
            self.windows.save(tmp / "windows")
            self.paths.save(tmp / "paths")
            self.names.save(tmp / "names")
            np.save(tmp / "window_file.npy", self.window_file)
            np.save(tmp / "window_lines.npy", self.window_lines)
            np.save(tmp / "frag_ids.npy", self.frag_ids)
            np.save(tmp / "locations.npy", self.locations)
            self.outlines.save(tmp, "outlines")
            self.qualified.save(tmp, "qualified")
            if self.keyword_rows is not None:
                np.save(tmp / "keyword_rows.npy", np.asarray(self.keyword_rows, dtype=np.int64))
            meta = {"format": FORMAT, "key": key, "files": self.files, "dense": self.dense}
            (tmp / "meta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
        self.key = key
        for name in ("windows", "paths", "names"):  # their files were renamed with the scratch directory
            getattr(self, name).moved(Path(directory) / name)

    @staticmethod
    def saved_key(directory: Path) -> str | None:
        """The key of the index saved in ``directory`` (None: none, or of another format), without loading it."""
        try:
            meta = json.loads((Path(directory) / "meta.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return str(meta.get("key", "")) if meta.get("format") == FORMAT else None

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
            index = cls(meta["files"], np.load(directory / "window_file.npy", mmap_mode="r"),
                       np.load(directory / "window_lines.npy", mmap_mode="r"),
                       KeywordIndex.load(directory / "windows"), KeywordIndex.load(directory / "paths"),
                       KeywordIndex.load(directory / "names"),
                       np.load(directory / "frag_ids.npy", mmap_mode="r"),
                       np.load(directory / "locations.npy", mmap_mode="r"),
                       StringColumn.load(directory, "outlines"),
                       StringColumn.load(directory, "qualified"), key=str(meta.get("key", "")),
                       dense=[int(i) for i in meta.get("dense", ())])
            if (directory / "keyword_rows.npy").is_file():
                index.keyword_rows = np.load(directory / "keyword_rows.npy", mmap_mode="r")
            return index
        except StoreError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"the ranking index at {directory} is unreadable ({exc}); rebuild it") from exc
