"""The capability protocols: which store offers what (callers choose their path by it, so a store that
silently lost ``select_stream`` would only cost memory, never fail a test elsewhere), and that each
capability does what its callers rely on. Real stores: one on disk, one in a real Oxigraph server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Quad

from acms.store.factory import open_lent, open_store
from acms.store.http_client import Endpoints
from acms.store.layout import IndexLayout
from acms.store.oxigraph import load_nquads
from acms.store.protocol import (
    GraphStore,
    SupportsBulkLoad,
    SupportsCheckpoint,
    SupportsGeneration,
    SupportsOwnership,
    SupportsStreamingSelect,
)
from acms.store.remote import RemoteTarget
from acms.vocab import TIER_HOT

CAPABILITIES = [SupportsStreamingSelect, SupportsBulkLoad, SupportsCheckpoint, SupportsGeneration, SupportsOwnership]
P = NamedNode("urn:p")
OLD = Quad(NamedNode("urn:old"), P, Literal("old"), TIER_HOT)
NEW = Quad(NamedNode("urn:new"), P, Literal("new"), TIER_HOT)
NQUADS = f"{NEW.subject} {NEW.predicate} {NEW.object} {NEW.graph_name} .\n".encode()
ALL = "SELECT ?s ?o ?none WHERE { GRAPH ?g { ?s ?p ?o } } ORDER BY ?s"


def _offers(store: GraphStore) -> set[str]:
    return {cap.__name__ for cap in CAPABILITIES if isinstance(store, cap)}


def _subjects(store: GraphStore) -> list[str]:
    return [row["s"].value for row in store.select(ALL)]


@pytest.fixture
def embedded(tmp_path: Path) -> Iterator[GraphStore]:
    store = open_store(IndexLayout(tmp_path / ".acms"), read_only=False, create=True, command="test")
    store.load([OLD])
    yield store
    store.close()


def test_the_embedded_store_offers_what_it_can(embedded: GraphStore) -> None:
    assert _offers(embedded) == {"SupportsStreamingSelect", "SupportsBulkLoad", "SupportsCheckpoint"}


def test_the_remote_store_offers_what_it_can(oxigraph_server: str, project_name: str, tmp_path: Path) -> None:
    target = RemoteTarget(Endpoints(oxigraph_server), project_name)
    store = open_store(IndexLayout(tmp_path / ".acms"), read_only=False, create=True, remote=target)
    try:
        assert _offers(store) == {"SupportsGeneration", "SupportsOwnership"}
        load_nquads(store, NQUADS)  # no bulk parser there: parsed here, loaded as quads
        assert _subjects(store) == ["urn:new"]
        assert store.refresh() is not None  # type: ignore[attr-defined]
    finally:
        store.close()


def test_a_streamed_select_answers_as_select_does(embedded: GraphStore) -> None:
    assert isinstance(embedded, SupportsStreamingSelect)
    load_nquads(embedded, NQUADS)
    streamed = [(s["s"], s["o"], s["none"]) for s in embedded.select_stream(ALL)]
    assert streamed == [(r["s"], r["o"], r.get("none")) for r in embedded.select(ALL)]
    assert [s for s, _, _ in streamed] == [NamedNode("urn:new"), NamedNode("urn:old")]


def test_starting_over_reads_the_old_index_from_the_checkpoint(embedded: GraphStore) -> None:
    assert isinstance(embedded, SupportsCheckpoint)
    assert not embedded.can_start_over()  # no index run: no checkpoint to read the old index from
    with embedded.atomic():
        assert embedded.can_start_over()
        old = embedded.start_over()
        assert _subjects(embedded) == []
        assert _subjects(old) == ["urn:old"]
        embedded.load([NEW])
        old.close()
    assert _subjects(embedded) == ["urn:new"]


def test_a_lent_index_is_written_by_another_writer_and_taken_back(embedded: GraphStore) -> None:
    assert isinstance(embedded, SupportsCheckpoint) and embedded.can_lend()
    with embedded.atomic(), embedded.lent() as path:
        child = open_lent(path)
        child.load([NEW])
        child.close()
    assert _subjects(embedded) == ["urn:new", "urn:old"]


def test_a_failed_run_after_starting_over_restores_the_checkpoint(embedded: GraphStore) -> None:
    assert isinstance(embedded, SupportsCheckpoint)
    with pytest.raises(RuntimeError), embedded.atomic():
        embedded.start_over().close()
        embedded.load([NEW])
        raise RuntimeError("the re-index fails midway")
    assert _subjects(embedded) == ["urn:old"]
