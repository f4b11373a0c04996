"""A vector matrix with rows appended and let go answers as the matrix of its live rows written whole:
the same nearest rows and similarities, bit for bit, ties cut by id wherever the rows sit; saved, its
base is linked, not written again."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from acms.index.vectors import VectorMatrix


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_a_tail_and_tombstones_answer_as_the_compacted_matrix(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    base = _unit(rng.normal(size=(300, 16)))
    ids = [f"f{i:04d}" for i in range(300)]
    VectorMatrix(ids, base, "k0", "m").save(tmp_path / "v0")
    loaded = VectorMatrix.load(tmp_path / "v0")
    assert loaded is not None and loaded.tail is None
    dead = set(rng.choice(300, 40, replace=False).tolist()) - {7}
    tail = _unit(rng.normal(size=(25, 16)))
    tail[3] = base[7]  # the same vector twice: a tie, cut by id
    grown = VectorMatrix([("" if i in dead else frag) for i, frag in enumerate(loaded.ids)]
                         + [f"g{i:04d}" for i in range(25)], loaded.matrix, "k1", "m", tail, loaded.source)
    grown.save(tmp_path / "v1")
    again = VectorMatrix.load(tmp_path / "v1")
    assert again is not None and again.tail is not None and len(again.live()) == 325 - len(dead)
    assert (tmp_path / "v1" / "matrix.npy").stat().st_ino == (tmp_path / "v0" / "matrix.npy").stat().st_ino
    whole = again.compacted()
    assert whole.tail is None and whole.ids == sorted(whole.ids) and len(whole.ids) == 325 - len(dead)
    assert 0 < grown.garbage() < 0.25
    queries = [base[7], base[11], tail[0], (base[1] + tail[5]) / 2, rng.normal(size=16).astype(np.float32)]
    for query in queries:
        for k in (1, 5, 40, 400):
            assert again.top(query, k) == whole.top(query, k)
    assert [frag for frag, _ in again.top(base[7], 2)] == ["f0007", "g0003"]  # a tie: the smaller id first
    assert [frag for frag, _ in again.top(base[7], 1)] == ["f0007"]
