"""A live refresh under races, with real processes and real files: nothing lost, never a half-updated index.

A refresh racing `acms index`, two watchers following one project, a burst of a thousand saves,
`kill -9` at the phases of a refresh, files that turn odd or are saved between the look and the read,
and a save during a watcher's catch-up: each ends with no file left stale and a graph equal to a
first index of the final files (``current`` from test_refresh, on a copy of the files). The indexed
project is made once per module and copied per test (same folder name: same IRIs).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from acms.api import Index
from acms.service.indexing import IndexReport
from acms.service.watch import Follower

from .test_refresh import current, edit, project

SETTINGS_TOML = "embed_on_index = false\nrecord_use = false\n"  # read by every process (CLI and API alike)
MODULES = 24  # gen/m00.py … gen/m23.py, each calling the one before
WAIT = 20.0  # the longest a test waits for processes to settle (a bound, not a sleep)


def module(k: int, version: int, prefix: str = "f") -> str:
    """gen/mKK.py: its function calls the previous module's, so renaming that one relinks this one."""
    head = f'"""Module {k}, version {version}."""\n\n'
    if k == 0:
        return head + f"\ndef {prefix}0(x: int) -> int:\n    return x + {version}\n"
    return (head + f"from gen.m{k - 1:02} import f{k - 1}\n\n\n"
            f"def {prefix}{k}(x: int) -> int:\n    return f{k - 1}(x) + {version}\n")


@dataclass(frozen=True)
class Base:
    root: Path
    state: set[str]  # the graph as a reader sees it, before any test's edits


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Base:
    """The sample and polyglot projects plus a chain of small modules, indexed once."""
    root = project(tmp_path_factory.mktemp("base"))
    (root / "acms.toml").write_text(SETTINGS_TOML)
    (root / "gen").mkdir()
    (root / "gen" / "__init__.py").write_text("")
    for k in range(MODULES):
        (root / "gen" / f"m{k:02}.py").write_text(module(k, 0))
    with Index.open(root) as idx:
        idx.index()
    return Base(root, state(root, root))


# -- helpers ------------------------------------------------------------------------------------
def copy(base: Base, into: Path) -> Path:
    """The indexed project under ``into``, same folder name (its IRIs are minted from it)."""
    dest = into / base.root.name
    shutil.copytree(base.root, dest, symlinks=True)
    return dest


def state(root: Path, base_root: Path) -> set[str]:
    """The graph a reader of ``root`` sees now (no refresh), roots blanked: a copy not yet refreshed
    still names the folder it was indexed in."""
    with Index.open(root, mode="read", refresh="off", wait=WAIT) as idx:
        return {s.replace(str(base_root), "ROOT") for s in current(idx)}


def fresh(root: Path, into: Path, **overrides: object) -> set[str]:
    """A first index of a copy of ``root``'s files (the graph every race must end in)."""
    dest = into / root.name
    shutil.copytree(root, dest, symlinks=True, ignore=shutil.ignore_patterns(".acms"))
    with Index.open(dest, **overrides) as idx:
        idx.index()
        return current(idx)


def stale(root: Path, **overrides: object) -> list[str]:
    """What a look finds changed on disk since the index's state (it writes nothing)."""
    with Index.open(root, mode="read", refresh="off", wait=WAIT, **overrides) as idx:
        return idx.look().paths


def settled(root: Path, deadline: float) -> list[str]:
    """Wait (up to ``deadline``) until a look finds nothing stale; what it found last."""
    while True:
        left = stale(root)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def acms(*args: str) -> list[str]:
    return [sys.executable, "-m", "acms", *args]


