"""A long-lived process (a server, a watcher) refreshes the index edit after edit: the vector matrix each
refresh saved is the one it keeps and answers from (not read back), it equals the matrix on disk, and
its live rows and answers are those of a full build of the refreshed graph's vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from acms.api import Index
from acms.index import vectors
from acms.index.vectors import VectorMatrix
from acms.retrieval import caches as caches_module
from acms.retrieval import drift
from acms.retrieval.caches import DerivedCaches
from acms.retrieval.embedding_store import active_model
from acms.store.layout import IndexLayout

from ..conftest import copy_of_indexed


@pytest.fixture
def project(_fully_indexed_sample_template: Path, tmp_path: Path) -> Path:
    return copy_of_indexed(_fully_indexed_sample_template, tmp_path)


def _python_files(root: Path) -> list[Path]:
    return [p for p in sorted(root.rglob("*.py")) if ".acms" not in p.parts and "def " in p.read_text()]


def _edits(root: Path) -> list[tuple[str, object]]:
    first, second = _python_files(root)[:2]
    return [
        ("a function added", lambda: first.write_text(first.read_text() + "\n\ndef kept_alive(x):\n    return x * 3\n")),
        ("lines inserted above", lambda: first.write_text("import os\n\n\n" + first.read_text())),
        ("a file added", lambda: (root / "added_later.py").write_text("def later(y):\n    \"\"\"Later.\"\"\"\n    return y\n")),
        ("a file deleted", lambda: second.unlink()),
        ("the added file edited", lambda: (root / "added_later.py").write_text("def later(y):\n    return -y\n")),
    ]


def _from_disk(directory: Path) -> VectorMatrix:
    """The matrix as another process reads it, leaving this process's keep as it was."""
    with vectors._kept_lock:
        kept = dict(vectors._kept)
        vectors._kept.clear()
    try:
        loaded = VectorMatrix.load(directory)
    finally:
        with vectors._kept_lock:
            vectors._kept.clear()
            vectors._kept.update(kept)
    assert loaded is not None
    return loaded


def _live(matrix: VectorMatrix) -> dict[str, bytes]:
    return {frag: matrix.row(i).tobytes() for i, frag in matrix.live()}


def test_each_refresh_keeps_the_matrix_it_saved_and_it_is_a_full_build_s(project: Path, tmp_path: Path) -> None:
    directory = project / ".acms" / "cache" / "vectors"
    loads: list[Path] = []
    load = VectorMatrix.load.__func__  # type: ignore[attr-defined]

    def counted(cls: type[VectorMatrix], where: Path) -> VectorMatrix | None:
        matrix = load(cls, where)
        if matrix is not None and matrix is not vectors._kept.get(Path(where).absolute()):
            loads.append(Path(where))
        return matrix

    with Index.open(project, mode="shared", refresh="off") as idx, pytest.MonkeyPatch.context() as patch:
        patch.setattr(VectorMatrix, "load", classmethod(counted))
        patch.setattr(caches_module, "GARBAGE_SHARE", 1e9)  # a small project: an edit is a large share of it,
        patch.setattr(drift, "REFIT_SHARE", 10.0)  # ... and would soon have the model fitted again (written whole)
        edits = _edits(project)
        for i, (what, edit) in enumerate(edits):
            last = i == len(edits) - 1
            if last:  # written whole and sorted again: still kept
                patch.setattr(caches_module, "GARBAGE_SHARE", 0.0)
            edit()  # type: ignore[operator]
            report = idx.refresh()
            assert report.embedded > 0 or what == "a file deleted", what
            kept = VectorMatrix.load(directory)
            assert kept is not None and kept is vectors._kept[directory.absolute()], what
            assert (kept.tail is None) == last, what  # appended to, until written whole
            if i:  # the first refresh reads the index's matrix; each later one starts from the one kept
                assert loads == [], what
            loads.clear()
            on_disk = _from_disk(directory)
            assert (kept.ids, kept.key, kept.model_id) == (on_disk.ids, on_disk.key, on_disk.model_id), what
            assert _live(kept) == _live(on_disk), what
            with idx.reading() as store:
                model = active_model(store)
                assert model is not None
                full = DerivedCaches(store, IndexLayout(tmp_path / f"full{i}")).vectors(model.model_id)
                assert kept.key == DerivedCaches(store, IndexLayout(project / ".acms")).state_key, what
            assert full.tail is None and _live(kept) == _live(full), what
            rows = np.asarray(full.matrix)
            for j in range(0, len(rows), max(1, len(rows) // 10)):
                for query in (rows[j], (rows[j] + rows[-1 - j]) / 2):
                    assert kept.top(query, 6) == full.top(query, 6), what
