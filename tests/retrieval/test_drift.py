"""The LSA model is fitted again only when the fragments folded since its fit pass REFIT_SHARE of those
it was fitted over: edits fold into the model they found, a project that changed enough gets a new one."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acms.api import Index
from acms.mcp_server.tools import AcmsTools
from acms.retrieval.drift import REFIT_CAP, REFIT_SHARE, Drift
from acms.retrieval.embedding_ahead import EmbeddingAhead, Folded
from acms.retrieval.embedding_store import active_model
from acms.results import Refreshed
from acms.vocab import UKO

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ACMS = str(Path(sys.executable).parent / "acms")


def model_id(idx: Index) -> str:
    with idx.reading() as store:
        model = active_model(store)
        assert model is not None
        return model.model_id


def vectors(idx: Index) -> set[tuple[str, str, str]]:
    """Every stored vector: (fragment, encoded vector, graph)."""
    with idx.reading() as store:
        return {(str(q.subject), str(q.object), str(q.graph_name)) for q in store.quads(None, UKO.vector)}


def functions(n: int, prefix: str) -> str:
    return "\n\n".join(f"def {prefix}_{i}(value):\n    \"\"\"Scale the {prefix} value {i}.\"\"\"\n"
                       f"    return value * {i} + len('{prefix}')\n" for i in range(n))


def indexed(tmp_path: Path, numbers: bool = False) -> tuple[Path, str, Drift]:
    """A copy of the sample project indexed: its root, its model's id and the model's drift count.
    ``numbers``: with 40 more functions, so that a module of REFIT_SHARE's fragments stays below REFIT_CAP."""
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "sample_project", root)
    if numbers:
        (root / "pkg" / "numbers.py").write_text(functions(40, "number"))
    with Index.open(root, record_use=False) as idx:
        idx.index()
        first = model_id(idx)
        fitted = Drift.load(idx.layout.cache, first)
    assert fitted is not None and fitted.folded == 0
    return root, first, fitted


def test_edits_fold_into_the_model_until_the_drift_passes_the_share(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "sample_project", root)
    (root / "pkg" / "numbers.py").write_text(functions(40, "number"))
    with Index.open(root, record_use=False) as idx:
        idx.index()
        first = model_id(idx)
        drift = Drift.load(idx.layout.cache, first)
        assert drift is not None and drift.folded == 0 and drift.fitted_on > 40

        (root / "pkg" / "util.py").write_text((root / "pkg" / "util.py").read_text() + "\n\ndef extra():\n    return 1\n")
        report = idx.refresh()
        assert report is not None and report.embedded >= 1
        drift = Drift.load(idx.layout.cache, first)
        assert model_id(idx) == first and drift is not None and 0 < drift.folded <= report.embedded
        folded = drift.folded

        # lines inserted above functions: their fragments keep their IRIs and vectors, only the
        # module's own text is embedded again
        util = root / "pkg" / "numbers.py"
        util.write_text("# a comment\n# another\n" + util.read_text())
        report = idx.refresh()
        assert report is not None and 1 <= report.embedded <= 2
        drift = Drift.load(idx.layout.cache, first)
        assert drift is not None and drift.folded - folded <= 2  # the module's own text changed

        # a new module of more fragments than REFIT_SHARE of the fit: a refresh (what a read or a watcher
        # runs) folds them on and says the refit is due; the next `acms index` fits again, nothing changed
        (root / "pkg" / "letters.py").write_text(functions(int(drift.fitted_on * REFIT_SHARE) + 5, "letter"))
        report = idx.refresh()
        assert report is not None and report.refit_due and not report.refitted
        due = Drift.load(idx.layout.cache, first)
        assert model_id(idx) == first and due is not None and due.due() and not due.due(0, REFIT_CAP)
        assert Drift.pending(idx.layout.cache)
        assert idx.search("scale the letter value", "vector", 3).hits  # folded: the old model answers for them
        report = idx.index()
        assert report.up_to_date and report.refitted and not report.refit_due
        second = model_id(idx)
        assert second != first
        refit = Drift.load(idx.layout.cache, second)
        assert refit is not None and refit.folded == 0 and refit.fitted_on == report.embedded
        assert not Drift.pending(idx.layout.cache)
        assert idx.search("scale the letter value", "vector", 3).hits  # the new model's vectors answer


