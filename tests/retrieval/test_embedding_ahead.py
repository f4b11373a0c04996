"""A first index's embedding made ahead by workers while the caches are built (issue 14): the store,
the vector cache and the model are those of the streamed embedding made afterwards in this process;
a failure or a kill -9 of the indexing process leaves no worker and nothing they wrote."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import shutil
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from acms.api import Index
from acms.errors import StoreError
from acms.index.vectors import VectorMatrix
from acms.retrieval import embedding_ahead, embedding_store
from acms.retrieval.caches import DerivedCaches
from acms.service.indexing.after_files import AfterFiles

from ..temporal.gitrepo import build, commit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VECTOR = "https://w3id.org/acms/uko#vector"


def _checkout(tmp_path: Path, name: str) -> Path:
    """The sample project as a git checkout whose last commit puts one function in the hot tier."""
    root = tmp_path / name
    shutil.copytree(FIXTURES / "sample_project", root, ignore=shutil.ignore_patterns(".acms"))
    build(root)
    util = root / "pkg" / "util.py"
    util.write_text(util.read_text().replace("text.strip().lower()", "text.strip().casefold()"))
    commit(root, "Fold case", "Ada", "2025-01-07T10:00:00+00:00")
    return root


def _started(monkeypatch: pytest.MonkeyPatch) -> list[embedding_ahead.EmbeddingAhead]:
    started: list[embedding_ahead.EmbeddingAhead] = []
    real = embedding_ahead.EmbeddingAhead.__init__

    def noting(self, *args, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
        started.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(embedding_ahead.EmbeddingAhead, "__init__", noting)
    return started


def test_vectors_made_ahead_are_those_made_after_the_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedding_store, "FIT_SAMPLE", 9)  # the sample decides the model
    monkeypatch.setattr(embedding_store, "STREAM_BATCH", 4)  # many batches
    monkeypatch.setattr(embedding_store, "LAND_BYTES", 3000)  # landed in several loads, none of whole batches
    started = _started(monkeypatch)
    streamed: list[bool] = []  # this process folded the texts after the caches
    real = embedding_store._stream_all
    monkeypatch.setattr(embedding_store, "_stream_all", lambda *a, **k: streamed.append(True) or real(*a, **k))
    made = {}
    for ahead_from in (0, 10**9):
        monkeypatch.setattr(embedding_ahead, "AHEAD_FROM", ahead_from)
        root = _checkout(tmp_path, f"repo-{ahead_from}")
        with Index.open(root, embedding_dims=3, project_name="repo", hot_commits=1) as idx:
            report = idx.index(history=10)
            assert report.hot_entities > 0 and report.warnings == []
            rows = idx.store.select(f"SELECT ?frag ?g ?v WHERE {{ GRAPH ?g {{ ?frag <{VECTOR}> ?v }} }}")
            # the index's one model is named once, in the meta graph, not by each fragment
            assert not idx.store.ask("ASK { GRAPH ?g { ?frag <https://w3id.org/acms/uko#embeddingModel> ?m } }")
            matrix = VectorMatrix.load(idx.layout.cache_dir("vectors"))
            assert matrix is not None and matrix.key == DerivedCaches(idx.store, idx.layout).state_key
            model = embedding_store.make_provider("lsa", idx.settings, idx.layout)
            left = sorted(p.name for p in idx.layout.cache.iterdir() if p.name.startswith("."))
        assert left == []  # neither the spill nor the worker's directory, nor a staged model
        made[ahead_from] = (report.embedded, report.embedding_model, model.model_id,
                            Counter((r["frag"].value, r["g"].value, r["v"].value) for r in rows),
                            matrix.ids, np.asarray(matrix.matrix))
        assert len(started) == 1 and len(streamed) == (ahead_from > 0)  # the first run only made it ahead
    ahead, after = made[0], made[10**9]
    assert ahead[0] == after[0] == len(ahead[3]) > 8
    assert ahead[1] == after[1] == ahead[2] == after[2]
    assert ahead[3] == after[3]
    assert {g for _, g, _ in ahead[3]} == {"https://w3id.org/acms/tier/hot", "https://w3id.org/acms/tier/warm"}
    assert ahead[4] == after[4]
    np.testing.assert_array_equal(ahead[5], after[5])


def test_nothing_to_fit_is_the_same_warning_ahead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    warnings = []
    for ahead_from in (0, 10**9):
        monkeypatch.setattr(embedding_ahead, "AHEAD_FROM", ahead_from)
        root = tmp_path / f"p{ahead_from}"
        root.mkdir()
        (root / "empty.py").write_text("")
        with Index.open(root) as idx:
            report = idx.index()
            warnings.append(report.warnings)
            assert report.embedded == 0
    assert warnings[0] == warnings[1] and any("vectors not computed" in w for w in warnings[0])


def test_a_failed_caches_build_stops_the_worker_and_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedding_ahead, "AHEAD_FROM", 0)
    started = _started(monkeypatch)

    def broken(self, layout) -> None:  # noqa: ANN001
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(AfterFiles, "warm_caches", broken)
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "sample_project", root, ignore=shutil.ignore_patterns(".acms"))
    with Index.open(root) as idx:
        with pytest.raises(OSError):
            idx.index()
        assert len(started) == 1
        assert multiprocessing.active_children() == []
        assert [p.name for p in idx.layout.cache.iterdir() if p.name.startswith(".corpus-")] == []


KILL_PARENT = """
import os, signal, sys, time
from pathlib import Path
from acms.retrieval.embedding_ahead import EmbeddingAhead

