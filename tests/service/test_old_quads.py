"""A one-batch run reads the replaced files' quads once (``OldQuads``) and takes from them what relinking
and linking asked the store for, and a replaced file's hot entities stay in the hot tier: the graph, the
tiers and the versions are what the store's queries and the tier policy's moves made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import NamedNode

from acms.api import Index
from acms.errors import StoreError
from acms.ingest import pipeline
from acms.service.indexing import batch as batch_module
from acms.service.indexing.old_quads import OldQuads, stay_hot
from acms.sparql import catalog
from acms.store.oxigraph import OxigraphStore
from acms.temporal import tiers
from acms.temporal.versions import fragment_sets
from acms.vocab import TIER_COLD, TIER_HOT, TIER_WARM, UKO

from ..conftest import copy_of_indexed
from .indexes import edit, every_quad, indexed_project

SETTINGS: dict[str, Any] = {"record_use": False, "embed_on_index": False}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One first index, then one edit of ``normalize`` (its function and file now hot), that each test copies."""
    root = indexed_project(tmp_path_factory.mktemp("old-quads") / "proj", **SETTINGS)
    edit(root / "pkg" / "util.py", "return text.strip().lower()", "return text.strip().casefold()")
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
    return root


def _hot(root: Path) -> set[NamedNode]:
    with Index.open(root, mode="read", refresh="off", wait=10) as idx, idx.reading() as store:
        return {r["e"] for r in store.select(catalog.text("rules/entities-in-tier"), {"tier": TIER_HOT})}


def _files(store: OxigraphStore) -> list[NamedNode]:
    return sorted((r["file"] for r in store.select(catalog.text("ingest/stored-files"))), key=lambda n: n.value)


def test_what_relinking_and_linking_take_from_the_quads_is_what_the_queries_answer(indexed: Path) -> None:
    with Index.open(indexed, mode="read", refresh="off", wait=10) as idx, idx.reading() as store:
        files = _files(store)
        old = OldQuads(store)
        assert len(files) > 5
        for file in files:  # file by file, and all at once
            one = [file]
            assert old.names(one) == {str(r["qn"].value)
                                      for r in store.select(catalog.text("ingest/symbols-of-files"), {"file": one})}
            assert old.entities(one) == {r["entity"]
                                         for r in store.select(catalog.text("ingest/entities-of-files"), {"file": one})}
            assert set(old.quads(one)) == set(store.file_quads(one))
        assert old.names(files) == {str(r["qn"].value)
                                    for r in store.select(catalog.text("ingest/symbols-of-files"), {"file": files})}
        assert old.entities(files) == {r["entity"]
                                       for r in store.select(catalog.text("ingest/entities-of-files"), {"file": files})}
        assert sorted(map(str, old.quads(files))) == sorted(map(str, store.file_quads(files)))
        for some in ([files[0]], files):  # the versions' old texts: as from the quads outside the cold tier
            sets = fragment_sets([q for q in store.file_quads(some) if q.graph_name != TIER_COLD])
            assert sets and fragment_sets(old.fragments(some)) == sets
        hot = {r["e"] for r in store.select(catalog.text("rules/entities-in-tier"), {"tier": TIER_HOT})}
        assert hot and old.hot(files) == hot  # the edited function and its file, among others


