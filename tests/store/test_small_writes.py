"""``OxigraphStore.replace`` inside a run: a small batch (one edited file's) goes in as a transaction,
a large one as a bulk load (a fixed ~0.15 s that only pays off past ``BULK_FROM`` quads); either way
the deletes and the quads land together, and a run that fails rolls both back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from acms.store import oxigraph as oxigraph_module
from acms.store.oxigraph import OxigraphStore
from acms.vocab import TIER_WARM

P = NamedNode("urn:x:p")
DELETE = "DELETE WHERE { GRAPH ?g { ?s <urn:x:p> ?o } }"


def _quads(tag: str, n: int) -> list[Quad]:
    return [Quad(NamedNode(f"urn:x:{tag}{i}"), P, Literal(str(i)), TIER_WARM) for i in range(n)]


class _Counted:
    """A pyoxigraph handle, its bulk loads counted (every call passed through)."""

    bulk = 0

    def __init__(self, store: Any) -> None:
        self._store = store

    def bulk_extend(self, quads: Any) -> None:
        _Counted.bulk += 1
        self._store.bulk_extend(quads)

    def __len__(self) -> int:
        return len(self._store)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


@pytest.mark.parametrize("bulk_from", [3, 10_000])
def test_a_replace_lands_whole_by_either_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bulk_from: int) -> None:
    monkeypatch.setattr(oxigraph_module, "BULK_FROM", bulk_from)
    real = oxigraph_module.open_handle
    monkeypatch.setattr(oxigraph_module, "open_handle", lambda *a, **k: _Counted(real(*a, **k)))
    monkeypatch.setattr(_Counted, "bulk", 0)
    store = OxigraphStore(tmp_path / "graph")
    try:
        store.load(_quads("old", 5))
        with store.atomic():
            store.replace([(DELETE, None)], _quads("new", 4))
        assert store.count() == 4 and _Counted.bulk == (1 if bulk_from <= 4 else 0)
        with pytest.raises(RuntimeError), store.atomic():
            store.replace([(DELETE, None)], _quads("lost", 6))
            raise RuntimeError("the run fails")
        assert store.count() == 4
        assert {q.subject.value for q in store.quads()} == {f"urn:x:new{i}" for i in range(4)}
    finally:
        store.close()
