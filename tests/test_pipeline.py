"""Indexing the sample project: concrete triples, incremental re-index, validation before writes."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode

from acms.config import Settings
from acms.ingest import emit
from acms.store.oxigraph import OxigraphStore
from acms.tokens import count
from acms.temporal import tiers
from acms.vocab import PROV, TIER_COLD, UKO, IriMinter

from .conftest import run_index


def _open(root: Path) -> OxigraphStore:
    return OxigraphStore(root / ".acms" / "graph")


def _entity(store: OxigraphStore, qualname: str) -> NamedNode:
    rows = store.select(
        "SELECT ?e WHERE { GRAPH ?g { ?e uko:qualifiedName ?qn } }", {"qn": Literal(qualname)}
    )
    assert len(rows) == 1, f"{qualname}: {rows}"
    return rows[0]["e"]  # type: ignore[return-value]


def _objects(store: OxigraphStore, s: NamedNode, p: NamedNode) -> set[str]:
    return {q.object.value for q in store.raw.quads_for_pattern(s, p, None, None)}


def test_method_triples(indexed_sample: Path) -> None:
    store = _open(indexed_sample)
    method = _entity(store, "pkg.mod.Parser.parse_header")
    cls = _entity(store, "pkg.mod.Parser")
    assert _objects(store, method, NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")) == {UKO.Method.value}
    assert method.value in _objects(store, cls, UKO.defines)
    assert _objects(store, method, UKO.startLine) == {"20"}
    assert _objects(store, method, UKO.endLine) == {"23"}
    assert _objects(store, method, UKO.sourceRef) == {"pkg/mod.py:20-23"}
    assert _entity(store, "pkg.util.normalize").value in _objects(store, method, UKO.calls)
    rows = store.select(
        """SELECT ?f ?text ?tokens ?path ?start ?end WHERE { GRAPH ?g {
             ?e uko:hasFragment ?f . ?f uko:lod "micro" ; uko:text ?text ;
             uko:startLine ?start ; uko:endLine ?end ; uko:inFile ?file . ?file uko:path ?path }
             BIND(fn:tokenCount(?text) AS ?tokens) }""",
        {"e": method},
    )
    assert len(rows) == 1
    text = rows[0]["text"].value
    assert text.lstrip().startswith("def parse_header(self, line: str)")
    assert int(rows[0]["tokens"].value) == count(text)  # counted by the query: a count is not stored
    # A fragment's provenance is its file's path and its own lines; what the file says is not repeated.
    assert f"{rows[0]['path'].value}:{rows[0]['start'].value}-{rows[0]['end'].value}" == "pkg/mod.py:20-23"
    assert not any(_objects(store, rows[0]["f"], p) for p in (UKO.sourceRef, UKO.language, UKO.contentHash, UKO.tokenCount))
    store.close()


def test_structure_edges(indexed_sample: Path) -> None:
    store = _open(indexed_sample)
    assert _entity(store, "pkg.mod.Base").value in _objects(store, _entity(store, "pkg.mod.Parser"), UKO.inherits)
    assert _entity(store, "pkg.util").value in _objects(store, _entity(store, "pkg.mod"), UKO.imports)
    parse_all = _entity(store, "pkg.mod.Parser.parse_all")
    assert {
        _entity(store, "pkg.mod.Parser.parse_header").value,
        _entity(store, "pkg.util.join_parts").value,
    } <= _objects(store, parse_all, UKO.calls)
    assert _entity(store, "pkg.mod.Parser").value in _objects(store, _entity(store, "pkg.mod.make_parser"), UKO.calls)
    store.close()


def test_docs_text_and_skips(sample_project: Path) -> None:
    report = run_index(sample_project)
    assert report.skipped_counts().get("binary") == 2
    assert "pkg/broken.py" in report.parse_errors
    store = _open(sample_project)
    titles = {r["t"].value for r in store.select("SELECT ?t WHERE { GRAPH ?g { ?s a uko:DocSection ; uko:name ?t } }")}
    assert titles == {"Guide", "Install", "Usage", "Advanced"}
    broken = IriMinter("sample").file("pkg/broken.py")
    assert _objects(store, broken, UKO.parseError)
    assert len(_objects(store, broken, UKO.hasFragment)) >= 2  # outline + a text window
    assert not _objects(store, IriMinter("sample").file("data.txt"), UKO.path)
    store.close()


def test_reindex_unchanged_writes_nothing(indexed_sample: Path) -> None:
    store = _open(indexed_sample)
    before = sorted(str(q) for q in store.raw)
    store.close()
    report = run_index(indexed_sample)
    assert report.up_to_date and report.triples_written == 0
    store = _open(indexed_sample)
    assert sorted(str(q) for q in store.raw) == before
    store.close()


def test_changed_and_deleted_files_replace_their_triples(indexed_sample: Path) -> None:
    util = indexed_sample / "pkg" / "util.py"
    util.write_text(util.read_text().replace("def join_parts", "def join_all"))
    (indexed_sample / "notes.txt").unlink()
    report = run_index(indexed_sample)
    assert (report.files_indexed, report.files_removed) == (1, 1)
    store = _open(indexed_sample)
    current = "SELECT ?q WHERE { GRAPH ?g { ?e uko:qualifiedName ?q } FILTER(?g != <%s>) }" % TIER_COLD.value
    qns = {r["q"].value for r in store.select(current)}
    assert "pkg.util.join_all" in qns and "pkg.util.join_parts" not in qns
    gone = IriMinter("sample").code("pkg/util.py", "pkg.util.join_parts")
    incoming = {q.predicate for q in store.raw.quads_for_pattern(None, None, gone, None)}
    assert incoming == {PROV.specializationOf}, "dangling edges to a removed symbol"
    assert not list(store.raw.quads_for_pattern(gone, None, None, None))
    assert not _objects(store, IriMinter("sample").file("notes.txt"), UKO.path)
    # Nothing is lost: the removed symbol and the deleted file are cold versions, with their text.
    old = store.select(
        "SELECT ?e ?t ?text WHERE { GRAPH <%s> { ?v prov:specializationOf ?e ; prov:invalidatedAtTime ?t ; "
        "uko:hasFragment ?f . ?f uko:lod 'micro' ; uko:text ?text } }" % TIER_COLD.value)
    by_entity = {r["e"].value: r["text"].value for r in old}
    assert "def join_parts" in by_entity[gone.value]
    assert IriMinter("sample").file("notes.txt").value in by_entity
    assert all(r["t"].value.endswith("Z") for r in old)
    assert tiers.violations(store) == []
    runs = store.select("SELECT ?r WHERE { GRAPH ?g { ?r a uko:IndexRun } }")
    assert len(runs) == 2
    store.close()


def test_a_broken_file_is_quarantined_and_the_rest_is_written(indexed_sample: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A file whose triples violate a shape is left out (named, with the shape); the others land."""
    real = emit.emit_file

    def drop_hash(*args, **kwargs):  # a batch whose File node lacks its content hash
        batch = real(*args, **kwargs)
        if any("util.py" in q.object.value for q in batch.quads if q.predicate == UKO.path):
            batch.quads = [q for q in batch.quads if q.predicate != UKO.contentHash]
        return batch

    monkeypatch.setattr(emit, "emit_file", drop_hash)
    (indexed_sample / "pkg" / "util.py").write_text('"""Changed."""\n')
    (indexed_sample / "pkg" / "fresh.py").write_text("def fresh():\n    return 1\n")
    report = run_index(indexed_sample)
    assert list(report.quarantined) == ["pkg/util.py"] and "contentHash" in report.quarantined["pkg/util.py"]
    store = _open(indexed_sample)
    paths = {r["p"].value for r in store.select("SELECT ?p WHERE { GRAPH ?g { ?f a uko:File ; uko:path ?p } }")}
    store.close()
    assert "pkg/util.py" not in paths and {"pkg/mod.py", "pkg/fresh.py"} <= paths


