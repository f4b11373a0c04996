"""SPARQL endpoint and render API under 8 concurrent clients on 127.0.0.1, next to in-process calls.

Indexes this repository into a temp store, starts the real server (uvicorn), and for each scenario runs
8 client threads for a bounded time, printing throughput and p50/p95 latency; the same work called
in-process (one thread) in the same run is the baseline.

    python bench/serve.py [--seconds S]
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import uvicorn
from stdlib_index import pct

from acms.assembly.assemble import assemble
from acms.assembly.protocol import parse_request
from acms.config import Settings
from acms.ingest.pipeline import index_project
from acms.retrieval.search import Searcher
from acms.server.app import ServerConfig, create_app
from acms.store.layout import IndexLayout
from acms.store.oxigraph import PREFIX_HEADER, OxigraphStore
from acms.strategies.registry import StrategyRegistry

SELECT = ("SELECT ?caller ?callee WHERE { GRAPH ?g { ?a uko:calls ?b . ?a uko:qualifiedName ?caller . "
          "?b uko:qualifiedName ?callee } } ORDER BY ?caller LIMIT 200")
REQUEST = {"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "intent": "how is the token budget enforced",
           "budgets": {"tokens_max": 4000, "time_ms": 5000}, "request_id": "bench"}


def run_for(seconds: float, clients: int, call) -> list[float]:
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
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="acms-serve-bench-"))
    repo = Path(__file__).resolve().parents[1]
    shutil.copytree(repo, work / "repo", ignore=shutil.ignore_patterns(".venv", ".acms", ".git", "out"))
    layout = IndexLayout(work / "store")
    store = OxigraphStore(layout.graph)
    index_project(work / "repo", store, Settings(), layout=layout)
    searcher, registry = Searcher(store, layout, Settings()), StrategyRegistry.default()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(searcher, registry, ServerConfig()), host="127.0.0.1",
                                           port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    while not server.started:
        time.sleep(0.05)
    query_url = base + "/sparql?" + urllib.parse.urlencode({"query": SELECT})
    body = json.dumps(REQUEST).encode()
    request = parse_request(REQUEST)

    def http_select() -> None:
        urllib.request.urlopen(query_url, timeout=30).read()

    def http_render() -> None:
        req = urllib.request.Request(base + "/v0/render", data=body, headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=30).read()

    def local_select() -> None:
        store.raw.query(PREFIX_HEADER + SELECT).serialize(format=__import__("pyoxigraph").QueryResultsFormat.JSON)

    def local_render() -> None:
        assemble(request, searcher, registry, output="json")

    rows = []
    for name, call, clients in (("SPARQL SELECT, HTTP", http_select, 8), ("SPARQL SELECT, in-process", local_select, 1),
                                ("render 4k, HTTP", http_render, 8), ("render 4k, in-process", local_render, 1)):
        call()  # warm
        lat = run_for(args.seconds, clients, call)
        rows.append((name, clients, len(lat) / args.seconds, statistics.median(lat), pct(lat, 0.95)))
    server.should_exit = True
    thread.join(10)
    store.close()
    shutil.rmtree(work, ignore_errors=True)
    print(f"acms serve benchmark — this repository, {args.seconds:g} s per scenario, 127.0.0.1")
    print(f"{'scenario':<28} | clients | {'req/s':>7} | {'p50 ms':>7} | {'p95 ms':>7}")
    print(f"{'-' * 28}-|---------|-{'-' * 7}-|-{'-' * 7}-|-{'-' * 7}")
    for name, clients, rps, p50, p95 in rows:
        print(f"{name:<28} | {clients:>7} | {rps:>7.1f} | {p50:>7.1f} | {p95:>7.1f}")


if __name__ == "__main__":
    main()