def spawn(cmd: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Its output, once it exited 0 without a traceback."""
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "Traceback" not in err, (proc.args, proc.returncode, out, err)
    return out, err


class Watch:
    """An ``acms watch --json`` process; its lines are read by threads so that its pipes never fill."""

    def __init__(self, root: Path, debounce_ms: int | None = None) -> None:
        more = ["--debounce-ms", str(debounce_ms)] if debounce_ms else []
        self.proc = spawn(acms("watch", "-C", str(root), "--json", *more))
        self.lines: list[dict[str, object]] = []
        self.stderr: list[str] = []
        self._threads = [threading.Thread(target=self._read_out, daemon=True),
                         threading.Thread(target=self._read_err, daemon=True)]
        for t in self._threads:
            t.start()

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(json.loads(line))

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        self.stderr.extend(self.proc.stderr)

    def watching(self) -> bool:
        """The operating system's watch is in place (an inotify descriptor; elsewhere: after 2 s)."""
        fds = Path(f"/proc/{self.proc.pid}/fd")
        if not fds.parent.parent.is_dir():
            time.sleep(2)
            return True
        try:
            return any(os.readlink(fd) == "anon_inode:inotify" for fd in fds.iterdir())
        except OSError:
            return False

    def wait_watching(self) -> None:
        deadline = time.monotonic() + WAIT
        while not self.watching():
            assert self.proc.poll() is None, self.stderr
            assert time.monotonic() < deadline, "acms watch never watched"
            time.sleep(0.05)
        time.sleep(0.3)  # the watches on the subfolders are added right after the descriptor

    def errors(self) -> list[object]:
        return [line["error"] for line in self.lines if line.get("error")]

    def stop(self) -> int:
        """SIGTERM (what a supervisor sends); the follower stops at its next step and the index is closed."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for t in self._threads:
            t.join(5)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()
        return self.proc.returncode


# -- 1. a refresh racing `acms index` ---------------------------------------------------------------
READER = """
import sys
from acms.api import Index
with Index.open(sys.argv[1], mode="read", wait=60) as idx:
    idx.search("normalize", "keyword", 3)
print("stale:", list(idx.stale))
"""


def edit_round(root: Path, i: int) -> None:
    """Edits of every kind: a rename that relinks an unchanged caller, new and deleted files, lines
    inserted above a definition, a file turned binary."""
    if i == 0:
        edit(root / "pkg" / "util.py", "def normalize(", "def normalise(")
        (root / "pkg" / "new0.py").write_text("from pkg.util import normalise\n\n\ndef n0():\n"
                                              "    return normalise('A')\n")
        (root / "notes.txt").unlink()
        (root / "gen" / "m06.py").write_text(module(6, 0, prefix="g"))
    else:
        edit(root / "pkg" / "util.py", "def normalise(", "def normalize(")
        edit(root / "pkg" / "mod.py", "def make_parser()", "# one\n# two\n# three\ndef make_parser()")
        (root / "docs" / "guide.md").write_bytes(b"\x00\x01binary now\x00" * 10)
        (root / "gen" / "m07.py").unlink()
        (root / "gen" / "x.py").write_text("from gen.m06 import f6\n\n\ndef x():\n    return f6(1)\n")
        (root / "gen" / "m06.py").write_text(module(6, 2))


@pytest.mark.parametrize("order", ["together", "index-first"])
def test_a_refresh_racing_acms_index_loses_nothing(base: Base, tmp_path: Path, order: str) -> None:
    """`acms index` and a reader's refresh (the CLI's, or a Python reader's) start at once after edits:
    they take the writer's lock in turn; then nothing is stale and the graph is a first index's."""
    root = copy(base, tmp_path / "p")
    for i in range(2):
        edit_round(root, i)
        index_cmd = acms("index", str(root), "--json")
        reader = (acms("search", "normalize", "-C", str(root), "--mode", "keyword", "--refresh", "auto")
                  if i % 2 == 0 else [sys.executable, "-c", READER, str(root)])
        first, second = (index_cmd, reader) if order == "index-first" else (reader, index_cmd)
        procs = [spawn(first)]
        if order != "together":
            time.sleep(0.15)  # the first is inside its run (or waiting for the lock) when the second starts
        procs.append(spawn(second))
        outputs = {tuple(proc.args): finished(proc) for proc in procs}
        indexed = json.loads(outputs[tuple(index_cmd)][0])
        # who found the edits: `acms index`, or the refresh before it (the other then had nothing to do)
        print(f"\n{order} round {i}: acms index " + ("found nothing left" if indexed["up_to_date"] else
              f"indexed {indexed['files_indexed']}, removed {indexed['files_removed']}"))
        assert stale(root) == [], (order, i)
        assert state(root, base.root) == fresh(root, tmp_path / f"fresh{i}"), (order, i)


# -- 2. two watchers on one project --------------------------------------------------------------
def test_two_watchers_follow_one_project_and_settle_on_the_final_files(base: Base, tmp_path: Path) -> None:
    """Two `acms watch` processes take the writer's lock in turn while files are edited (renames,
    new and deleted files); both keep running, and once the edits stop the index is the files'."""
    root = copy(base, tmp_path / "p")
    watches = [Watch(root), Watch(root)]
    try:
        for w in watches:
            w.wait_watching()
        for i in range(40):  # about two seconds of edits
            k = (i * 5) % MODULES
            (root / "gen" / f"m{k:02}.py").write_text(module(k, i, prefix="g" if i % 7 == 0 else "f"))
            if i % 6 == 0:
                (root / "gen" / f"new{i}.py").write_text(f"def new{i}():\n    return {i}\n")
            if i % 9 == 8:
                (root / "gen" / f"new{i - 8}.py").unlink(missing_ok=True)
            time.sleep(0.05)
        left = settled(root, time.monotonic() + WAIT)
        assert left == [], f"still stale after {WAIT} s: {left}"
        for w in watches:
            assert w.proc.poll() is None, w.stderr  # both still running
        assert state(root, base.root) == fresh(root, tmp_path / "fresh")
    finally:
        codes = [w.stop() for w in watches]
    for w, code in zip(watches, codes, strict=True):
        assert code == 0 and not w.errors() and "Traceback" not in "".join(w.stderr), (code, w.lines, w.stderr)
    assert sum(len(w.lines) for w in watches) >= 1  # the watchers did the refreshing (a look writes nothing)


