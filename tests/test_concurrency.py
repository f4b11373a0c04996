"""Many readers, one writer, with real processes: the CLI beside `acms serve` and beside each other."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from acms.store.lock import lock_for
from acms.store.oxigraph import OxigraphStore

ENV = {**os.environ, "ACMS_RECORD_USE": "true"}


def acms(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "acms", *args], capture_output=True, text=True, env=ENV,
                          timeout=120)


def _serve(root: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "acms", "serve", "-C", str(root), "--port", "0"],
                            stderr=subprocess.PIPE, text=True, env=ENV)
    line = proc.stderr.readline()  # type: ignore[union-attr]
    assert line.startswith("acms: serving http://127.0.0.1:"), line
    base = line.split()[2]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/health", timeout=2) as r:
                if r.status == 200:
                    return proc, base
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("server did not answer")


def _health(base: str) -> dict[str, object]:
    with urllib.request.urlopen(base + "/health", timeout=30) as r:
        assert r.status == 200
        return json.loads(r.read())  # type: ignore[no-any-return]


def test_readers_and_a_writer_beside_a_running_server(indexed_sample: Path) -> None:
    """Four assemblies, a search, stats and an export run at once while `acms serve` holds the project;
    a re-index started meanwhile succeeds, and the server answers before, during and after it."""
    proc, base = _serve(indexed_sample)
    try:
        before = _health(base)["quads"]
        root = str(indexed_sample)
        commands = [["assemble", f"parse header lines {i}", "-C", root, "--budget", "800"] for i in range(4)]
        commands += [["search", "normalize", "-C", root], ["stats", "-C", root, "--json"],
                     ["export", "-C", root, "--format", "nquads"]]
        (indexed_sample / "pkg" / "added.py").write_text("def added_function():\n    return 42\n")
        commands.append(["index", root])
        results: list[subprocess.CompletedProcess[str]] = [None] * len(commands)  # type: ignore[list-item]

        def run(i: int) -> None:
            results[i] = acms(*commands[i])

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(commands))]
        for t in threads:
            t.start()
        during = _health(base)
        for t in threads:
            t.join()
        for cmd, out in zip(commands, results, strict=True):
            assert out.returncode == 0, f"{cmd}: {out.stderr}"
            assert "Traceback" not in out.stderr
        assert during["status"] == "ok"
        after = _health(base)["quads"]
        assert after != before  # the server reopened the index the writer changed
        query = "SELECT ?q WHERE { GRAPH ?g { ?e <https://w3id.org/acms/uko#qualifiedName> ?q } FILTER(STRENDS(?q, 'added_function')) }"
        with urllib.request.urlopen(f"{base}/sparql?query={urllib.parse.quote(query)}", timeout=30) as r:
            assert "pkg.added.added_function" in r.read().decode()
    finally:
        proc.terminate()
        proc.wait(20)
        proc.stderr.close()  # type: ignore[union-attr]


def test_a_reader_waits_for_the_writer_then_runs(indexed_sample: Path) -> None:
    """While a writer holds the index, a reader waits; past --wait it exits 4 naming the writer."""
    lock = lock_for(indexed_sample / ".acms")
    with lock.exclusive(command="acms index (held by the test)"):
        out = acms("stats", "-C", str(indexed_sample), "--wait", "0.3")
    assert out.returncode == 4
    assert "being written by another acms process" in out.stderr and "held by the test" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1

    with lock.exclusive(command="short writer"):
        proc = subprocess.Popen([sys.executable, "-m", "acms", "stats", "-C", str(indexed_sample), "--json",
                                 "--wait", "30"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        assert proc.poll() is None  # still waiting for the writer
    out_text, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert json.loads(out_text)["store_bytes"] > 0


def test_readers_run_side_by_side_and_a_writer_waits_for_them(indexed_sample: Path) -> None:
    """Two read-only handles coexist; the writer gets in only when both are closed."""
    graph = indexed_sample / ".acms" / "graph"
    a = OxigraphStore(graph, read_only=True, wait=1)
    b = OxigraphStore(graph, read_only=True, wait=1)
    try:
        out = acms("tiers", "rebalance", "-C", str(indexed_sample), "--wait", "0.3")
        assert out.returncode == 4 and "in use by another acms process" in out.stderr
        assert a.select("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } } LIMIT 1")
    finally:
        a.close()
        b.close()
    out = acms("tiers", "rebalance", "-C", str(indexed_sample), "--wait", "5")
    assert out.returncode == 0, out.stderr


def test_assembly_usage_is_logged_by_readers_and_folded_by_the_next_writer(indexed_sample: Path) -> None:
    """A read-only assembly records its use without the write lock; the next writer applies it."""
    out = acms("assemble", "split a header line into name and value", "-C", str(indexed_sample), "--budget", "600")
    assert out.returncode == 0, out.stderr
    log = indexed_sample / ".acms" / "usage.log"
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert logged and logged[0]["e"]
    store = OxigraphStore(indexed_sample / ".acms" / "graph", wait=5)  # a writer: folds the log
    try:
        rows = store.select("SELECT ?e ?n WHERE { GRAPH <https://w3id.org/acms/graph/meta> { ?e <https://w3id.org/acms/uko#useCount> ?n } }")
    finally:
        store.close()
    assert not log.exists()
    used = {r["e"].value for r in rows}
    assert set(logged[0]["e"]) <= used


FILES = "SELECT ?p WHERE { GRAPH ?g { ?f a <https://w3id.org/acms/uko#File> ; <https://w3id.org/acms/uko#path> ?p } }"


def _paths(root: Path) -> set[str]:
    store = OxigraphStore(root / ".acms" / "graph", read_only=True, wait=5)
    try:
        return {r["p"].value for r in store.select(FILES)}
    finally:
        store.close()


@pytest.mark.parametrize("signal_after", [0.2, 0.6, 1.2, 2.0])
def test_a_killed_writer_leaves_the_old_or_the_new_index_and_no_lock(indexed_sample: Path, signal_after: float) -> None:
    """kill -9 of `acms index` at several points: the index is the old one or the new one, whole, and
    its lock died with the process, so the next command runs at once."""
    old = _paths(indexed_sample)
    (indexed_sample / "pkg" / "more.py").write_text("def more():\n    return 1\n" * 50)
    proc = subprocess.Popen([sys.executable, "-m", "acms", "index", str(indexed_sample)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(signal_after)
    proc.kill()
    proc.wait()
    assert _paths(indexed_sample) in (old, old | {"pkg/more.py"})
    out = acms("stats", "-C", str(indexed_sample), "--json", "--wait", "2")
    assert out.returncode == 0, out.stderr
    out = acms("index", str(indexed_sample), "--wait", "2")
    assert out.returncode == 0, out.stderr
    assert _paths(indexed_sample) == old | {"pkg/more.py"}
