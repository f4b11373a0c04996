"""A large first index writes its files in a child process (issue 14: the later phases start from a
clean heap); the index it leaves is the one a single process writes, and a child that dies or fails
leaves no index behind, as a failed single-process run does.

``SEPARATE_BYTES`` is set to 0 so that the small fixture project goes through the child.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
from pathlib import Path

import pytest

from acms.api import Index
from acms.errors import StoreError, ValidationFailed
from acms.ingest.link_outlines import LinkOutlines, link_outline_key
from acms.ingest.python_extractor import module_name_for
from acms.ingest.symbols import SymbolRows
from acms.service.freshness import last_run, stored_hashes
from acms.service.indexing import child as index_child
from tests.service.indexes import graph as _graph
from tests.service.indexes import index, reader_sees_files

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "sample_project", root)
    shutil.copytree(FIXTURES / "adr_project" / "docs", root / "adrdocs" / "docs")
    return root


class Phases:
    def __init__(self) -> None:
        self.seen: list[tuple[str, object]] = []

    def start(self, phase: str, total: int | None = None) -> None:
        self.seen.append(("start", phase))

    def update(self, done: int, total: int | None = None) -> None:
        self.seen.append(("update", done))

    def finish(self, phase: str) -> None:
        self.seen.append(("finish", phase))


def test_the_child_writes_the_index_one_process_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    apart, together = _project(tmp_path / "a"), _project(tmp_path / "b")
    monkeypatch.setattr(index_child, "SEPARATE_BYTES", 0)
    children: list[int] = []
    real = index_child.stream_in_child
    monkeypatch.setattr(index_child, "stream_in_child", lambda run, listing: (children.append(1), real(run, listing)))
    phases = Phases()
    one = index(apart, progress=phases)
    assert children == [1]
    assert ("start", "indexing") in phases.seen and ("finish", "indexing") in phases.seen  # forwarded from the child
    assert phases.seen.index(("start", "tiers")) > phases.seen.index(("finish", "indexing"))  # then here
    monkeypatch.setattr(index_child, "SEPARATE_BYTES", 1 << 40)
    two = index(together)
    assert children == [1]
    assert _graph(apart) == _graph(together)
    for field in ("files_indexed", "entities", "fragments", "triples_written", "parse_errors", "quarantined",
                  "skipped", "first_run"):
        assert getattr(one, field) == getattr(two, field), field
    assert one.files_indexed > 5 and one.timings["validation"] > 0  # the child's timings came back
    assert not (apart / ".acms" / "run-pending").exists()
    assert index(apart).up_to_date  # and the next run finds it complete


def test_the_child_leaves_the_symbol_table_and_the_link_outlines_for_the_next_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path)
    monkeypatch.setattr(index_child, "SEPARATE_BYTES", 0)
    with Index.open(root, embed_on_index=False, record_use=False) as idx:
        idx.index()
        with idx.reading() as store:
            run = last_run(store)
            left = SymbolRows.load(idx.layout.cache, run)
            assert left is not None and left.rows and left.rows == SymbolRows.from_store(store, run).rows
            hashes = stored_hashes(store)
        modules = {p: h for p, h in hashes.items() if p.endswith(".py")}
        outlines = LinkOutlines(idx.layout.cache)
        kept = outlines.get(link_outline_key(h, module_name_for(p, set(hashes)), p) for p, h in modules.items())
        outlines.close()
        assert modules and len(kept) == len(modules)


def test_a_child_killed_mid_run_leaves_noindex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The OOM killer (or anyone) ends the child between two groups: the parent says so and rolls back."""
    root = _project(tmp_path)
    monkeypatch.setattr(index_child, "SEPARATE_BYTES", 0)

    class KillChild(Phases):
        def update(self, done: int, total: int | None = None) -> None:
            if ("start", "indexing") in self.seen and ("finish", "indexing") not in self.seen:
                for child in multiprocessing.active_children():
                    if child.name == "acms-index-files":
                        os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
            super().update(done, total)

    with pytest.raises(StoreError, match="signal 9"):
        index(root, progress=KillChild())
    assert not (root / ".acms" / "run-pending").exists()
    assert not reader_sees_files(root)
    report = index(root)
    assert report.first_run and report.files_indexed > 5


def test_the_childs_error_is_raised_as_itself() -> None:
    """What the child raises comes back with its class, message and details (an AcmsError keeps its exit code)."""
    exc = ValidationFailed("a batch failed the shapes", ["pkg/mod.py: uko:contentHash missing"])
    back = index_child._rebuilt(type(exc), exc.args, exc.__dict__, str(exc))
    assert type(back) is ValidationFailed and str(back) == str(exc)
    assert back.__dict__ == exc.__dict__

    class Odd(Exception):
        def __new__(cls, *args: object) -> Odd:
            raise TypeError("cannot be rebuilt")

    other = index_child._rebuilt(Odd, (), {}, "odd failure")
    assert isinstance(other, StoreError) and "odd failure" in str(other)


def test_an_error_that_does_not_pickle_still_comes_back_as_its_text() -> None:
    class Local(Exception):  # a class defined in a function does not pickle
        pass

    receive, send = multiprocessing.Pipe(duplex=False)
    index_child._send_error(send, Local("the child's own words"))
    kind, *rest = receive.recv()
    back = index_child._rebuilt(*rest)
    assert kind == "error" and isinstance(back, StoreError) and "the child's own words" in str(back)
    index_child._send_error(send, ValidationFailed("shapes", ["a.py: missing hash"]))
    _, *rest = receive.recv()
    again = index_child._rebuilt(*rest)
    assert type(again) is ValidationFailed and again.__dict__ == ValidationFailed("shapes", ["a.py: missing hash"]).__dict__


KILL_PARENT = """
import multiprocessing, os, signal, sys
from pathlib import Path
from acms.api import Index
from acms.service.indexing import child as index_child
index_child.SEPARATE_BYTES = 0

class KillMe:
    def start(self, phase, total=None): self.phase = phase
    def update(self, done, total=None):
        if getattr(self, "phase", "") == "indexing":  # forwarded from the child: it is writing
            child = [c for c in multiprocessing.active_children() if c.name == "acms-index-files"][0]
            Path(sys.argv[2]).write_text(str(child.pid))
            os.kill(os.getpid(), signal.SIGKILL)
    def finish(self, phase): pass

if __name__ == "__main__":
    with Index.open(sys.argv[1], wait=10) as idx:
        idx.index(progress=KillMe())
    print("finished")
"""


def _gone(pid: int, seconds: float = 10.0) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return True
        if "\nState:\tZ" in state:  # dead, waiting to be reaped by whoever adopted it
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="PR_SET_PDEATHSIG and /proc are Linux's")
def test_kill_9_of_the_parent_takes_the_child_with_it(tmp_path: Path) -> None:
    """``kill -9`` of ``acms index`` while its child writes the files: the child does not outlive it (the
    kernel kills it, ``PR_SET_PDEATHSIG``; failing that, its next message to the parent fails), readers
    see no index, and the next run lands."""
    import subprocess
    import sys

    root = _project(tmp_path)
    script, pid_file = tmp_path / "kill_parent.py", tmp_path / "child.pid"
    script.write_text(KILL_PARENT, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script), str(root), str(pid_file)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL, (proc.stdout, proc.stderr)
    assert _gone(int(pid_file.read_text())), "the child outlived its parent"
    assert (root / ".acms" / "run-pending").exists()
    assert not reader_sees_files(root)
    report = index(root)
    assert report.first_run and report.files_indexed > 5
    assert not (root / ".acms" / "run-pending").exists()
