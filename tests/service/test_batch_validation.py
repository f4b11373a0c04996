"""A one-batch run validates its files' part as the N-Quads text it was emitted as (``check_emitted``):
the violations are ``check_batch``'s of the same quads, one for one, valid or broken; files emitted and
validated by the workers that parsed them (``emit_checked``) give the same verdict as the whole batch;
and a run whose batch breaks a shape still quarantines the file that broke it."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import Literal, Quad

from acms.api import Index
from acms.ingest import emit
from acms.ingest.emitted import EmitSettings, emit_checked
from acms.ingest.extractors import extract
from acms.ingest.pipeline import read_sources
from acms.ingest.walker import list_files
from acms.service.indexing.batch import OneBatch
from acms.validation.batch import check_batch, check_emitted
from acms.vocab import TIER_HOT, TIER_WARM, UKO, IriMinter

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


@pytest.mark.parametrize("broken", [False, True])
def test_files_checked_where_they_were_parsed_give_the_whole_batch_s_violations(
        indexed: Path, broken: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two files emitted and checked as a refresh's workers do, one emitted by the writer, and edges
    between them: the run's verdict is ``check_batch``'s over all of it, broken files and edges included
    (an edge from a checked file's function to a file is only seen by the check of the links)."""
    real = emit.emit_file

    def breaking(*args: Any, **kwargs: Any) -> emit.FileBatch:
        batch = real(*args, **kwargs)
        if broken and batch.path == "pkg/fresh.py":
            batch.quads = [q for q in batch.quads if q.predicate != UKO.contentHash]
        return batch

    monkeypatch.setattr(emit, "emit_file", breaking)
    listing = list_files(indexed)
    paths = {f.path for f in listing.files} | {"pkg/fresh.py"}
    listing.files = [f for f in listing.files if f.path in ("pkg/util.py", "pkg/mod.py", "pkg/__init__.py")]
    sources = read_sources(listing, {}, {})
    with Index.open(indexed, mode="read", refresh="off", wait=10) as idx, idx.reading() as store:
        file_iri = next(q.subject for q in store.quads() if q.object == UKO.File)
        settings = EmitSettings(IriMinter.of_iri(file_iri.value), TIER_WARM.value, "2026-01-01T00:00:00Z", False)
        # util.py as a new file: what links to its nodes can only learn their classes from its batch
        sources = [dataclasses.replace(s, path="pkg/fresh.py") if s.path == "pkg/util.py" else s for s in sources]
        parsed = {s.path: (s, *extract(s, paths, 40)) for s in sources}
        checked = emit_checked(settings, [(*parsed[p], None) for p in ("pkg/fresh.py", "pkg/__init__.py")])
        assert [bool(c.violations) for c in checked] == [broken, False]
        own = emit.emit_file(settings.minter, *parsed["pkg/mod.py"], TIER_WARM, settings.generated_at)
        batches = [c.batch for c in checked] + [own]
        quads = [q for b in batches for q in b.quads]
        functions = [q.subject for q in quads if q.object == UKO.Function]
        files = [q.subject for q in quads if q.object == UKO.File]
        edges = [Quad(functions[0], UKO.calls, functions[-1], TIER_WARM),  # a checked file's edge
                 Quad(functions[-1], UKO.calls, functions[0], TIER_WARM),  # an edge to a checked file's node
                 Quad(files[-1], UKO.imports, files[0], TIER_WARM)]
        if broken:
            edges.append(Quad(functions[0], UKO.calls, files[1], TIER_WARM))
        plan = type("Plan", (), {"quads": quads + edges})()
        found = OneBatch._violations(store, plan, batches, None, {c.batch.path: c for c in checked})  # type: ignore[arg-type]
        assert found == check_batch(store, quads + edges)
        assert bool(found) == broken