def test_settings_cap_and_exclude(sample_project: Path) -> None:
    report = run_index(sample_project, Settings(max_file_bytes=100, exclude=("docs/",)))
    counts = report.skipped_counts()
    assert counts.get("too-large", 0) >= 1
    assert counts.get("ignored", 0) >= 1


def test_parallel_extraction_matches_serial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Big batches are parsed in worker processes; the graph must be the same as a serial parse."""
    from acms.ingest import pipeline

    def make(root: Path) -> None:
        for i in range(pipeline.PARALLEL_MIN_FILES + 6):
            (root / f"m{i}.py").parent.mkdir(parents=True, exist_ok=True)
            (root / f"m{i}.py").write_text(f'"""Module {i}."""\n\nfrom m0 import f0\n\n\ndef f{i}(x):\n    return f0(x) + {i}\n')

    graphs = []
    for mode, threshold in (("parallel", pipeline.PARALLEL_MIN_FILES), ("serial", 10**9)):
        root = tmp_path / mode / "proj"
        make(root)
        monkeypatch.setattr(pipeline, "PARALLEL_MIN_FILES", threshold)
        report = run_index(root)
        assert report.files_indexed == 70 and not report.parse_errors
        store = _open(root)
        rows = store.select("SELECT ?s ?p ?o WHERE { GRAPH <https://w3id.org/acms/tier/warm> { ?s ?p ?o } "
                            "FILTER(?p NOT IN (<http://www.w3.org/ns/prov#generatedAtTime>, uko:rootPath)) }")
        graphs.append({(r["s"].value, r["p"].value, r["o"].value) for r in rows})
        store.close()
    assert graphs[0] == graphs[1]
    assert any(p.endswith("#calls") for _, p, _ in graphs[0])


@pytest.mark.skipif(not hasattr(os, "nice"), reason="POSIX niceness")
def test_extraction_workers_run_below_the_writers_priority() -> None:
    """The writer is a streamed index's bottleneck: its pool's workers yield the cores to it."""
    from acms.ingest import pipeline

    paths = {f"m{i}.py" for i in range(pipeline.PARALLEL_MIN_FILES)}
    with pipeline.ExtractorPool(paths, 40, workers=2) as pool:
        assert pool._pool is not None
        niceness = pool._pool.submit(os.nice, 0).result()
    assert niceness == min(19, os.nice(0) + pipeline.WORKER_NICENESS)


@pytest.mark.skipif(not hasattr(os, "nice"), reason="POSIX niceness")
def test_a_refreshs_parsing_workers_run_below_its_priority() -> None:
    """A branch switch's files are parsed in workers while the run reads the files' old quads (on two
    cores, at equal priority, that read took 3.5-4 s instead of 2): its workers yield too."""
    from acms.ingest import pipeline

    with pipeline.refresh_pool(2) as pool:
        niceness = pool.submit(os.nice, 0).result()
    assert niceness == min(19, os.nice(0) + pipeline.WORKER_NICENESS)


KILL_OWNER = """
import os, signal, sys, time
from pathlib import Path
from acms.ingest import pipeline