# -- 3. a burst of saves ----------------------------------------------------------------------------
SAVES = 1000


def burst(root: Path, saves: int = SAVES, seconds: float = 1.0) -> None:
    """``saves`` writes in about ``seconds`` over the chain of modules: rewrites in place and by
    rename-over (as editors save), renamed functions, new files and deletions."""
    gen = root / "gen"
    made: list[Path] = []
    start = time.monotonic()
    for i in range(1, saves + 1):
        k = (i * 7) % MODULES
        target = gen / f"m{k:02}.py"
        if i % 41 == 0:
            made.append(gen / f"new{i}.py")
            made[-1].write_text(f"from gen.m{k:02} import f{k}\n\n\ndef new{i}():\n    return f{k}({i})\n")
        elif i % 97 == 0 and made:
            made.pop(0).unlink()
        elif i % 151 == 0:
            target.unlink(missing_ok=True)  # a module deleted; a later save may bring it back
        elif i % 2:
            target.write_text(module(k, i, prefix="g" if i % 13 == 0 else "f"))
        else:
            tmp = gen / f".m{k:02}.py.swp"
            tmp.write_text(module(k, i))
            os.replace(tmp, target)
        ahead = start + i * seconds / saves - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)


@pytest.mark.parametrize("debounce_ms", [None, 10])
def test_a_burst_of_a_thousand_saves_is_a_few_refreshes_and_loses_nothing(base: Base, tmp_path: Path,
                                                                         debounce_ms: int | None) -> None:
    """`acms watch --json` through 1,000 saves in about a second: it ends on the final files, having
    refreshed far fewer times than files were saved. With the default quiet time (50 ms) the burst is
    gathered in a few; with 10 ms the refreshes run while the files are being written."""
    root = copy(base, tmp_path / "p")
    watch = Watch(root, debounce_ms)
    try:
        deadline = time.monotonic() + WAIT
        probe = root / "probe.txt"
        while not any("probe.txt" in line.get("paths", []) for line in watch.lines):  # type: ignore[operator]
            assert watch.proc.poll() is None and time.monotonic() < deadline, watch.stderr
            probe.write_text(f"probe {time.monotonic()}\n")
            time.sleep(0.4)
        seen = len(watch.lines)
        t0 = time.monotonic()
        burst(root)
        took = time.monotonic() - t0
        left = settled(root, time.monotonic() + WAIT)
        assert left == [], f"still stale after {WAIT} s: {left}"
        assert state(root, base.root) == fresh(root, tmp_path / "fresh")
        refreshes = watch.lines[seen:]
    finally:
        code = watch.stop()
    assert code == 0 and not watch.errors() and "Traceback" not in "".join(watch.stderr), (watch.lines, watch.stderr)
    print(f"\n{SAVES} saves in {took:.2f} s (debounce {debounce_ms or 'default'}): {len(refreshes)} refreshes")
    assert took < 5.0  # paced to about a second; a loaded machine may lag
    assert 1 <= len(refreshes) <= 25, refreshes


