"""OxigraphStore.reopen (before the caches read the whole index, issue 14): the same data, writable,
inside a run too (a failed run still rolls back to its checkpoint); a store in memory is left as it is."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from acms.store.oxigraph import OxigraphStore, in_memory
from acms.vocab import TIER_WARM

P = NamedNode("urn:x:p")


def _quad(i: int) -> Quad:
    return Quad(NamedNode(f"urn:x:s{i}"), P, Literal(str(i)), TIER_WARM)


def test_reopen_keeps_the_data_and_writes(tmp_path: Path) -> None:
    store = OxigraphStore(tmp_path / "graph")
    try:
        store.load([_quad(i) for i in range(50)], bulk=True)
        store.reopen()
        assert store.count() == 50
        store.load([_quad(50)])
        assert store.count() == 51
    finally:
        store.close()


def test_reopen_inside_a_run_that_fails_rolls_back(tmp_path: Path) -> None:
    store = OxigraphStore(tmp_path / "graph")
    try:
        store.load([_quad(0)])
        with pytest.raises(RuntimeError), store.atomic():
            store.load([_quad(1)])
            store.reopen()
            store.load([_quad(2)])
            raise RuntimeError("the run fails")
        assert store.count() == 1
        with store.atomic():
            store.reopen()
            store.load([_quad(3)])
        assert store.count() == 2
    finally:
        store.close()


def test_reopen_in_memory_changes_nothing() -> None:
    store = in_memory()
    store.load([_quad(0)])
    store.reopen()
    assert store.count() == 1


def test_a_failure_whose_frames_hold_the_handle_still_rolls_back(tmp_path: Path) -> None:
    """A function that held the raw database in a local and raised keeps it alive in the traceback while
    the run rolls back: the checkpoint must not be put back under an open database (the reopen found it
    locked, and the restored index was corrupt); the failure's frames let go of their locals first."""
    store = OxigraphStore(tmp_path / "graph")

    def fails() -> None:
        raw = store._store  # noqa: F841 - what a failing writer's frame may hold
        raise RuntimeError("boom")

    try:
        store.load([_quad(0)])
        with pytest.raises(RuntimeError, match="boom"), store.atomic():
            store.load([_quad(1)])
            fails()
        assert store.count() == 1
        store.load([_quad(2)])
        assert store.count() == 2
    finally:
        store.close()
    again = OxigraphStore(tmp_path / "graph")
    try:
        assert again.count() == 2
    finally:
        again.close()
