"""A one-batch run validates its files' part as the N-Quads text it was emitted as (``check_emitted``):
the violations are ``check_batch``'s of the same quads, one for one, valid or broken; and a run whose
batch breaks a shape still quarantines the file that broke it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import Literal, Quad

from acms.api import Index
from acms.ingest import emit
from acms.validation.batch import check_batch, check_emitted
from acms.vocab import TIER_HOT, TIER_WARM, UKO

from .indexes import indexed_project

SETTINGS: dict[str, Any] = {"record_use": False, "embed_on_index": False}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = indexed_project(tmp_path_factory.mktemp("batch-validation") / "proj", **SETTINGS)
    return root


def _split(quads: list[Quad]) -> tuple[list[str], list[Quad]]:
    """The warm quads as emitted lines, the rest (edges and the tree here: any) as quads after them."""
    files = [q for q in quads if q.predicate not in (UKO.calls, UKO.imports, UKO.inDirectory)]
    held = set(files)
    return [f"{q} .\n" for q in files], [q for q in quads if q not in held]


def _broken(quads: list[Quad]) -> list[Quad]:
    """A function without its name, a line number that is no integer, a call to a file."""
    function = next(q.subject for q in quads if q.object == UKO.Function)
    file = next(q.subject for q in quads if q.object == UKO.File)
    out = [q for q in quads if not (q.subject == function and q.predicate == UKO.name)]
    out.append(Quad(function, UKO.startLine, Literal("twelve"), TIER_WARM))
    out.append(Quad(function, UKO.calls, file, TIER_WARM))
    return out


@pytest.mark.parametrize("broken", [False, True])
def test_the_emitted_text_gives_check_batch_s_violations(indexed: Path, broken: bool) -> None:
    with Index.open(indexed, mode="read", refresh="off", wait=10) as idx, idx.reading() as store:
        quads = [q for q in store.quads() if q.graph_name in (TIER_WARM, TIER_HOT)]
        quads = [Quad(q.subject, q.predicate, q.object, TIER_WARM) for q in quads]
        if broken:
            quads = _broken(quads)
        lines, rest = _split(quads)
        held = set(rest)
        ordered = [*(q for q in quads if q not in held), *rest]
        found = check_emitted(store, lines, TIER_WARM, rest)
        assert found == check_batch(store, ordered)
        assert bool(found) == broken
        first = quads[0]
        elsewhere = f"{Quad(first.subject, first.predicate, first.object, TIER_HOT)} .\n"
        assert check_emitted(store, [*lines, elsewhere], TIER_WARM, rest) is None


def test_a_file_that_breaks_a_shape_in_a_refresh_is_quarantined(indexed: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(shutil.copytree(indexed, tmp_path / indexed.name))
    real = emit.emit_file

    def without_hash(*args: Any, **kwargs: Any) -> emit.FileBatch:
        batch = real(*args, **kwargs)
        if batch.path == "pkg/util.py":
            batch.quads = [q for q in batch.quads if q.predicate != UKO.contentHash]
        return batch

    monkeypatch.setattr(emit, "emit_file", without_hash)
    for name in ("util.py", "mod.py"):
        path = root / "pkg" / name
        path.write_text(path.read_text() + "\n\nX_ADDED = 1\n")
    with Index.open(root, **SETTINGS) as idx:
        report = idx.index()
    assert list(report.quarantined) == ["pkg/util.py"] and report.files_indexed == 1