def test_a_refresh_fits_again_itself_past_the_cap(tmp_path: Path) -> None:
    """A refresh leaves a due refit for later only up to REFIT_CAP: a server that does not watch (its
    every write a read's) still gets a model fitted to the project."""
    root, first, fitted = indexed(tmp_path)
    (root / "pkg" / "letters.py").write_text(functions(int(fitted.fitted_on * REFIT_CAP) + 5, "letter"))
    with Index.open(root, record_use=False) as idx:
        report = idx.refresh()
        assert report is not None and report.refitted and not report.refit_due
        assert model_id(idx) != first and not Drift.pending(idx.layout.cache)


class _FailAfter:
    """A progress that raises as ``phase`` ends: the run rolls the store back (its caches stay as written)."""

    def __init__(self, phase: str) -> None:
        self.phase = phase

    def start(self, phase: str, total: int | None = None) -> None:
        pass

    def update(self, done: int, total: int | None = None) -> None:
        pass

    def finish(self, phase: str) -> None:
        if phase == self.phase:
            raise RuntimeError(f"after {phase}")


def test_a_refit_that_does_not_land_leaves_the_old_model_usable(tmp_path: Path) -> None:
    """The new model is written beside the caches before the run lands; a run that then fails leaves the
    graph on the old model, which queries and the next run still find (kept under its id)."""
    root, first, fitted = indexed(tmp_path)
    (root / "pkg" / "letters.py").write_text(functions(int(fitted.fitted_on * REFIT_SHARE) + 5, "letter"))
    with Index.open(root, record_use=False) as idx:
        try:
            idx.index(progress=_FailAfter("vectors"))  # the new model landed, the graph not
        except RuntimeError:
            pass
        else:
            raise AssertionError("the run did not fail")
    with Index.open(root, mode="read", refresh="off") as reader:  # rolled back; the old model still answers
        assert model_id(reader) == first and reader.search("parse header", "vector", 3).hits
    with Index.open(root, record_use=False) as idx:
        report = idx.index()
        assert report.refitted and model_id(idx) != first
        assert idx.search("scale the letter value", "vector", 3).hits


def test_a_watcher_fits_again_once_the_project_is_quiet(tmp_path: Path) -> None:
    """The watcher's refresh after a save folds the new code on (a read may be waiting for it); the refit
    it left due is made by the watcher after a quiet spell, as a write of its own, with a line of its own."""
    root, first, fitted = indexed(tmp_path, numbers=True)
    heard: list[Refreshed] = []
    with Index.open(root, mode="shared", record_use=False, watch_debounce_ms=50) as idx:  # as acms mcp holds it
        following = idx.follower(heard.append)
        following.refit_idle_s = 1.0
        following.start()
        try:
            assert following.ready.wait(10)
            (root / "pkg" / "letters.py").write_text(functions(int(fitted.fitted_on * REFIT_SHARE) + 5, "letter"))
            deadline = time.monotonic() + 60
            while not any(h.refitted for h in heard) and time.monotonic() < deadline:
                time.sleep(0.1)
        finally:
            following.stop()
        assert [h.error for h in heard if h.error] == []
        refreshed = [h for h in heard if h.changed]
        refits = [h for h in heard if h.refitted]
        assert refreshed and refreshed[0].paths == ["pkg/letters.py"] and not refreshed[0].refitted
        assert len(refits) == 1 and not refits[0].changed and "LSA model fitted again" in refits[0].line()
        assert heard.index(refits[0]) > heard.index(refreshed[0])
        assert model_id(idx) != first and not Drift.pending(idx.layout.cache)
        assert idx.search("scale the letter value", "vector", 3).hits


