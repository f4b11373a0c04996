"""Does the walk's co-change edge bring the files a commit changed? Measured on a repository's own history.

For each commit (given, or the ``-n`` most recent first-parent commits that touch 2+ source files
under ``--source``), the clone is checked out at the commit's parent and indexed with ``--history``
(so the commit itself is not in the history), the commit's message is the task, and the default
pipeline (``arce``) assembles a context at each budget with each co-change weight (``cochange`` of
the expand phase; 0 turns the edge off), packed as ``acms assemble --format json`` packs. It prints,
per setting, how many of the commit's touched files that exist at the parent appear in the context,
and how many fragments the edge contributed.

It checks out commits in the repository it is given (and the first one it was at after): run it on a
throwaway clone. Each commit's index lives in a temporary directory.

    git clone -q . /tmp/cc-repo && python eval/cochange_walk.py /tmp/cc-repo -n 10
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

from acms import Index
from acms.assembly.protocol import parse_request
from acms.service.assembly import assemble
from acms.strategies.engine import BUILTIN_ENGINES
from acms.strategies.registry import StrategyRegistry


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def recent(repo: Path, n: int, source: str, head: str) -> list[str]:
    """The ``n`` most recent first-parent commits before ``head`` that touch 2+ ``*.py`` files under ``source``."""
    out: list[str] = []
    for h in git(repo, "rev-list", "--first-parent", "--max-count=400", head).split()[1:]:
        files = git(repo, "show", "--name-only", "--format=", h).split()
        if sum(f.startswith(source) and f.endswith(".py") for f in files) >= 2:
            out.append(h)
        if len(out) == n:
            break
    return out


def with_weight(weight: float) -> StrategyRegistry:
    """The shipped registry's ``arce`` with the co-change weight changed (same name, so the same output
    format and header costs)."""
    arce = StrategyRegistry.default().get("arce")
    phases = tuple(replace(p, options={**p.options, "cochange": weight}) if p.engine == "expand" else p
                   for p in arce.phases)
    reg = StrategyRegistry()
    for name, engine in BUILTIN_ENGINES:
        reg.register_engine(name, engine, builtin=True)
    reg.register(replace(arce, phases=phases))
    return reg


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("repo", type=Path, help="a throwaway clone")
    ap.add_argument("--commits", default="", help="comma-separated commits (default: the -n most recent)")
    ap.add_argument("-n", type=int, default=10)
    ap.add_argument("--source", default="src/")
    ap.add_argument("--history", type=int, default=300)
    ap.add_argument("--weights", default="0,0.3,0.5,1.0")
    ap.add_argument("--budgets", default="8000,4000")
    args = ap.parse_args()
    head = git(args.repo, "rev-parse", "HEAD").strip()
    commits = args.commits.split(",") if args.commits else recent(args.repo, args.n, args.source, head)
    weights = [float(w) for w in args.weights.split(",")]
    budgets = [int(b) for b in args.budgets.split(",")]
    registries = {w: with_weight(w) for w in weights}
    found = {(b, w): 0 for b in budgets for w in weights}
    edge = {(b, w): 0 for b in budgets for w in weights}
    total = 0
    try:
        for c in commits:
            git(args.repo, "checkout", "-q", "--detach", f"{c}^")
            present = set(git(args.repo, "ls-files").split())
            touched = {p for p in git(args.repo, "show", "--name-only", "--format=", c).split() if p in present}
            total += len(touched)
            task = git(args.repo, "log", "-1", "--format=%B", c)
            # a new index for each commit, outside the clone: an older cut must not see newer commits
            with tempfile.TemporaryDirectory() as where, Index.open(args.repo, store=Path(where) / "acms") as idx:
                idx.index(history=args.history)
                for b in budgets:
                    request = parse_request({"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60",
                                             "intent": task, "request_id": c, "strategy": "arce",
                                             "budgets": {"tokens_max": b, "time_ms": 60000}})
                    for w in weights:
                        # as `acms assemble --format json` packs: the budget counts the fragments' text
                        result = assemble(request, idx.searcher, registries[w], output="json")
                        items = [p.candidate for p in result.assembled.items]
                        found[b, w] += len(touched & {i.path for i in items})
                        edge[b, w] += sum("changes with" in i.reason for i in items)
            print(f"{c[:10]}: {len(touched)} touched files present at the parent", flush=True)
    finally:
        git(args.repo, "checkout", "-q", "--detach", head)
    print(f"\n{len(commits)} commits, {total} touched files, history {args.history} commits before each\n")
    print("| budget | cochange weight | touched files in the context | co-change fragments |\n| --- | --- | --- | --- |")
    for b in budgets:
        for w in weights:
            print(f"| {b:,} | {w:g} | {found[b, w]}/{total} | {edge[b, w]} |")


if __name__ == "__main__":
    main()
