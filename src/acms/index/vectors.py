"""Vectors as graph literals and as a memory-mapped numpy matrix mirrored from the graph.

The graph holds each fragment's vector as a compact ``xsd:base64Binary`` literal (little-endian
float32); the matrix cache under ``.acms/cache/vectors/`` is only a mirror, keyed by the index state
and the model id, rebuilt from the graph when missing or stale.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import threading
import uuid
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat
from pathlib import Path

import numpy as np
from pyoxigraph import Literal

from acms.index.scratch import Scratch, atomic_directory
from acms.index.string_column import taken
from acms.vocab import XSD


def encode(vector: np.ndarray) -> Literal:
    data = np.asarray(vector, dtype="<f4").tobytes()
    return Literal(base64.b64encode(data).decode("ascii"), datatype=XSD.base64Binary)


def decode(literal: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(literal), dtype="<f4")


@dataclass
class VectorMatrix:
    """Fragment vectors: ``matrix`` (the base, rows sorted by id) and ``tail`` (rows an update appended),
    ``ids`` naming the rows of both end to end, "" for a row an update let go (a tombstone).

    Why a tail: a refresh that re-embedded a few fragments rewrote the whole matrix (a standard library's:
    56 MB, ~0.4 s with its gather in fragment order); now the base file is kept as it is (hard-linked into
    the new cache directory), the changed rows go to the tail and the replaced ones become tombstones,
    until they pass ``GARBAGE_SHARE`` of the live rows and the matrix is written whole again, sorted
    (:meth:`compacted`). ``top`` ranks the live rows only, ties by id, so its answer does not depend on
    where a row sits.

    The base's ids are a file of their own too (``ids.txt``, linked with the base), and the manifest
    holds only what changed since (the base rows let go, the tail's ids): writing every id as JSON on
    each refresh cost a standard library ~20 ms and reading it back ~10 ms. A process keeps the matrix
    it saved or loaded last per directory (``_kept``) while the directory's manifest carries its
    ``stamp``, so a server's next refresh and its readers do not read it back."""

    ids: list[str]
    matrix: np.ndarray  # (n, dims) float32, rows L2-normalised
    key: str
    model_id: str
    tail: np.ndarray | None = None  # (m, dims) float32: rows ids[n:] of an updated matrix
    source: Path | None = None  # the file ``matrix`` was loaded from: saved again as a link to it
    stamp: str | None = None  # the save this is (manifest.json's): what tells a kept matrix is still the one on disk

    def live(self) -> list[tuple[int, str]]:
        """(row, id) of every row not let go, rows of the base first."""
        return [(i, frag) for i, frag in enumerate(self.ids) if frag]

    @cached_property
    def live_mask(self) -> np.ndarray:
        """Per row, whether it is live (not a tombstone)."""
        return np.fromiter(map(bool, self.ids), dtype=bool, count=len(self.ids))

    @cached_property
    def positions(self) -> dict[str, int]:
        """Row of each live id (the last one, should an id have two)."""
        return {frag: i for i, frag in enumerate(self.ids) if frag}

    @cached_property
    def text_codes(self) -> np.ndarray:
        """Per row, a 64-bit code of the text hash that ends its fragment's IRI (a tombstone's is any: only
        live rows are asked about): the base's saved beside it (``texts.npy``), the tail's made here."""
        base = len(self.matrix)
        saved = _load_codes(self.source, base)
        head = saved if saved is not None else text_codes(self.ids[:base])
        return np.concatenate([np.asarray(head, dtype=np.uint64), text_codes(self.ids[base:])])

    def row(self, i: int) -> np.ndarray:
        base = len(self.matrix)
        return np.asarray(self.matrix[i] if i < base else self.tail[i - base])  # type: ignore[index]

    def rows_of(self, frags: Sequence[str]) -> np.ndarray:
        """The live row of each of ``frags``, -1 for one the matrix does not hold."""
        return np.fromiter(map(self.positions.get, frags, repeat(-1)), dtype=np.int64, count=len(frags))

    def garbage(self) -> float:
        """Tombstones and appended rows, as a share of the live rows: what an unsorted update adds."""
        live = int(self.live_mask.sum())
        extra = len(self.ids) - live + (0 if self.tail is None else len(self.tail))
        return extra / max(live, 1)

    def knows_texts(self, frags: Sequence[str]) -> list[bool]:
        """Per fragment IRI, whether a live row's fragment has the same text (the hash its IRI ends in):
        an edit above a fragment moves its line and so its IRI, not its text."""
        codes = text_codes(frags)
        known = self.text_codes[self.live_mask]
        if len(codes) <= _FEW:  # a few compares of the live codes beat sorting them
            return [bool((known == code).any()) for code in codes.tolist()]
        # the live codes sorted and searched: ``np.isin`` sorted both together, ~17 ms a standard library
        known = np.sort(known)
        at = np.minimum(np.searchsorted(known, codes), max(known.size - 1, 0))
        return (known[at] == codes).tolist() if known.size else [False] * len(codes)  # type: ignore[no-any-return]

    def plan(self, frags: Sequence[str], files: Sequence[str], file_of: np.ndarray,
             changed: Collection[str], renewed: Collection[str] = frozenset()) -> UpdatePlan:
        """What an update of this matrix to a segment keeps and reads again: ``frags`` the segment's
        fragments (each once), ``files`` and ``file_of`` where each sits (-1: no file), ``changed`` the
        files the index run replaced, wrote or removed, ``renewed`` the fragments whose vectors it wrote.
        Read again: the fragments with no file, those this matrix has no row for, and those of changed
        files it renewed; kept: the rows of the others (a fragment's IRI holds its text's hash, so a
        fragment of a changed file that kept its IRI kept its vector), every other row let go. The first
        plan of a matrix looks every fragment up (:meth:`rows_of`, ~10 ms a standard library); it and the
        update it makes then know each row's file, and the next plan of the updated matrix keeps the rows
        whose file did not change without looking any up (the rows of unchanged files are those files'
        fragments in both states, which their count confirms, else it looks up) and looks up only the
        changed files' fragments among those files' old rows."""
        file_of = np.asarray(file_of, dtype=np.int64)
        numbers = dict(self.__dict__.get("_numbers") or {})
        for file in files:
            numbers.setdefault(file, len(numbers))
        placed = np.asarray([numbers[file] for file in files] + [-1], dtype=np.int64)[file_of]  # [-1]: no file
        changed_at = np.fromiter((file in changed for file in files), dtype=bool, count=len(files))
        again_at = np.append(changed_at, True)[file_of]  # changed files' fragments and those with no file
        in_changed = np.flatnonzero(np.append(changed_at, False)[file_of])
        asked = taken(frags, in_changed)
        row_files = self.__dict__.get("_row_files")
        if row_files is not None:
            gone = np.asarray([numbers[file] for file in changed if file in numbers], dtype=np.int64)
            changed_rows = self.live_mask & np.isin(row_files, gone)
            stay = self.live_mask & (row_files >= 0) & ~changed_rows
            if int(stay.sum()) == len(frags) - int(again_at.sum()):
                old_of = {self.ids[i]: i for i in np.flatnonzero(changed_rows).tolist()}
                found = np.fromiter((-1 if frag in renewed else old_of.get(frag, -1) for frag in asked),
                                    dtype=np.int64, count=len(asked))
                return self._plan(np.flatnonzero(stay), row_files[stay], again_at, in_changed, found, placed, numbers)
        rows = self.rows_of(frags)
        found = np.fromiter((-1 if frag in renewed else row for frag, row in zip(asked, rows[in_changed].tolist())),
                            dtype=np.int64, count=len(asked))
        again_at |= rows < 0
        return self._plan(rows[~again_at], placed[~again_at], again_at, in_changed, found, placed, numbers)

    @staticmethod
    def _plan(kept: np.ndarray, kept_files: np.ndarray, again_at: np.ndarray, in_changed: np.ndarray,
              found: np.ndarray, placed: np.ndarray, numbers: dict[str, int]) -> UpdatePlan:
        """The plan that keeps ``kept`` and the rows ``found`` for the changed files' fragments
        ``in_changed`` (-1: none), and reads the rest of ``again_at`` again."""
        hit = found >= 0
        again_at = again_at.copy()
        again_at[in_changed[hit]] = False
        kept = np.concatenate([kept, found[hit]])
        kept_files = np.concatenate([kept_files, placed[in_changed[hit]]])
        return UpdatePlan(kept, kept_files, np.flatnonzero(again_at), placed, numbers)

    def updated(self, kept: np.ndarray, ids: list[str], rows: np.ndarray, key: str,
                plan: UpdatePlan | None = None, frags: Sequence[str] | None = None) -> VectorMatrix:
        """The rows ``kept`` (row numbers of live rows) kept where they are, every other row let go, and
        ``ids``' ``rows`` appended to the tail, under ``key``. What a refresh costs: the rows let go and
        appended, and a copy of the ids; the lookups this matrix made (live rows, positions, text codes)
        are carried over rather than made again. With the ``plan`` that gave ``kept`` and the segment's
        ``frags`` it was made for, each row's file goes with the matrix too, for its next plan."""
        alive = np.zeros(len(self.ids), dtype=bool)
        alive[np.asarray(kept, dtype=np.int64)] = True
        let_go = np.flatnonzero(self.live_mask & ~alive).tolist()
        new_ids = list(self.ids)
        for i in let_go:
            new_ids[i] = ""
        width = int(self.matrix.shape[1]) if self.matrix.ndim == 2 else int(np.asarray(rows).shape[-1])
        parts = [np.asarray(self.tail, dtype=np.float32)] if self.tail is not None else []
        if len(ids):
            parts.append(np.asarray(rows, dtype=np.float32).reshape(len(ids), -1))
        tail = np.concatenate(parts) if parts else np.zeros((0, width), dtype=np.float32)
        out = VectorMatrix(new_ids + list(ids), self.matrix, key, self.model_id, tail, self.source)
        out.__dict__["live_mask"] = np.concatenate([alive & self.live_mask, np.ones(len(ids), dtype=bool)])
        if "positions" in self.__dict__ and plan is None:  # a planned update's next plan needs none (~3 ms a copy)
            positions = dict(self.positions)
            for i in let_go:
                positions.pop(self.ids[i], None)
            positions.update((frag, len(new_ids) + j) for j, frag in enumerate(ids))
            out.__dict__["positions"] = positions
        if "text_codes" in self.__dict__:
            out.__dict__["text_codes"] = np.concatenate([self.text_codes, text_codes(ids)])
        if plan is not None and frags is not None:
            placed = {frags[i]: int(plan.placed[i]) for i in plan.again.tolist()}
            row_files = np.full(len(out.ids), -1, dtype=np.int64)
            row_files[np.asarray(kept, dtype=np.int64)] = plan.kept_files
            row_files[len(new_ids):] = [placed.get(frag, -1) for frag in ids]
            out.__dict__["_row_files"], out.__dict__["_numbers"] = row_files, plan.numbers
        return out

    def compacted(self) -> VectorMatrix:
        """The live rows as one matrix sorted by id, no tail: what a full build writes. The text codes
        this matrix worked out go with their rows (saved beside the new base, not made again)."""
        ids = self.ids
        order = sorted(np.flatnonzero(self.live_mask).tolist(), key=ids.__getitem__)  # stable: ties keep their order
        dims = self.matrix.shape[1] if self.matrix.ndim == 2 else 1
        index = np.asarray(order, dtype=np.int64)
        base = len(self.matrix)
        matrix = np.empty((index.size, dims), dtype=np.float32)
        in_base = index < base
        matrix[in_base] = self.matrix[index[in_base]]
        if self.tail is not None and (~in_base).any():
            matrix[~in_base] = self.tail[index[~in_base] - base]
        out = VectorMatrix([ids[i] for i in order], matrix, self.key, self.model_id)
        for name in ("text_codes", "_row_files"):
            if name in self.__dict__:
                out.__dict__[name] = self.__dict__[name][index]
        if "_numbers" in self.__dict__:
            out.__dict__["_numbers"] = self.__dict__["_numbers"]
        return out

    def top(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Brute-force cosine (enough to ~1M rows, DESIGN); ties broken by id for determinism (every
        row tied with the k-th best is ranked, so which of them makes the cut never depends on the
        rows' order)."""
        if not self.ids or k <= 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        # einsum, not BLAS: a row's similarity is then the same bits wherever the row sits (BLAS' gemv
        # sums a row differently by its place in a block of rows), and it is faster here (6 against 9 ms
        # for a standard library's 73k x 192)
        sims = np.einsum("ij,j->i", self.matrix, q)
        if self.tail is not None and len(self.tail):
            sims = np.concatenate([sims, np.einsum("ij,j->i", self.tail, q)])
        candidates = (np.arange(sims.size) if self.tail is None  # tombstones come with a tail
                      else np.flatnonzero(self.live_mask[: sims.size]))
        if not candidates.size:
            return []
        k = min(k, candidates.size)
        kth = np.partition(sims[candidates], candidates.size - k)[candidates.size - k]
        idx = candidates[sims[candidates] >= kth]
        ranked = sorted(idx.tolist(), key=lambda i: (-float(sims[i]), self.ids[i]))[:k]
        return [(self.ids[i], float(sims[i])) for i in ranked]

    def save(self, directory: Path) -> VectorMatrix:
        """Write it to ``directory`` atomically; returns it as saved (its base mapped from the file, its
        ``stamp``), which this process keeps for the directory. A base loaded from the cache being
        replaced (``source``) is linked with its ids and text codes, not written again."""
        directory = Path(directory)
        base = len(self.matrix)
        stamp = uuid.uuid4().hex
        with atomic_directory(directory) as tmp:
            if not _linked(self.source, tmp / _MATRIX):
                np.save(tmp / _MATRIX, np.asarray(self.matrix, dtype=np.float32))
            if not _linked_beside(self.source, tmp, base):
                known = self.__dict__.get("text_codes")
                _write_ids(tmp, self.ids[:base], None if known is None else known[:base])
            if self.tail is not None:
                np.save(tmp / _TAIL, np.asarray(self.tail, dtype=np.float32))
            if "_row_files" in self.__dict__:  # each row's file, for another process's next plan
                np.save(tmp / _ROW_FILES, np.asarray(self.__dict__["_row_files"], dtype=np.int32))
                numbers = self.__dict__["_numbers"]
                (tmp / _FILE_NAMES).write_text(json.dumps(sorted(numbers, key=numbers.__getitem__)))
            dead = np.flatnonzero(~self.live_mask[:base]).tolist()
            _write_manifest(tmp, {"format": FORMAT, "key": self.key, "model_id": self.model_id, "stamp": stamp,
                                  "rows": base, "dead": dead, "tail": self.ids[base:]})
        saved = VectorMatrix(self.ids, np.load(directory / _MATRIX, mmap_mode="r"), self.key, self.model_id,
                             None if self.tail is None else np.asarray(self.tail, dtype=np.float32),
                             directory / _MATRIX, stamp)
        for name in _DERIVED:
            if name in self.__dict__:
                saved.__dict__[name] = self.__dict__[name]
        _keep(directory, saved)
        return saved

    @classmethod
    def load(cls, directory: Path) -> VectorMatrix | None:
        """The matrix saved in ``directory`` (None when there is none or it is unreadable); the one this
        process saved or loaded last there when the manifest is still that one's."""
        directory = Path(directory)
        try:
            manifest = json.loads((directory / _MANIFEST).read_text())
            kept = _kept_for(directory, manifest.get("stamp"))
            if kept is not None:
                return kept
            matrix = np.load(directory / _MATRIX, mmap_mode="r")
            tail = np.load(directory / _TAIL, mmap_mode="r") if (directory / _TAIL).is_file() else None
            if manifest.get("format") == FORMAT:
                ids = _read_ids(directory, int(manifest["rows"]))
                for i in manifest["dead"]:
                    ids[i] = ""
                ids += manifest["tail"]
            else:  # an older cache: every id in the manifest
                ids = manifest["ids"]
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            return None
        if len(ids) != len(matrix) + (0 if tail is None else len(tail)):
            return None
        loaded = cls(ids, matrix, manifest["key"], manifest["model_id"], tail, directory / _MATRIX,
                     manifest.get("stamp"))
        _load_row_files(directory, loaded)
        if loaded.stamp is not None:
            _keep(directory, loaded)
        return loaded


FORMAT = 2
_MANIFEST, _MATRIX, _TAIL, _IDS, _TEXTS = "manifest.json", "matrix.npy", "tail.npy", "ids.txt", "texts.npy"
_ROW_FILES, _FILE_NAMES = "row-files.npy", "file-names.json"  # each row's file (a number), and the files' IRIs
# what a matrix works out once and a saved copy takes over (each row's file: what its last plan learnt)
_DERIVED = ("live_mask", "positions", "text_codes", "_row_files", "_numbers")


@dataclass(frozen=True)
class UpdatePlan:
    """What :meth:`VectorMatrix.plan` decided: the rows kept and the segment's rows read again."""

    kept: np.ndarray  # live rows of the matrix kept where they are
    kept_files: np.ndarray  # per kept row, its file's number in ``numbers`` (-1: none)
    again: np.ndarray  # the segment's rows whose vectors are read again, ascending
    placed: np.ndarray  # per row of the segment, its file's number (-1: none)
    numbers: dict[str, int]  # file IRI -> number, the matrix's own, extended by the segment's files
_FEW = 64  # fragments asked about at once, up to which ``knows_texts`` compares rather than sorts


def text_codes(frags: Sequence[str]) -> np.ndarray:
    """Per fragment IRI a 64-bit code of the text hash its last segment starts with (``.../<16 hex
    digits>`` or ``.../<16 hex digits>-<occurrence>``: those digits; anything else: its blake2b,
    :func:`_text_code`), 0 for "" (a tombstone). Read from the IRIs' bytes with numpy (a matrix written
    whole codes every row: a standard library's 73k took ~0.1 s one by one)."""
    n = len(frags)
    if not n:
        return np.zeros(0, dtype=np.uint64)
    data = np.frombuffer(("\n".join(frags) + "\n").encode("utf-8", "surrogatepass"), dtype=np.uint8)
    ends = np.flatnonzero(data == 10)
    starts = np.concatenate([[0], ends[:-1] + 1])
    slashes = np.flatnonzero(data == ord("/"))
    at = np.searchsorted(slashes, ends) - 1  # each line's last slash, if it has one
    first = np.where(at >= 0, slashes[np.maximum(at, 0)] if slashes.size else 0, -1) + 1
    long = (first > starts) & (ends - first >= 16)  # a slash in the line, 16 characters after it
    first = np.where(long, first, 0)
    data = np.concatenate([data, np.zeros(17, dtype=np.uint8)])  # a short line's digits looked for in the padding
    digits = _HEX[data[first[:, None] + np.arange(16)]]
    after = data[first + 16]
    valid = long & (digits < 16).all(axis=1) & ((after == 10) | (after == ord("-")))
    codes = np.zeros(n, dtype=np.uint64)
    for k in range(16):
        codes = (codes << np.uint64(4)) | digits[:, k].astype(np.uint64)
    for i in np.flatnonzero(~valid).tolist():
        codes[i] = _text_code(frags[i])
    return codes


_HEX = np.full(256, 255, dtype=np.uint8)  # a byte's value as a lowercase hex digit, 255 for any other
_HEX[np.frombuffer(b"0123456789abcdef", dtype=np.uint8)] = np.arange(16, dtype=np.uint8)
_HEX16 = re.compile(r"[0-9a-f]{16}")


def _text_code(iri: str) -> int:
    if not iri:
        return 0
    text = iri.rsplit("/", 1)[-1]
    digits = text.split("-", 1)[0]
    if _HEX16.fullmatch(digits):
        return int(digits, 16)
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


def _write_ids(directory: Path, ids: Sequence[str], codes: np.ndarray | None = None) -> None:
    """The base's ids, one a line (IRIs hold no line break), and their text codes (``codes`` when the
    matrix knows them; a tombstone's may be any)."""
    (directory / _IDS).write_text("\n".join(ids), encoding="utf-8")
    np.save(directory / _TEXTS, text_codes(ids) if codes is None else np.asarray(codes, dtype=np.uint64))


def _read_ids(directory: Path, rows: int) -> list[str]:
    ids = (directory / _IDS).read_text(encoding="utf-8").split("\n") if rows else []
    if len(ids) != rows:
        raise ValueError(f"{directory / _IDS}: {len(ids)} ids for {rows} rows")
    return ids


def _write_manifest(directory: Path, manifest: dict[str, object]) -> None:
    (directory / _MANIFEST).write_text(json.dumps(manifest))


def _linked_beside(source: Path | None, tmp: Path, rows: int) -> bool:
    """The base's ids and text codes linked from beside ``source`` (a cache of this format); False when
    that cache has none, or not for ``rows`` rows."""
    if source is None or _load_codes(source, rows) is None or not _linked(source.parent / _IDS, tmp / _IDS):
        return False
    if _linked(source.parent / _TEXTS, tmp / _TEXTS):
        return True
    (tmp / _IDS).unlink()
    return False


def _load_row_files(directory: Path, matrix: VectorMatrix) -> None:
    """Each row's file as the save that wrote ``directory`` knew it (:meth:`VectorMatrix.plan`), when it
    wrote them: a fresh process's first plan then needs no lookup either."""
    try:
        row_files = np.load(directory / _ROW_FILES)
        names = json.loads((directory / _FILE_NAMES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if len(row_files) == len(matrix.ids) and isinstance(names, list) and int(row_files.max(initial=-1)) < len(names):
        matrix.__dict__["_row_files"] = row_files.astype(np.int64)
        matrix.__dict__["_numbers"] = {name: i for i, name in enumerate(names)}


def _load_codes(source: Path | None, rows: int) -> np.ndarray | None:
    if source is None:
        return None
    try:
        codes = np.load(source.parent / _TEXTS, mmap_mode="r")
    except (OSError, ValueError):
        return None
    return codes if len(codes) == rows else None


# The matrix this process saved or loaded last, per cache directory: a long-lived process (a server, a
# watcher) updates and answers from it while the directory's manifest names its stamp (a standard
# library's manifest and ids took ~15-20 ms to read back, per refresh and again per first answer).
_kept: OrderedDict[Path, VectorMatrix] = OrderedDict()
_kept_lock = threading.Lock()
_KEPT_AT_MOST = 4  # directories: a process serves one index, tests make many


def _keep(directory: Path, matrix: VectorMatrix) -> None:
    with _kept_lock:
        _kept[directory.absolute()] = matrix
        _kept.move_to_end(directory.absolute())
        while len(_kept) > _KEPT_AT_MOST:
            _kept.popitem(last=False)


def _kept_for(directory: Path, stamp: object) -> VectorMatrix | None:
    if not isinstance(stamp, str):
        return None
    with _kept_lock:
        kept = _kept.get(directory.absolute())
    return kept if kept is not None and kept.stamp == stamp else None


# The rows an index run's embedding just wrote to the graph, for the vector cache's update of the same
# graph state to take rather than read back (``search/vectors-of.rq``: a 300-file branch switch's 12k
# vectors, ~0.7 s). One slot, taken once: the rows of one run, for one cache directory, state and model.
_written: tuple[Path, str, str, dict[str, np.ndarray]] | None = None
_written_lock = threading.Lock()


def wrote_rows(directory: Path, key: str, model_id: str, ids: Sequence[str], rows: np.ndarray) -> None:
    """Say that the graph now holds ``rows`` as the vectors of ``ids`` (model ``model_id``), in the
    graph state the vector cache in ``directory`` keys ``key``."""
    global _written
    given = dict(zip(ids, np.asarray(rows, dtype=np.float32), strict=True))
    with _written_lock:
        _written = (Path(directory).absolute(), key, model_id, given)


def written_rows(directory: Path, key: str, model_id: str) -> dict[str, np.ndarray]:
    """The rows :func:`wrote_rows` was told of for this cache directory, state and model (and forget
    them); {} for any other."""
    global _written
    with _written_lock:
        written, _written = _written, None
    if written is None or written[:3] != (Path(directory).absolute(), key, model_id):
        return {}
    return written[3]


def _linked(source: Path | None, target: Path) -> bool:
    """``target`` made a hard link to ``source`` (the base matrix of the cache being replaced: its bytes
    are never written again, only linked), where the file system allows it."""
    if source is None:
        return False
    try:
        os.link(source, target)
    except OSError:
        return False
    return True


class MatrixWriter:
    """Writes the matrix cache block by block (a streamed first embedding), without holding it.

    Rows arrive in any order; ``close(key)`` puts them in the order of their ids (the order the cache
    built from ``search/corpus.rq`` has), writes the manifest and swaps the directory in, as
    ``VectorMatrix.save`` does. Rows must be L2-normalised already (providers return unit vectors).
    """

    _COPY = 16_384  # rows moved at once when sorting

    def __init__(self, directory: Path, dims: int, model_id: str) -> None:
        self.directory, self.dims, self.model_id = directory, dims, model_id
        self._scratch = Scratch(directory.parent, directory.name)
        self._tmp = self._scratch.path
        self._raw = (self._tmp / "rows.f32").open("wb")
        self._ids: list[str] = []

    def add(self, ids: list[str], vectors: np.ndarray) -> None:
        self._raw.write(np.ascontiguousarray(vectors, dtype="<f4").tobytes())
        self._ids += ids

    def discard(self) -> None:
        """Leave nothing behind (a failed run): the cache stays as it was."""
        self._raw.close()
        self._scratch.discard()

    def close(self, key: str) -> None:
        try:
            self._close(key)
        except BaseException:
            self.discard()
            raise

    def _close(self, key: str) -> None:
        self._raw.close()
        n = len(self._ids)
        raw = self._tmp / "rows.f32"
        order = sorted(range(n), key=self._ids.__getitem__)
        # Plain reads and writes, not memory maps: mapped, both matrices' pages counted in the process's
        # resident size until unmapped (+575 MB for 292k rows of 256 floats).
        row_bytes = 4 * self.dims
        with raw.open("rb") as src, (self._tmp / "matrix.npy").open("wb") as out:
            np.lib.format.write_array_header_1_0(out, {"descr": "<f4", "fortran_order": False, "shape": (n, self.dims)})
            for start in range(0, n, self._COPY):
                block = order[start : start + self._COPY]
                buf = bytearray(len(block) * row_bytes)
                for k, i in enumerate(block):
                    buf[k * row_bytes : (k + 1) * row_bytes] = os.pread(src.fileno(), row_bytes, i * row_bytes)
                out.write(buf)
        raw.unlink()
        ids = [self._ids[i] for i in order]
        _write_ids(self._tmp, ids)
        _write_manifest(self._tmp, {"format": FORMAT, "key": key, "model_id": self.model_id, "stamp": uuid.uuid4().hex,
                                    "rows": n, "dead": [], "tail": []})
        self._scratch.swap_into(self.directory)
