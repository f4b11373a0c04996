"""Index and assembly latency: the embedded store next to an Oxigraph server on 127.0.0.1, same project, one run.

Copies this repository into a temp directory, starts ``oxigraph serve`` on a free port, and for each
store: a first index, a re-index after one changed file, a re-index with nothing changed, then
``search`` and ``assemble`` (4,000 tokens) for a few tasks, each repeated, medians reported. The ratio
column is remote over embedded. The remote store talks HTTP to a server on this machine: what it adds
is the protocols' cost (serialising, parsing, one round trip per query), not a network's.

    python bench/remote.py [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import requests

from acms.api import Index
from installed import as_installed

TASKS = ("how is the token budget enforced", "where are SPARQL parameters bound", "secret detection at ingest")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server(location: Path) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("oxigraph") or str(Path(sys.executable).with_name("oxigraph"))
    port = _free_port()
    proc = subprocess.Popen([binary, "serve", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            if requests.get(f"{url}/query", params={"query": "ASK {}"}, timeout=1).ok:
                return proc, url
        except requests.ConnectionError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("oxigraph serve did not start (pip install -e '.[test]' installs it)")


def _timed(call: Callable[[], object]) -> float:
    t = time.perf_counter()
    call()
    return 1000 * (time.perf_counter() - t)


def measure(root: Path, store: str | Path, repeat: int) -> dict[str, float]:
    out: dict[str, float] = {}
    changed = root / "src" / "acms" / "tokens.py"
    original = changed.read_text()
    with Index.open(root, store=store) as idx:
        out["first index"] = _timed(idx.index)
        changed.write_text(original + "\n\ndef bench_marker() -> int:\n    return 1\n")
        out["re-index, 1 file changed"] = _timed(idx.index)
        out["re-index, nothing changed"] = _timed(idx.index)
        out["triples"] = idx.store.count()
    changed.write_text(original)
    with Index.open(root, store=store, mode="read") as idx:
        out["first search after open (caches on disk)"] = _timed(lambda: idx.search(TASKS[0], k=10))
        out["search, median"] = statistics.median(_timed(lambda t=t: idx.search(t, k=10))
                                                  for t in TASKS for _ in range(repeat))
        out["assemble 4k, median"] = statistics.median(_timed(lambda t=t: idx.assemble(t, budget=4000))
                                                       for t in TASKS for _ in range(repeat))
    return out


def main() -> None:
    as_installed()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="repetitions of each search/assemble task")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="acms-remote-bench-"))
    repo = Path(__file__).resolve().parents[1]
    ignore = shutil.ignore_patterns(".venv", ".acms", ".git", "out", "__pycache__")
    shutil.copytree(repo, work / "embedded", ignore=ignore)
    shutil.copytree(repo, work / "remote", ignore=ignore)  # the same files; separate caches and run stamps
    proc, url = _server(work / "oxigraph")
    try:
        embedded = measure(work / "embedded", work / "embedded-store", args.repeat)
        remote = measure(work / "remote", url, args.repeat)
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    print(f"acms on an Oxigraph server (127.0.0.1) vs the embedded store — this repository, "
          f"{int(embedded['triples']):,} triples (remote {int(remote['triples']):,}), {args.repeat}x{len(TASKS)} "
          "queries per median")
    print(f"{'operation':<40} | {'embedded ms':>11} | {'remote ms':>9} | remote / embedded")
    print(f"{'-' * 40}-|-{'-' * 11}-|-{'-' * 9}-|-{'-' * 17}")
    for key in embedded:
        if key == "triples":
            continue
        print(f"{key:<40} | {embedded[key]:>11.0f} | {remote[key]:>9.0f} | {remote[key] / embedded[key]:.2f}x")


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "remote")  # --write-docs: this run's tables onto docs/benchmarks.md
