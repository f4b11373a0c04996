"""A cache is built in a scratch directory beside it and swapped in; what a killed builder left is
removed by the next builder or index run, and a live builder's directory never is, whichever process
sweeps (``acms.index.scratch``)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from acms.api import Index
from acms.index.scratch import Scratch, atomic_directory, sweep
from acms.index.vectors import MatrixWriter, VectorMatrix
from acms.removal import remove_aside, removals_settled

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

# A builder in another process: it starts the vector cache's writer, says so, then waits to be killed.
_BUILDER = textwrap.dedent("""
    import sys, numpy as np
    from pathlib import Path
    from acms.index.vectors import MatrixWriter
    writer = MatrixWriter(Path(sys.argv[1]) / "vectors", 4, "m")
    writer.add(["a", "b"], np.ones((2, 4), dtype=np.float32))
    print(writer._tmp, flush=True)
    sys.stdin.read()
""")


def _builder(cache: Path) -> tuple[subprocess.Popen[str], Path]:
    proc = subprocess.Popen([sys.executable, "-c", _BUILDER, str(cache)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line, "the builder did not start"
    return proc, Path(line)


def _killed(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            pipe.close()


def test_a_built_cache_is_swapped_in_and_nothing_is_left_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "keyword"
    with atomic_directory(target) as tmp:
        (tmp / "a").write_text("one")
    with atomic_directory(target) as tmp:  # over the previous one: two renames
        (tmp / "a").write_text("two")
    assert (target / "a").read_text() == "two"
    assert removals_settled(timeout=30)  # the previous one, moved aside, goes in the background
    assert [p.name for p in tmp_path.iterdir()] == ["keyword"]


def test_a_failed_build_leaves_the_cache_as_it_was_and_nothing_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "keyword"
    with atomic_directory(target) as tmp:
        (tmp / "a").write_text("one")
    with pytest.raises(RuntimeError), atomic_directory(target) as tmp:
        (tmp / "a").write_text("half")
        raise RuntimeError("the build failed")
    assert (target / "a").read_text() == "one"
    assert [p.name for p in tmp_path.iterdir()] == ["keyword"]
    writer = MatrixWriter(tmp_path / "vectors", 4, "m")
    writer.add(["a"], np.ones((1, 4), dtype=np.float32))
    writer.discard()
    assert [p.name for p in tmp_path.iterdir()] == ["keyword"]


def test_a_live_builders_directory_survives_a_sweep_and_a_killed_ones_does_not(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    proc, scratch = _builder(cache)
    try:
        assert scratch.is_dir() and scratch.parent == cache
        assert sweep(cache) == []  # another process at work: kept
        assert scratch.is_dir()
        mine = Scratch(cache, "keyword")  # this process builds beside it (and sweeps first): still kept
        assert scratch.is_dir() and mine.path.is_dir()
        assert sweep(cache) == []  # this process's own live scratch is kept too
        _killed(proc)
        assert sweep(cache) == [scratch]
        assert sorted(p.name for p in cache.iterdir()) == sorted([mine.path.name, mine.path.name + ".lock"])
        mine.discard()
        assert list(cache.iterdir()) == []
    finally:
        if proc.poll() is None:
            _killed(proc)


def test_what_a_killed_builder_left_goes_with_the_next_build_beside_it(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    proc, scratch = _builder(cache)
    _killed(proc)
    assert scratch.is_dir()  # the kill left it
    VectorMatrix(["x"], np.ones((1, 4), dtype=np.float32), "k", "m").save(cache / "vectors")
    assert [p.name for p in cache.iterdir()] == ["vectors"]


def _indexed_with_a_dead_builder(tmp_path: Path) -> tuple[Path, Path, list[str], Path]:
    """The sample project indexed, and a builder killed beside its caches: (root, cache, the cache's
    names before, the killed builder's directory)."""
    import shutil

    root = tmp_path / "project"
    shutil.copytree(FIXTURES / "sample_project", root, ignore=shutil.ignore_patterns(".acms"))
    with Index.open(root) as index:
        index.index()
    cache = root / ".acms" / "cache"
    before = sorted(p.name for p in cache.iterdir())
    proc, scratch = _builder(cache)
    _killed(proc)
    return root, cache, before, scratch


def test_an_index_run_removes_what_a_killed_builder_left_in_its_cache(tmp_path: Path) -> None:
    root, cache, before, scratch = _indexed_with_a_dead_builder(tmp_path)
    assert scratch.is_dir()
    with Index.open(root) as index:
        report = index.index()  # nothing changed: no cache is rebuilt, the run still sweeps
    assert report.files_indexed == 0
    assert sorted(p.name for p in cache.iterdir()) == before


def test_a_reader_that_builds_nothing_clears_what_a_killed_builder_left(tmp_path: Path) -> None:
    """A reader killed while rebuilding a cache that another reader then finished: the next command only
    loads the caches, and still removes the dead builder's directory."""
    root, cache, before, scratch = _indexed_with_a_dead_builder(tmp_path)
    with Index.open(root, mode="read") as index:
        assert index.search("parse header", k=1).hits
    assert not scratch.exists()
    assert sorted(p.name for p in cache.iterdir()) == before


def test_a_sweep_while_a_lock_file_is_made_leaves_the_builder_owning_its_directory(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Four searches rebuilding caches at once: one's sweep found another's lock file made but not yet
    locked, removed it, and the directory built beside it was left unowned when its builder was killed."""
    import subprocess
    import tempfile

    from acms.index import scratch as scratch_module

    cache = tmp_path / "cache"
    cache.mkdir()
    real, calls = tempfile.mkstemp, []

    def made_then_swept(*args: object, **kwargs: object) -> tuple[int, str]:
        got = real(*args, **kwargs)  # type: ignore[call-overload]
        if not calls:
            calls.append(got)
            sweep(cache)  # another process's sweep, in the window before this file is locked
        return got

    monkeypatch.setattr(scratch_module.tempfile, "mkstemp", made_then_swept)
    built = Scratch(cache, "ranking")
    monkeypatch.undo()
    lock = built.path.with_name(built.path.name + ".lock")
    assert built.path.is_dir() and lock.is_file()
    other = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                            "from acms.index.scratch import sweep; print(sweep(Path(sys.argv[1])))", str(cache)],
                           capture_output=True, text=True, timeout=60)
    assert other.stdout.strip() == "[]" and built.path.is_dir()  # a live builder's: kept
    built.discard()
    assert list(cache.iterdir()) == []



def test_what_an_older_acms_left_goes_once_it_is_an_hour_old(tmp_path: Path) -> None:
    """acms before 2026-11-28 built caches without a lock beside them; a kill left these names."""
    import os
    import time

    from acms.index.scratch import LEGACY_AGE

    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "keyword").mkdir()  # the caches themselves are never touched
    (cache / "vectors").mkdir()
    legacy = [cache / ".vectors-k2j4", cache / "vectors.old", cache / ".keyword.old-0a1b2c3d",
              cache / ".ranking.tmp-x9y8"]
    for path in legacy:
        path.mkdir()
        (path / "rows.npy").write_bytes(b"\0" * 64)
    mine = Scratch(cache, "keyword")  # this acms's scratch directory: its lock is beside it
    assert sweep(cache) == []  # all of them changed just now: an older acms may be at work in them
    stale = time.time() - LEGACY_AGE - 60
    for path in [*legacy, mine.path, cache / "keyword", cache / "vectors"]:
        os.utime(path, (stale, stale))
    assert sorted(sweep(cache)) == sorted(legacy)
    assert sorted(p.name for p in cache.iterdir()) == sorted(["keyword", "vectors", mine.path.name,
                                                              mine.path.name + ".lock"])
    mine.discard()
    assert sorted(p.name for p in cache.iterdir()) == ["keyword", "vectors"]


def test_a_directory_removed_aside_is_gone_before_its_then_runs_and_the_process_waits_for_it(tmp_path: Path) -> None:
    """What a swap moved aside is removed in a thread; ``then`` (the build lock's release) follows the
    removal, and a process that ends meanwhile finishes it first (the thread is not a daemon)."""
    aside = tmp_path / "keyword.old"
    for i in range(50):
        (aside / str(i % 5)).mkdir(parents=True, exist_ok=True)
        (aside / str(i % 5) / f"{i}.npy").write_bytes(b"x" * 100)
    seen: list[bool] = []
    remove_aside(aside, then=lambda: seen.append(aside.exists()))
    assert removals_settled(timeout=30)
    assert seen == [False] and not aside.exists()
    script = textwrap.dedent(f"""
        from pathlib import Path
        from acms.removal import remove_aside
        remove_aside(Path({str(tmp_path / 'other')!r}))
    """)
    other = tmp_path / "other"
    for i in range(200):
        (other / f"{i}.npy").parent.mkdir(exist_ok=True)
        (other / f"{i}.npy").write_bytes(b"x")
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    assert not other.exists()