if __name__ == "__main__":
    spill, out, pids = map(Path, sys.argv[1:4])
    ahead = EmbeddingAhead(spill, out, 3, set())  # its worker blocks reading the spill, a FIFO no one writes
    time.sleep(1.0)
    pids.write_text(" ".join(str(pid) for pid in ahead._pool._processes))
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.skipif(not Path("/proc").is_dir() or not hasattr(os, "mkfifo"), reason="/proc and FIFOs")
def test_kill_9_of_the_indexing_process_takes_its_embedding_worker_with_it(tmp_path: Path) -> None:
    """A worker left running would write into the cache directory after the next run cleared it."""
    import subprocess
    import sys
    import time

    spill, pids = tmp_path / "stuck.spill", tmp_path / "pids"
    os.mkfifo(spill)
    script = tmp_path / "kill_parent.py"
    script.write_text(KILL_PARENT, encoding="utf-8")
    with open(tmp_path / "stderr", "w") as err:  # not a pipe: a worker left alive would hold it open
        proc = subprocess.run([sys.executable, str(script), str(spill), str(tmp_path / "out"), str(pids)],
                              stdout=subprocess.DEVNULL, stderr=err, timeout=60)
    assert proc.returncode == -signal.SIGKILL, (tmp_path / "stderr").read_text()
    workers = [int(p) for p in pids.read_text().split()]
    assert workers
    deadline = time.monotonic() + 10
    alive = workers
    try:
        while alive and time.monotonic() < deadline:
            alive = [p for p in alive if Path(f"/proc/{p}").exists() and "\nState:\tZ" not in _status(p)]
            time.sleep(0.05)
        assert alive == [], "the embedding worker outlived the indexing process"
    finally:
        for pid in alive:  # not left running by a failed run of this test
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_worker_killed_mid_task_fails_the_run_instead_of_hanging_it(tmp_path: Path) -> None:
    """The OOM killer taking the worker: ``multiprocessing.Pool`` waited for its result forever, so
    ``acms index`` hung in "fitting"; the pool now breaks and ``result()`` raises at once."""
    import threading

    spill = tmp_path / "stuck.spill"
    os.mkfifo(spill)  # the worker blocks reading it
    ahead = embedding_ahead.EmbeddingAhead(spill, tmp_path / "out", 3, set())
    try:
        deadline = time.monotonic() + 20
        while not ahead._pool._processes and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        for pid in list(ahead._pool._processes):
            os.kill(pid, signal.SIGKILL)
        raised: list[BaseException] = []

        def wait() -> None:
            try:
                ahead.result()
            except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
                raised.append(exc)

        waiter = threading.Thread(target=wait, daemon=True)
        waiter.start()
        waiter.join(20)
        assert not waiter.is_alive(), "result() still waits for a killed worker"
        assert len(raised) == 1 and isinstance(raised[0], StoreError) and "ended abruptly" in str(raised[0])
    finally:
        ahead.close()


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "\nState:\tZ"