# -- 4. kill -9 during a refresh ---------------------------------------------------------------------
# Injected into a real `python` process: refresh (opened as argv[3] says), kill -9 itself as phase argv[2]
# ends; "landed": once the run has landed, before it leaves the manifest of the files it read.
KILLER = """
import os, signal, sys
from acms.api import Index
from acms.service.indexing import IndexRun

root, phase, mode = sys.argv[1:4]

class KillAt:
    def start(self, name, total=None): pass
    def update(self, done, total=None): pass
    def finish(self, name):
        if name == phase:
            os.kill(os.getpid(), signal.SIGKILL)

if phase == "landed":
    IndexRun._leave_manifest = lambda self: os.kill(os.getpid(), signal.SIGKILL)
with Index.open(root, mode=mode, wait=30) as idx:
    report = idx.refresh(progress=KillAt())
print("finished", report)
"""
KILL_AT = ("listing", "reading", "parsing", "relinking", "linking", "store", "tiers", "caches", "vectors", "landed")


def test_kill_9_at_any_phase_of_a_refresh_leaves_the_old_or_the_new_index(base: Base, tmp_path: Path) -> None:
    """A refresh killed as a phase ends (its session a reader's, a writer's or a server's): a reader
    sees the old graph (the new one once the run landed), the next reader's refresh rolls back and
    completes, and the graph is a first index's of the files."""
    roots = {phase: copy(base, tmp_path / phase) for phase in KILL_AT}
    for root in roots.values():  # a rename (its caller relinks), a new, a changed and a deleted file
        edit(root / "pkg" / "util.py", "def normalize(", "def normalise(")
        (root / "pkg" / "extra.py").write_text("def extra():\n    return 'extra'\n")
        (root / "gen" / "m03.py").write_text(module(3, 1))
        (root / "notes.txt").unlink()
    new = fresh(roots[KILL_AT[0]], tmp_path / "fresh")

    def kill_then_recover(phase: str) -> None:
        root = roots[phase]
        mode = ("read", "write", "shared")[KILL_AT.index(phase) % 3]
        proc = subprocess.run([sys.executable, "-c", KILLER, str(root), phase, mode], check=False,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == -signal.SIGKILL, (phase, proc.stdout, proc.stderr)
        landed = phase == "landed"
        assert (root / ".acms" / "run-pending").exists() != landed, phase
        assert state(root, base.root) == (new if landed else base.state), f"a reader after kill -9 at {phase}"
        with Index.open(root, mode="read", refresh="off", wait=WAIT) as idx:  # its search: the same state
            texts = " ".join(h.text for h in idx.search("normalize normalise", "keyword", 5).hits)
        assert ("def normalise(" in texts, "def normalize(" in texts) == (landed, not landed), (phase, texts)
        with Index.open(root, mode="read", wait=WAIT) as idx:  # a reader: it rolls back and refreshes first
            idx.search("normalise", "keyword", 3)
            assert idx.stale == (), phase
        assert not (root / ".acms" / "run-pending").exists(), phase
        assert stale(root) == [], phase
        assert state(root, base.root) == new, f"after the refresh that followed kill -9 at {phase}"

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(kill_then_recover, KILL_AT))


# -- 5. odd files between the look and the read ------------------------------------------------------
class AtStart:
    """A progress hook that runs ``act`` as phase ``phase`` starts (after the look, before that phase's work)."""

    def __init__(self, phase: str, act: Callable[[], None]) -> None:
        self.phase, self.act = phase, act

    def start(self, phase: str, total: int | None = None) -> None:
        if phase == self.phase:
            self.act()

    def update(self, done: int, total: int | None = None) -> None:
        pass

    def finish(self, phase: str) -> None:
        pass


MAX_BYTES = 8192  # above every file of the project
ODD = [f"gen/o{k}.py" for k in (1, 2, 3, 4)]
FILES = "SELECT ?p WHERE { GRAPH ?g { ?f a uko:File ; uko:path ?p } }"


def turn_odd(root: Path) -> None:
    """Deleted, binary, grown past max_file_bytes, a symlink loop."""
    o1, o2, o3, o4 = (root / p for p in ODD)
    o1.unlink()
    o2.write_bytes(b"\x00\x01\x02binary\x00" * 20)
    o3.write_text(o3.read_text() + "#" * (MAX_BYTES + 1) + "\n")
    o4.unlink()
    os.symlink(o4.name, o4)  # a link to itself: ELOOP


