"""Vectors as graph literals and as a memory-mapped numpy matrix mirrored from the graph.

The graph holds each fragment's vector as a compact ``xsd:base64Binary`` literal (little-endian
float32); the matrix cache under ``.acms/cache/vectors/`` is only a mirror, keyed by the index state
and the model id, rebuilt from the graph when missing or stale.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pyoxigraph import Literal

from acms.index.scratch import Scratch, atomic_directory
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
    where a row sits."""

    ids: list[str]
    matrix: np.ndarray  # (n, dims) float32, rows L2-normalised
    key: str
    model_id: str
    tail: np.ndarray | None = None  # (m, dims) float32: rows ids[n:] of an updated matrix
    source: Path | None = None  # the file ``matrix`` was loaded from: saved again as a link to it

    def live(self) -> list[tuple[int, str]]:
        """(row, id) of every row not let go, rows of the base first."""
        return [(i, frag) for i, frag in enumerate(self.ids) if frag]

    def row(self, i: int) -> np.ndarray:
        base = len(self.matrix)
        return np.asarray(self.matrix[i] if i < base else self.tail[i - base])  # type: ignore[index]

    def garbage(self) -> float:
        """Tombstones and appended rows, as a share of the live rows: what an unsorted update adds."""
        live = sum(1 for frag in self.ids if frag)
        extra = len(self.ids) - live + (0 if self.tail is None else len(self.tail))
        return extra / max(live, 1)

    def compacted(self) -> VectorMatrix:
        """The live rows as one matrix sorted by id, no tail: what a full build writes."""
        rows = sorted(self.live(), key=lambda pair: pair[1])
        dims = self.matrix.shape[1] if self.matrix.ndim == 2 else 1
        index = np.asarray([i for i, _ in rows], dtype=np.int64)
        base = len(self.matrix)
        matrix = np.empty((index.size, dims), dtype=np.float32)
        in_base = index < base
        matrix[in_base] = self.matrix[index[in_base]]
        if self.tail is not None and (~in_base).any():
            matrix[~in_base] = self.tail[index[~in_base] - base]
        return VectorMatrix([frag for _, frag in rows], matrix, self.key, self.model_id)

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
                      else np.flatnonzero(np.fromiter((bool(frag) for frag in self.ids), dtype=bool, count=sims.size)))
        if not candidates.size:
            return []
        k = min(k, candidates.size)
        kth = np.partition(sims[candidates], candidates.size - k)[candidates.size - k]
        idx = candidates[sims[candidates] >= kth]
        ranked = sorted(idx.tolist(), key=lambda i: (-float(sims[i]), self.ids[i]))[:k]
        return [(self.ids[i], float(sims[i])) for i in ranked]

    def save(self, directory: Path) -> None:
        with atomic_directory(directory) as tmp:
            if not _linked(self.source, tmp / "matrix.npy"):
                np.save(tmp / "matrix.npy", np.asarray(self.matrix, dtype=np.float32))
            if self.tail is not None:
                np.save(tmp / "tail.npy", np.asarray(self.tail, dtype=np.float32))
            (tmp / "manifest.json").write_text(json.dumps({"ids": self.ids, "key": self.key, "model_id": self.model_id}))

    @classmethod
    def load(cls, directory: Path) -> VectorMatrix | None:
        try:
            manifest = json.loads((directory / "manifest.json").read_text())
            matrix = np.load(directory / "matrix.npy", mmap_mode="r")
            tail = np.load(directory / "tail.npy", mmap_mode="r") if (directory / "tail.npy").is_file() else None
        except (OSError, ValueError):
            return None
        if len(manifest["ids"]) != len(matrix) + (0 if tail is None else len(tail)):
            return None
        return cls(manifest["ids"], matrix, manifest["key"], manifest["model_id"], tail, directory / "matrix.npy")


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
        (self._tmp / "manifest.json").write_text(json.dumps({"ids": ids, "key": key, "model_id": self.model_id}))
        self._scratch.swap_into(self.directory)