if __name__ == "__main__":
    paths = {f"m{i}.py" for i in range(pipeline.PARALLEL_MIN_FILES)}
    with pipeline.ExtractorPool(paths, 40, workers=2) as pool:
        busy = [pool._pool.submit(time.sleep, 600) for _ in range(2)]  # a long task each
        time.sleep(1.0)
        Path(sys.argv[1]).write_text(" ".join(map(str, pool._pool._processes)))
        os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="/proc")
def test_extraction_workers_end_with_the_process_that_started_them(tmp_path: Path) -> None:
    """A ``kill -9`` of ``acms index`` left its pool's forkserver and workers idle forever (a forkserver
    worker's parent is the forkserver, which waits for its workers)."""
    import signal
    import subprocess
    import sys
    import time

    script, pids = tmp_path / "kill_owner.py", tmp_path / "pids"
    script.write_text(KILL_OWNER, encoding="utf-8")
    with open(tmp_path / "stderr", "w") as err:  # not a pipe: a worker left alive would hold it open
        proc = subprocess.run([sys.executable, str(script), str(pids)], stdout=subprocess.DEVNULL, stderr=err,
                              timeout=60)
    assert proc.returncode == -signal.SIGKILL, (tmp_path / "stderr").read_text()
    alive = [int(p) for p in pids.read_text().split()]
    assert len(alive) == 2
    deadline = time.monotonic() + 10
    try:
        while alive and time.monotonic() < deadline:
            alive = [p for p in alive if _running(p)]
            time.sleep(0.05)
        assert alive == [], "the extraction workers outlived the process that started them"
    finally:
        for pid in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


UNGUARDED = """
import sys
from acms.api import Index

with Index.open(sys.argv[1]) as index:  # no `if __name__ == "__main__":` guard
    index.index()
"""


def test_a_script_without_the_main_guard_fails_at_once_with_what_to_do(tmp_path: Path) -> None:
    """Python runs a script again in every helper process it starts (spawn, the forkserver), so an
    unguarded script's index ran again in the first extraction worker and waited, for good, for the
    index lock its parent held (64 files or more start the pool). Now that repeated call is refused
    with the fix, the pool breaks, and the run fails in seconds with the index as it was."""
    import signal
    import subprocess
    import sys

    from acms.ingest.pipeline import PARALLEL_MIN_FILES

    root = tmp_path / "project"
    root.mkdir()
    for i in range(PARALLEL_MIN_FILES + 6):
        (root / f"m{i}.py").write_text(f"def f{i}(x):\n    return x + {i}\n", encoding="utf-8")
    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(script), str(root)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the workers too: each would index the project once it got the lock
        proc.communicate()
        pytest.fail("an unguarded script's index hung")
    assert proc.returncode == 1, err
    assert 'if __name__ == "__main__":' in err and "ended abruptly" in err
    assert "Traceback" in err  # (the script's own: it did not catch the error)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def test_an_index_run_gives_back_the_collectors_thresholds(sample_project: Path, monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """The run collects cycles rarely (``memory.collecting_rarely``), and only while it lasts: a server
    that indexes keeps its own thresholds, whether the run succeeds or fails."""
    import gc

    import acms.service.indexing.run as index_run
    from acms.memory import RARE_THRESHOLDS

    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []
    real = index_run.IndexRun._files

    def files(self: index_run.IndexRun) -> None:
        seen.append(gc.get_threshold())
        real(self)

    monkeypatch.setattr(index_run.IndexRun, "_files", files)
    run_index(sample_project)
    assert seen == [RARE_THRESHOLDS]
    assert gc.get_threshold() == before

    def broken(self: index_run.IndexRun) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(index_run.IndexRun, "_files", broken)
    with pytest.raises(OSError):
        run_index(sample_project)
    assert gc.get_threshold() == before