def test_quads_read_ahead_are_those_read_in_place_and_a_failure_ahead_is_raised_by_the_next_read(
        indexed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Index.open(indexed, mode="read", refresh="off", wait=10) as idx, idx.reading() as store:
        files = _files(store)
        ahead, here = OldQuads(store), OldQuads(store)
        ahead.read_ahead(files)
        assert sorted(map(str, ahead.quads(files))) == sorted(map(str, here.quads(files)))
        assert ahead.names(files) == here.names(files) and ahead.entities(files) == here.entities(files)

        real, calls = store.file_quads, []

        def fails_once(files: list[NamedNode]) -> list[object]:  # the thread's read fails, a later one would not
            calls.append(files)
            if len(calls) == 1:
                raise StoreError("read failed: the disk went away")
            return real(files)

        monkeypatch.setattr(store, "file_quads", fails_once)
        failing = OldQuads(store)
        failing.read_ahead(files)
        with pytest.raises(StoreError, match="disk went away"):
            failing.names(files)
        failing.settle()  # raised once, in the run's thread


def test_stay_hot_moves_a_hot_entity_with_its_fragments_and_nothing_else() -> None:
    from pyoxigraph import Literal, Quad

    e, other, frag, far = (NamedNode(f"https://example.org/{n}") for n in ("e", "other", "frag", "far"))
    quads = [Quad(e, UKO.hasFragment, frag, TIER_WARM), Quad(frag, UKO.text, Literal("x"), TIER_WARM),
             Quad(e, UKO.calls, other, TIER_WARM), Quad(other, UKO.hasFragment, far, TIER_WARM),
             Quad(far, UKO.text, Literal("y"), TIER_WARM)]
    moved = stay_hot(quads, {e})
    assert [q.graph_name for q in moved] == [TIER_HOT, TIER_HOT, TIER_HOT, TIER_WARM, TIER_WARM]
    assert [(q.subject, q.predicate, q.object) for q in moved] == [(q.subject, q.predicate, q.object) for q in quads]
    assert stay_hot(quads, set()) is quads


class _Moves:
    """What each tier rebalance of a run did (passed through)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.results: list[tiers.Rebalance] = []
        real = tiers.rebalance

        def counted(*args: Any, **kwargs: Any) -> tiers.Rebalance:
            result = real(*args, **kwargs)
            self.results.append(result)
            return result

        monkeypatch.setattr(tiers, "rebalance", counted)


def _edits(root: Path) -> None:
    """The hot function edited again with a line above it (its fragments' IRIs move), another file renamed."""
    edit(root / "pkg" / "util.py", "return text.strip().casefold()", "return text.strip().casefold().strip()")
    edit(root / "pkg" / "util.py", "def normalize(", "# a line above\n\ndef normalize(")
    mod = root / "pkg" / "mod.py"
    mod.write_text(mod.read_text().replace("Parser", "HeaderParser"))


def test_a_rewritten_hot_file_stays_hot_and_the_graph_is_the_one_the_sparql_path_makes(
        indexed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two copies, the same edits: by the diff (hot entities written to hot, the names and entities taken
    from the quads) and by the store's queries (the SPARQL path: everything to warm, then the tier policy
    moves). Every quad of every graph, its tier included, is the same; the first moved nothing back."""
    ours, theirs = copy_of_indexed(indexed, tmp_path / "diff"), copy_of_indexed(indexed, tmp_path / "sparql")
    moves = _Moves(monkeypatch)
    for root in (ours, theirs):
        with monkeypatch.context() as patch:
            if root == theirs:
                patch.setattr(batch_module, "SupportsFileRewrite", type("Never", (), {}))  # no store has it
            else:  # parsed by workers, so the quads are read ahead in a thread meanwhile
                patch.setattr(pipeline, "PARALLEL_MIN_FILES", 1)
            _edits(root)
            with Index.open(root, **SETTINGS) as idx:
                report = idx.index()
            assert report.files_indexed == 2
    ours_moved, theirs_moved = moves.results
    stayed = _hot(indexed) & _hot(ours)  # the function edited before, its file: all in util.py, rewritten
    assert stayed
    # the SPARQL path wrote them to warm and the policy moved them back; the diff left them in hot
    assert theirs_moved.promoted - ours_moved.promoted == len(stayed)
    assert ours_moved.demoted == theirs_moved.demoted and ours_moved.hot_entities == theirs_moved.hot_entities
    assert every_quad(ours) == every_quad(theirs)
    with Index.open(ours, **SETTINGS) as idx:  # a full policy run: nothing to move
        again = idx.tiers.rebalance()
    assert again.promoted == again.demoted == 0
