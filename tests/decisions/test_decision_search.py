"""A decision recorded with ``acms decision record`` is searchable at once, placed at its own source
reference (``decisions/D-1:1-N``, no file holds it): the writer that records it brings the keyword,
ranking and vector caches to the new graph state by an update, not a build from the whole store, and
they answer as caches built from scratch would."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acms.api import Index
from acms.config import Settings
from acms.retrieval.caches import DerivedCaches
from acms.retrieval.embedding_store import active_model
from acms.service.indexing import index_project
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore

from ..conftest import copy_of_indexed
from .conftest import FIXTURE

DECISION = "Session tokens are rotated on every privilege change; the rotation ledger lives beside the vault."
WORDS = "rotation ledger vault privilege"


@pytest.fixture(scope="module")
def _embedded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ADR project indexed with its vectors (the shared template has none)."""
    root = tmp_path_factory.mktemp("decision-search") / "adr_project"
    shutil.copytree(FIXTURE, root)
    layout = IndexLayout(root / ".acms")
    store = OxigraphStore(layout.graph)
    try:
        index_project(root, store, Settings(), layout=layout)
    finally:
        store.close()
    return root


def _hits(root: Path) -> list[tuple[str, str, int, int, float, float]]:
    with Index.open(root, mode="read", refresh="off") as idx:
        return [(h.name, h.path, h.start_line, h.end_line, round(h.keyword, 6), round(h.vector, 6))
                for h in idx.search(WORDS, k=5).hits]


def test_a_recorded_decision_is_found_at_once_by_an_update_of_the_caches(
        _embedded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_of_indexed(_embedded, tmp_path)
    assert not any(name == "D-1" for name, *_ in _hits(root))
    with Index.open(root, refresh="off") as idx:
        idx.plans.create("security")
        with monkeypatch.context() as patch:  # a build from the whole store would read every row
            patch.setattr(DerivedCaches, "_read_segment", lambda self: pytest.fail("the caches were built again"))
            assert idx.plans.record(DECISION, plan="security").id == "D-1"  # type: ignore[union-attr]
    followed = _hits(root)
    name, path, start, end, keyword, _ = followed[0]
    assert (name, path, start) == ("D-1", "decisions/D-1", 1) and end >= 3
    assert keyword == 1.0
    with Index.open(root, mode="read", refresh="off") as idx, idx.reading() as store:
        model = active_model(store)
        assert model is not None
        fragment = idx.search(WORDS, k=1).hits[0].fragment
        assert fragment in DerivedCaches(store, idx.layout).vectors(model.model_id).ids  # embedded with the model
    for cache in ("keyword", "ranking", "tokens", "vectors"):
        shutil.rmtree(root / ".acms" / "cache" / cache)
    assert _hits(root) == followed  # built from scratch: the same answers


def test_without_vectors_decisions_recorded_in_the_same_second_are_all_found(project: Path) -> None:
    """The shared template indexes without embeddings: the update has no vector cache to follow. The
    caches' key counts the recorded decisions, so a second one in the same second moves it too."""
    with Index.open(project, refresh="off") as idx:
        idx.plans.create("security")
        idx.plans.record(DECISION, plan="security")
        idx.plans.record("The audit trail of the rotation ledger is append-only.", plan="security")
    assert {hit[:3] for hit in _hits(project)[:2]} == {("D-1", "decisions/D-1", 1), ("D-2", "decisions/D-2", 1)}


def _context(root: Path, task: str) -> list[tuple[str, str]]:
    with Index.open(root, mode="read", refresh="off") as idx:
        assembled = idx.assemble(task, 1500, strategy="arce").assembled
    return [(item.candidate.kind, item.candidate.path) for item in assembled.items]


@pytest.mark.parametrize("about", ["pkg.store.SessionStore", "pkg.store", "pkg/store.py"])
def test_the_default_context_shows_the_decisions_about_its_code_after_the_bodies(project: Path, about: str) -> None:
    """About the class around the method to edit, its module or its file: the walk reaches the
    decision from the bodies it shows (``decisions-current.rq``, ``decision-reach.rq``); a superseded one,
    retired to the cold tier, is not current and is not shown."""
    task = "make SessionStore.put keep the value for the key"
    assert ("Decision", "decisions/D-1") not in _context(project, task)
    with Index.open(project, refresh="off") as idx:
        idx.plans.create("storage")
        idx.plans.record("Sessions are written through to Redis; put never blocks on it.", plan="storage",
                         about=[about])
    shown = _context(project, task)
    assert ("Decision", "decisions/D-1") in shown
    assert shown[0] == ("Method", "pkg/store.py") and shown.index(("Decision", "decisions/D-1")) > 0  # after the bodies
    with Index.open(project, refresh="off") as idx:  # superseded: D-1 retired, D-2 about nothing here
        idx.plans.record("Sessions go to Postgres.", plan="storage", supersedes="D-1", about=["pkg.cache.get"])
    assert ("Decision", "decisions/D-1") not in _context(project, task)


@pytest.mark.parametrize("about", ["pkg/big.py", "big"])
def test_a_decision_about_a_file_or_module_speaks_for_the_code_in_it(tmp_path: Path, about: str) -> None:
    """No edge of the walk reaches a file from its code, nor a module from a method two levels down: a
    decision about either still speaks for the code in it (``decision-reach.rq``)."""
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    helpers = "".join(f"def helper_{i}(value):\n    return value + {i}\n\n\n" for i in range(40))
    (root / "pkg" / "big.py").write_text(helpers + "class Header:\n    def unfold_header(self, value):\n"
                                         "        return value.replace('\\r\\n ', ' ')\n")
    with Index.open(root, embed_on_index=False) as idx:
        idx.index()
        idx.plans.create("mail")
        idx.plans.record("Header unfolding follows RFC 5322: CRLF plus whitespace becomes one space.", plan="mail",
                         about=[about])
    shown = _context(root, "make unfold_header also join tab continuations")
    assert shown[0] == ("Method", "pkg/big.py") and ("Decision", "decisions/D-1") in shown


def test_a_running_server_answers_with_a_decision_another_process_recorded(project: Path, tmp_path: Path) -> None:
    """``acms serve`` holds its reader; ``acms decision record`` in another process writes beside it, and
    the server's next render holds the decision: the write moved the index's generation and the caches'
    key, and left the caches updated."""
    from tests.test_live_provenance import start_serve, stop_serve

    served = start_serve(project, tmp_path / "serve.log", ["--no-watch"])
    try:
        task = "make SessionStore.put keep the value for the key"
        assert "decisions/D-1" not in json.dumps(served.render(task))
        for args in (["plan", "create", "storage"],
                     ["decision", "record", "Sessions are written through to Redis; put never blocks on it.",
                      "--plan", "storage", "--about", "pkg.store.SessionStore"]):
            done = subprocess.run([str(Path(sys.executable).parent / "acms"), *args, "-C", str(project)],
                                  check=False, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
        reply = served.render(task)
        assert any(f.get("source_ref", "").startswith("decisions/D-1:") for f in reply["fragments"]), reply
    finally:
        stop_serve(served)