@pytest.mark.parametrize("phase", [
    "reading",  # edited files, read by the run after the look
    "relinking",  # unchanged files that call a renamed function, read again to be relinked
])
def test_files_that_turn_odd_between_the_look_and_the_read_are_skipped_and_gone(base: Base, tmp_path: Path,
                                                                                 phase: str) -> None:
    """Four files the run is about to read (edited ones; or unchanged ones that call a renamed function,
    read again to be relinked) turn odd just before: deleted, binary, grown past max_file_bytes, a
    symlink loop. The refresh completes, names each with its reason and leaves none of them in the
    graph, which is then a first index's of the files."""
    root = copy(base, tmp_path / "p")
    for k, path in enumerate(ODD, 1):
        (root / path).write_text(f"from gen.m00 import f0\n\n\ndef o{k}():\n    return f0({k})\n")
    with Index.open(root, max_file_bytes=MAX_BYTES) as idx:
        idx.refresh()
        if phase == "reading":
            for path in ODD:
                (root / path).write_text((root / path).read_text() + "# edited\n")
        else:
            (root / "gen" / "m00.py").write_text(module(0, 0, prefix="g"))
        report = idx.refresh(progress=AtStart(phase, lambda: turn_odd(root)))
        assert report is not None
        if phase == "relinking":
            assert report.files_relinked >= 1  # m01 calls f0 too
        assert report.skipped.get("vanished") == ODD[:1], report.skipped
        assert ODD[1] in report.skipped.get("binary", []), report.skipped
        assert report.skipped.get("too-large") == ODD[2:3], report.skipped
        assert report.skipped.get("unreadable") == ODD[3:], report.skipped
        with idx.reading() as store:  # the graph as this refresh left it (a read would refresh first)
            files = {str(r["p"].value) for r in store.select(FILES)}
        assert not files & set(ODD) and "gen/m05.py" in files
        assert idx.look().paths == [] and idx.refresh() is None
        live = current(idx)
    assert live == fresh(root, tmp_path / "fresh", max_file_bytes=MAX_BYTES)


def test_a_file_saved_while_it_is_relinked_loses_no_link(base: Base, tmp_path: Path) -> None:
    """m01's function is renamed, so m02 (which calls it) is re-read to be relinked; m02 is saved just
    then with a new function that an unchanged file already calls. A first index links that call."""
    root = copy(base, tmp_path / "p")
    gen = root / "gen"
    (gen / "caller.py").write_text("from gen.m02 import later\n\n\ndef use():\n    return later()\n")
    with Index.open(root) as idx:
        idx.refresh()
        (gen / "m01.py").write_text(module(1, 1, prefix="g"))
        saved = module(2, 0) + "\n\ndef later() -> int:\n    return 2\n"
        report = idx.refresh(progress=AtStart("relinking", lambda: (gen / "m02.py").write_text(saved)))
        assert report is not None and report.files_relinked >= 1
        idx.refresh()  # whatever a later refresh finds
        assert idx.look().paths == []
        live = current(idx)
    assert live == fresh(root, tmp_path / "fresh")


# -- the follower's catch-up ----------------------------------------------------------------------------
def test_a_save_during_the_followers_catch_up_is_refreshed(base: Base, tmp_path: Path) -> None:
    """A save made right after the follower's first look (what changed while nothing watched) is still
    refreshed: the operating system's watch is in place before that look."""
    root = copy(base, tmp_path / "p")
    with Index.open(root, mode="shared") as idx:
        calls: list[IndexReport | None] = []

        def refresh(**how: Any) -> IndexReport | None:
            report = idx.refresh(**how)
            calls.append(report)
            if len(calls) == 1:  # saved just after the catch-up looked
                (root / "gen" / "m00.py").write_text(module(0, 9))
            return report

        follower = Follower(root, refresh, debounce_ms=50, ignore=[idx.layout.root]).start()
        try:
            deadline = time.monotonic() + WAIT
            while (len(calls) < 2 or idx.look().paths) and time.monotonic() < deadline:
                time.sleep(0.1)
        finally:
            follower.stop()
        assert len(calls) >= 2 and idx.look().paths == []
