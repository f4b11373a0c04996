"""``acms mcp`` over stdio, driven by the official MCP client, next to the CLI doing the same work.

Copies this repository into a temp folder and indexes it, starts ``acms mcp`` as a subprocess (the
SDK's ``Client`` over stdio, as an agent would), and times: the start (process up, initialize,
tools listed), the first ``assemble`` and ``--calls`` warm ones (4000 tokens, different tasks), and a
warm ``search``. The baseline is ``acms assemble`` run as a command for the same tasks, start-up
included, measured in the same run.

    python bench/mcp_stdio.py [--calls N] [--budget TOKENS]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from installed import as_installed

TASKS = [
    "how does acms keep the rendered context inside the token budget",
    "where are secrets removed before indexing",
    "how does the reader writer lock let acms index run beside acms serve",
    "how are saved SPARQL queries bound with parameters",
    "what happens when a batch fails SHACL validation",
    "how does the arce strategy rank files",
]
BIN = Path(sys.executable).parent


def table(rows: list[tuple[str, str]]) -> None:
    width = max(len(k) for k, _ in rows)
    print(f"{'metric'.ljust(width)} | value")
    print(f"{'-' * width}-|-{'-' * 16}")
    for k, v in rows:
        print(f"{k.ljust(width)} | {v}")


async def serve_and_time(project: Path, calls: int, budget: int) -> dict[str, float | list[float]]:
    out: dict[str, float | list[float]] = {}
    t = time.perf_counter()
    params = StdioServerParameters(command=str(BIN / "acms"), args=["mcp"], cwd=str(project))
    async with Client(params) as client:
        await client.list_tools()
        out["start"] = time.perf_counter() - t
        warm: list[float] = []
        for i in range(calls + 1):
            t = time.perf_counter()
            result = await client.call_tool("assemble", {"task": TASKS[i % len(TASKS)], "budget": budget})
            elapsed = time.perf_counter() - t
            assert not result.is_error, result.content
            if i == 0:
                out["first"] = elapsed
            else:
                warm.append(elapsed)
        out["warm"] = warm
        t = time.perf_counter()
        await client.call_tool("search", {"query": "token budget", "k": 10})
        out["search"] = time.perf_counter() - t
    return out


def main() -> None:
    as_installed()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3, help="warm assemble calls to average")
    parser.add_argument("--budget", type=int, default=4000, help="token budget per call")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="acms-mcp-bench-"))
    try:
        repo = Path(__file__).resolve().parents[1]
        project = work / "repo"
        shutil.copytree(repo, project, ignore=shutil.ignore_patterns(".venv", ".acms", ".git", "out", "__pycache__"))
        t = time.perf_counter()
        subprocess.run([str(BIN / "acms"), "index", str(project)], check=True, capture_output=True)
        index_s = time.perf_counter() - t
        timed = anyio.run(serve_and_time, project, args.calls, args.budget)
        cli: list[float] = []
        for i in range(1, args.calls + 1):
            t = time.perf_counter()
            subprocess.run([str(BIN / "acms"), "assemble", TASKS[i % len(TASKS)], "--budget", str(args.budget),
                            "-C", str(project)], check=True, capture_output=True)
            cli.append(time.perf_counter() - t)
        warm = timed["warm"]
        assert isinstance(warm, list)
        files = sum(1 for p in project.rglob("*") if p.is_file() and ".acms" not in p.parts)
        print(f"acms mcp benchmark — this repository ({files} files, indexed in {index_s:.1f} s), "
              f"budget {args.budget}, stdio, official MCP client")
        table([
            ("server start + initialize + list tools (s)", f"{timed['start']:.2f}"),
            ("first assemble (s)", f"{timed['first']:.3f}"),
            (f"warm assemble, mean of {len(warm)} (s)", f"{statistics.mean(warm):.3f}"),
            ("warm assemble, max (s)", f"{max(warm):.3f}"),
            ("warm search k=10 (s)", f"{timed['search']:.3f}"),
            (f"baseline: acms assemble CLI, mean of {len(cli)} (s)", f"{statistics.mean(cli):.3f}"),
            ("CLI / warm MCP assemble", f"{statistics.mean(cli) / statistics.mean(warm):.1f}x"),
        ])
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "mcp_stdio")  # --write-docs: this run's tables onto docs/benchmarks.md
