"""SPARQL endpoint and render API under 8 concurrent clients on 127.0.0.1, next to the same work in-process.

Indexes this repository into a temp store, starts the real server (uvicorn, in a thread of this
process), and runs each scenario for a bounded time with 8 client threads: over HTTP (urllib, one
connection per request), then the same call in-process with the same 8 threads (the SPARQL path the
server runs, ``run_query``: evaluation, row checks, serialization; and ``Index.render`` for render). The
ratio column is HTTP over in-process for throughput and p95.

    python bench/serve.py [--seconds S] [--clients N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import statistics
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import uvicorn
from stdlib_index import pct

from acms.api import Index
from acms.assembly.protocol import parse_request
from acms.config import Settings
from acms.server.app import create_app
from acms.server.sparql_protocol import Kind, Limits, Operation, run_query

SELECT = ("SELECT ?caller ?callee WHERE { GRAPH ?g { ?a uko:calls ?b . ?a uko:qualifiedName ?caller . "
          "?b uko:qualifiedName ?callee } } ORDER BY ?caller ?callee LIMIT 200")
REQUEST = {"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "intent": "how is the token budget enforced",
           "budgets": {"tokens_max": 4000, "time_ms": 5000}, "request_id": "bench"}


def run_for(seconds: float, clients: int, call: Callable[[], object]) -> list[float]:
    """Latencies (ms) of ``call`` repeated by ``clients`` threads until ``seconds`` have passed."""
    stop = time.perf_counter() + seconds
    lat: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        while time.perf_counter() < stop:
            t = time.perf_counter()
            call()
            with lock:
                lat.append(1000 * (time.perf_counter() - t))

    with ThreadPoolExecutor(clients) as pool:
        for f in [pool.submit(worker) for _ in range(clients)]:
            f.result()
    return lat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="run time per scenario")
    parser.add_argument("--clients", type=int, default=8, help="concurrent client threads")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="acms-serve-bench-"))
    repo = Path(__file__).resolve().parents[1]
    shutil.copytree(repo, work / "repo", ignore=shutil.ignore_patterns(".venv", ".acms", ".git", "out", "__pycache__"))
    t = time.perf_counter()
    with Index(work / "repo", Settings(), work / "store") as writer:
        writer.index()
    index_s = time.perf_counter() - t
    index = Index(work / "repo", Settings(), work / "store", mode="shared")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(index), host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    query_url = base + "/sparql?" + urllib.parse.urlencode({"query": SELECT})
    body = json.dumps(REQUEST).encode()
    request = parse_request(REQUEST)
    op, limits = Operation(Kind.QUERY, SELECT), Limits()

    def http_select() -> None:
        with urllib.request.urlopen(query_url, timeout=30) as r:
            r.read()

    def http_render() -> None:
        req = urllib.request.Request(base + "/v0/render", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            r.read()

    def local_select() -> None:
        with index.reading() as store:
            run_query(store, op, "", limits, time.monotonic() + limits.timeout_s)

    def local_render() -> None:
        index.render(request, output="json")

    rows = []
    with urllib.request.urlopen(query_url) as r:
        n_rows = len(json.loads(r.read())["results"]["bindings"])
    for name, http, local in ((f"SPARQL SELECT ({n_rows} rows)", http_select, local_select),
                              ("render 4k tokens", http_render, local_render)):
        measured = []
        for call in (http, local):
            call()  # warm the caches
            lat = run_for(args.seconds, args.clients, call)
            measured.append((len(lat) / args.seconds, statistics.median(lat), pct(lat, 0.95)))
        (h_rps, h50, h95), (l_rps, l50, l95) = measured
        rows.append((f"{name}, HTTP", h_rps, h50, h95, f"{h_rps / l_rps:.2f}x req/s, {h95 / l95:.2f}x p95"))
        rows.append((f"{name}, in-process", l_rps, l50, l95, "baseline"))
    server.should_exit = True
    thread.join(10)
    index.close()
    shutil.rmtree(work, ignore_errors=True)
    print(f"acms serve benchmark — this repository (indexed in {index_s:.1f} s), {args.clients} client threads, "
          f"{args.seconds:g} s per row, 127.0.0.1")
    print(f"{'scenario':<36} | {'req/s':>7} | {'p50 ms':>7} | {'p95 ms':>7} | HTTP / in-process")
    print(f"{'-' * 36}-|-{'-' * 7}-|-{'-' * 7}-|-{'-' * 7}-|-{'-' * 24}")
    for name, rps, p50, p95, ratio in rows:
        print(f"{name:<36} | {rps:>7.1f} | {p50:>7.1f} | {p95:>7.1f} | {ratio}")


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "serve")  # --write-docs: this run's tables onto docs/benchmarks.md