def test_the_mcp_index_tool_leaves_a_due_refit_for_later(tmp_path: Path) -> None:
    """An agent's `index` tool call re-reads what changed and folds it in, as a refresh does: the refit
    waits for `acms index` or an idle watcher, not for the agent."""
    root, first, fitted = indexed(tmp_path, numbers=True)
    (root / "pkg" / "letters.py").write_text(functions(int(fitted.fitted_on * REFIT_SHARE) + 5, "letter"))
    with Index.open(root, mode="shared", record_use=False) as idx:  # as acms mcp holds it
        reply = json.loads(AcmsTools(idx).refresh_index())
        assert reply["files_indexed"] == 1 and not reply["up_to_date"]
        assert model_id(idx) == first and Drift.pending(idx.layout.cache)


def test_a_watchers_refit_is_made_outside_the_writers_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`refresh(refit=True)` (the watcher's, idle) reads the texts under a reader's share and lets a worker
    fit and fold while it holds no lock: another process reads meanwhile. Only the landing is a write."""
    root, first, fitted = indexed(tmp_path, numbers=True)
    (root / "pkg" / "letters.py").write_text(functions(int(fitted.fitted_on * REFIT_SHARE) + 5, "letter"))
    waited: list[subprocess.CompletedProcess[str]] = []
    real = EmbeddingAhead.result

    def result(self: EmbeddingAhead) -> Folded:
        if not waited:  # the wait outside the lock (the landing asks again, under the writer's lock)
            waited.append(subprocess.run([ACMS, "search", "-C", str(root), "scale the letter value", "--json",
                                          "--wait", "0"], capture_output=True, text=True, timeout=60, check=False))
        return real(self)

    with Index.open(root, record_use=False) as idx:
        assert idx.refresh() is not None and Drift.pending(idx.layout.cache)  # folded, the refit due
    in_place = tmp_path / "in-place" / "proj"
    shutil.copytree(root, in_place)
    with Index.open(in_place, record_use=False) as idx:
        assert idx.index().refitted  # the refit as `acms index` makes it, in the writer's run
        expected = model_id(idx), vectors(idx)
    monkeypatch.setattr(EmbeddingAhead, "result", result)
    with Index.open(root, mode="shared", record_use=False) as idx:  # as acms mcp and acms watch hold it
        report = idx.refresh(refit=True)
        assert report is not None and report.up_to_date and report.refitted and not report.refit_due
        assert model_id(idx) != first and not Drift.pending(idx.layout.cache)
        assert (model_id(idx), vectors(idx)) == expected  # the same model and vectors, tier by tier
        assert idx.search("scale the letter value", "vector", 3).hits
    assert len(waited) == 1 and waited[0].returncode == 0, waited[0].stderr
    assert json.loads(waited[0].stdout)["hits"]
    assert not (idx.layout.cache / "refit-ahead").exists()


def test_a_refit_made_for_a_graph_that_changed_meanwhile_is_not_landed(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A save while the worker refits: the refresh after it folds the saved file, and the worker's vectors
    (made for the texts before it) are dropped; the refit stays due."""
    root, first, fitted = indexed(tmp_path, numbers=True)
    (root / "pkg" / "letters.py").write_text(functions(int(fitted.fitted_on * REFIT_SHARE) + 5, "letter"))
    real = EmbeddingAhead.result
    saved: list[bool] = []

    def result(self: EmbeddingAhead) -> Folded:
        if not saved:
            saved.append(True)
            (root / "pkg" / "words.py").write_text(functions(3, "word"))
        return real(self)

    monkeypatch.setattr(EmbeddingAhead, "result", result)
    with Index.open(root, mode="shared", record_use=False) as idx:
        assert idx.refresh() is not None and Drift.pending(idx.layout.cache)
        report = idx.refresh(refit=True)
        assert report is not None and report.changed_paths == ["pkg/words.py"]
        assert not report.refitted and report.refit_due
        assert model_id(idx) == first and Drift.pending(idx.layout.cache)
        assert idx.search("scale the word value", "vector", 3).hits  # folded with the model it found
    assert not (idx.layout.cache / "refit-ahead").exists()
