"""A first index is streamed group by group (issue 14) and still lands whole or not at all.

The streamed graph must be the graph the one-batch path writes (same quads, bar the run's times);
an error or ``kill -9`` between two groups leaves no index (a reader sees the empty checkpoint, the
next writer rolls back and indexes the whole project); a file that fails the shapes is quarantined
in its group, the others land.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from acms.ingest import emit, emitted, pipeline
from acms.service.indexing import stream as index_stream
from acms.service.indexing import IndexRun
from acms.service.indexing.batch import OneBatch
from acms.store.oxigraph import OxigraphStore
from acms.vocab import UKO
from tests.service.indexes import graph as _graph
from tests.service.indexes import index as _index
from tests.service.indexes import reader_sees_files

FIXTURES = Path(__file__).parent.parent / "fixtures"

KILLER = """
import os, signal, sys
from acms.api import Index
from acms.service.indexing import stream as index_stream
index_stream.GROUP_FILES = 2

class KillAt:
    def start(self, phase, total=None): pass
    def update(self, done, total=None):
        if done >= 4:  # two groups written
            os.kill(os.getpid(), signal.SIGKILL)
    def finish(self, phase): pass

with Index.open(sys.argv[1], wait=10) as idx:
    idx.index(progress=KillAt())
print("finished")
"""


def _project(tmp_path: Path, name: str = "proj") -> Path:
    root = tmp_path / name
    shutil.copytree(FIXTURES / "sample_project", root)
    shutil.copytree(FIXTURES / "adr_project" / "docs", root / "adrdocs" / "docs")
    for i in range(5):
        (root / "pkg" / f"gen{i}.py").write_text(
            f"from pkg.mod import *\n\n\nclass Gen{i}:\n    def run(self):\n        return helper{i}()\n\n\n"
            f"def helper{i}():\n    return {i}\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("pool", [False, True], ids=["in-process", "worker-pool"])
def test_streamed_first_index_is_the_one_batch_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     pool: bool) -> None:
    streamed, batch = _project(tmp_path / "a"), _project(tmp_path / "b")
    monkeypatch.setattr(index_stream, "GROUP_FILES", 2)  # many groups
    if pool:  # files read, extracted, emitted and validated in the pool's worker processes
        monkeypatch.setattr(pipeline, "PARALLEL_MIN_FILES", 2)
    seen: list[int] = []
    emitted: list[int] = []
    real, real_emitted = index_stream._write_group, index_stream._write_emitted
    monkeypatch.setattr(index_stream, "_write_group", lambda run, sources, *a: (seen.append(len(sources)),
                                                                                real(run, sources, *a)))
    monkeypatch.setattr(index_stream, "_write_emitted", lambda run, got, *a: (emitted.append(len(got.sources)),
                                                                              real_emitted(run, got, *a)))
    one = _index(streamed)
    # the groups emitted where they were read; the last group, every ADR file, emitted by the writer
    assert len(emitted) > 4 and max(emitted) <= 2 and len(seen) == 1
    monkeypatch.setattr(IndexRun, "_mode", lambda self, migration, listing: OneBatch(migration))
    two = _index(batch)
    assert _graph(streamed) == _graph(batch)
    for field in ("files_indexed", "entities", "fragments", "triples_written", "parse_errors", "quarantined"):
        assert getattr(one, field) == getattr(two, field), field
    assert one.files_indexed > 10 and one.parse_errors  # pkg/broken.py is indexed as text


@pytest.mark.parametrize("where", ["beside-extraction", "in-the-writer"])
def test_a_file_failing_the_shapes_is_quarantined_in_its_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              where: str) -> None:
    root = _project(tmp_path)
    monkeypatch.setattr(index_stream, "GROUP_FILES", 2)
    if where == "in-the-writer":  # as for a file linking to a node only the store can type
        monkeypatch.setattr(emitted, "_check", lambda *args: None)
    real = emit.emit_file

    def drop_hash(*args, **kwargs):  # the File node of util.py lacks its content hash
        batch = real(*args, **kwargs)
        if batch.path == "pkg/util.py":
            batch.quads = [q for q in batch.quads if q.predicate != UKO.contentHash]
        return batch

    monkeypatch.setattr(emit, "emit_file", drop_hash)
    report = _index(root)
    assert list(report.quarantined) == ["pkg/util.py"] and "contentHash" in report.quarantined["pkg/util.py"]
    paths = {q.split()[2] for q in _graph(root) if "#path>" in q and "/file/" in q}
    assert '"pkg/util.py"' not in paths and '"pkg/mod.py"' in paths
    contained = [q for q in _graph(root) if "#contains>" in q and "file/pkg/util.py" in q]
    assert contained == []  # the tree leaves it out too


def test_an_error_between_groups_leaves_no_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path)
    monkeypatch.setattr(index_stream, "GROUP_FILES", 2)
    calls = []
    real = index_stream._write_emitted

    def fail_third(*args):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("injected fault in the third group")
        return real(*args)

    monkeypatch.setattr(index_stream, "_write_emitted", fail_third)
    with pytest.raises(RuntimeError, match="third group"):
        _index(root)
    assert not (root / ".acms" / "run-pending").exists()
    assert not reader_sees_files(root)
    monkeypatch.undo()
    assert _index(root).files_indexed > 10


def test_kill_9_between_groups_leaves_no_index_and_the_next_run_lands(tmp_path: Path) -> None:
    root = _project(tmp_path)
    proc = subprocess.run([sys.executable, "-c", KILLER, str(root)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, (proc.stdout, proc.stderr)
    assert (root / ".acms" / "run-pending").exists()
    assert not reader_sees_files(root)  # reads the checkpoint: no file yet
    report = _index(root)
    assert report.first_run and report.files_indexed > 10
    assert not (root / ".acms" / "run-pending").exists()
    store = OxigraphStore(root / ".acms" / "graph", read_only=True)
    try:
        files = store.select("SELECT (COUNT(?f) AS ?n) WHERE { GRAPH ?g { ?f a uko:File } }")
        assert int(files[0]["n"].value) == report.files_indexed
        assert store.ask("ASK { GRAPH ?g { ?p a uko:Project ; uko:contains ?x } }")
    finally:
        store.close()


def test_groups_bound_files_and_bytes_and_put_adrs_last() -> None:
    from acms.ingest.walker import ListedFile

    files = [ListedFile(f"src/f{i}.py", Path("/x"), 1 << 20) for i in range(10)]
    files.insert(3, ListedFile("docs/adr/0001-use-rdf.md", Path("/x"), 10))
    got = list(index_stream.groups(files))
    assert [f.path for f in got[-1]] == ["docs/adr/0001-use-rdf.md"]
    assert all(sum(f.size for f in g) <= index_stream.GROUP_BYTES for g in got[:-1])
    assert sum(len(g) for g in got) == 11
    assert NamedNode  # keep the import used by type checkers honest
