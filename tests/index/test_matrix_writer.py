"""The vector cache written block by block (a streamed first embedding) is the matrix ``np.load`` reads:
rows in the order of their ids, whatever order they arrived in, every float as written."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from acms.index.vectors import MatrixWriter, VectorMatrix


def test_rows_arrive_in_any_order_and_land_sorted_by_id(tmp_path: Path) -> None:
    n, dims = 5000, 8
    ids = [f"https://example.org/frag/{i:05d}" for i in range(n)]
    random.Random(2).shuffle(ids)
    vectors = np.random.default_rng(3).random((n, dims), dtype=np.float32)
    writer = MatrixWriter(tmp_path / "vectors", dims, "lsa-test")
    for start in range(0, n, 700):  # uneven blocks, the last one short
        writer.add(ids[start : start + 700], vectors[start : start + 700])
    writer.close("state")
    loaded = VectorMatrix.load(tmp_path / "vectors")
    assert loaded is not None and loaded.key == "state" and loaded.model_id == "lsa-test"
    assert list(loaded.ids) == sorted(ids)
    np.testing.assert_array_equal(np.asarray(loaded.matrix), vectors[np.argsort(ids, kind="stable")])
    assert [p.name for p in tmp_path.iterdir()] == ["vectors"]  # the staging folder was swapped in, its lock gone


def test_an_empty_matrix_is_written_and_loads(tmp_path: Path) -> None:
    writer = MatrixWriter(tmp_path / "vectors", 4, "m")
    writer.close("k")
    loaded = VectorMatrix.load(tmp_path / "vectors")
    assert loaded is not None and np.asarray(loaded.matrix).shape == (0, 4)
