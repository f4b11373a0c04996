"""An index run that rewrote a few files embeds their new fragments without scanning every fragment,
and still embeds any other fragment that lacks a vector: one an earlier run failed to embed, one a
recorded decision added between runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from acms.api import Index
from acms.decisions import records
from acms.sparql import catalog
from acms.store.protocol import GraphStore
from acms.vocab import IriMinter

from ..conftest import copy_of_indexed


@pytest.fixture
def project(_fully_indexed_sample_template: Path, tmp_path: Path) -> Path:
    return copy_of_indexed(_fully_indexed_sample_template, tmp_path)


def _unembedded(store: GraphStore) -> list[str]:
    return sorted(r["frag"].value for r in store.select(catalog.text("embeddings/unembedded")))


def _count(store: GraphStore, name: str) -> int:
    return int(store.select(catalog.text(name))[0]["n"].value)


def _edit(root: Path) -> Path:
    path = next(p for p in sorted(root.rglob("*.py")) if ".acms" not in p.parts and "def " in p.read_text())
    path.write_text(path.read_text() + "\n\ndef added_after_the_index(x):\n    return x + 1\n")
    return path


def test_an_edit_embeds_the_new_fragments(project: Path) -> None:
    _edit(project)
    with Index.open(project) as idx:
        store = idx.store
        asked: list[str] = []
        store.tracer = lambda text, _seconds: asked.append(text)  # type: ignore[attr-defined]
        report = idx.index()
        store.tracer = None  # type: ignore[attr-defined]
        assert report.embedded > 0
        scan = catalog.text("embeddings/unembedded")
        assert not any(scan.split("WHERE", 1)[1] in text for text in asked), "every fragment scanned"
        assert _unembedded(store) == []
        assert _count(store, "embeddings/count-fragments") == _count(store, "embeddings/count-vectors")


def test_a_vector_an_earlier_run_did_not_make_is_made_by_the_next_edit(project: Path) -> None:
    with Index.open(project) as idx:
        store = idx.store
        frag = store.select("PREFIX uko: <https://w3id.org/acms/uko#>\n"
                            "SELECT ?frag WHERE { GRAPH ?g { ?frag uko:vector ?v } } ORDER BY ?frag LIMIT 1")[0]["frag"]
        store.update("PREFIX uko: <https://w3id.org/acms/uko#>\n"
                     "DELETE { GRAPH ?g { ?frag uko:vector ?v } } WHERE { GRAPH ?g { ?frag uko:vector ?v } }",
                     {"frag": [frag]})
        assert _unembedded(store) == [frag.value]
    _edit(project)
    with Index.open(project) as idx:
        idx.index()
        assert _unembedded(idx.store) == []


def test_a_decision_recorded_between_runs_is_embedded_by_the_next_edit(project: Path) -> None:
    with Index.open(project) as idx:
        minter = IriMinter(idx.project_name)
        records.create_plan(idx.store, minter, "root")
        records.record_decision(idx.store, minter, plan="root", text="Sessions live in SQLite")
        assert len(_unembedded(idx.store)) == 1
    _edit(project)
    with Index.open(project) as idx:
        idx.index()
        assert _unembedded(idx.store) == []


def test_a_run_with_nothing_changed_counts_instead_of_scanning_and_still_mends_a_missing_vector(project: Path) -> None:
    scan = catalog.text("embeddings/unembedded").split("WHERE", 1)[1]
    with Index.open(project) as idx:
        asked: list[str] = []
        idx.store.tracer = lambda text, _seconds: asked.append(text)  # type: ignore[attr-defined]
        assert idx.index().up_to_date
        assert not any(scan in text for text in asked), "every fragment scanned though nothing changed"
        frag = idx.store.select("PREFIX uko: <https://w3id.org/acms/uko#>\n"
                                "SELECT ?frag WHERE { GRAPH ?g { ?frag uko:vector ?v } } ORDER BY ?frag LIMIT 1")[0]["frag"]
        idx.store.update("PREFIX uko: <https://w3id.org/acms/uko#>\n"
                         "DELETE { GRAPH ?g { ?frag uko:vector ?v } } WHERE { GRAPH ?g { ?frag uko:vector ?v } }",
                         {"frag": [frag]})
        idx.store.tracer = None  # type: ignore[attr-defined]
    with Index.open(project) as idx:
        assert idx.index().up_to_date
        assert _unembedded(idx.store) == []


def test_an_index_run_fits_the_model_again_when_its_cache_was_removed(project: Path) -> None:
    """The model's files live in the index's cache: with them gone no query matches the stored vectors, so
    the next run, even one that finds the files unchanged, fits a model and embeds every fragment with it."""
    with Index.open(project) as idx:
        assert idx.embeddings.status().provider_problem is None
    shutil.rmtree(project / ".acms" / "cache")
    with Index.open(project) as idx:
        report = idx.index()
        assert report.up_to_date and report.embedded == _count(idx.store, "embeddings/count-fragments") > 0
        assert report.embedding_model and report.embedding_model.startswith("lsa-")
        assert _unembedded(idx.store) == []
        status = idx.embeddings.status()
        assert status.provider_problem is None and status.configured_model == status.model == report.embedding_model
        found = idx.search("parser", k=3)
        assert not found.warnings and any(h.vector > 0 for h in found.hits)
        again = idx.index()  # the model is in place now: nothing is fitted again
        assert again.embedded == 0
