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
    ids: list[str]
    matrix: np.ndarray  # (n, dims) float32, rows L2-normalised
    key: str
    model_id: str

    def top(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Brute-force cosine (enough to ~1M rows, DESIGN); ties broken by id for determinism."""
        if not self.ids or k <= 0:
            return []
        sims = self.matrix @ np.asarray(query, dtype=np.float32)
        k = min(k, len(self.ids))
        idx = np.argpartition(-sims, k - 1)[:k]
        ranked = sorted(idx.tolist(), key=lambda i: (-float(sims[i]), self.ids[i]))
        return [(self.ids[i], float(sims[i])) for i in ranked]

    def save(self, directory: Path) -> None:
        with atomic_directory(directory) as tmp:
            np.save(tmp / "matrix.npy", self.matrix.astype(np.float32))
            (tmp / "manifest.json").write_text(json.dumps({"ids": self.ids, "key": self.key, "model_id": self.model_id}))

    @classmethod
    def load(cls, directory: Path) -> VectorMatrix | None:
        try:
            manifest = json.loads((directory / "manifest.json").read_text())
            matrix = np.load(directory / "matrix.npy", mmap_mode="r")
        except (OSError, ValueError):
            return None
        return cls(manifest["ids"], matrix, manifest["key"], manifest["model_id"])


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
