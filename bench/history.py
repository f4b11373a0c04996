"""Ingest the git history of a generated repository (``acms index --history N``) and print what it cost.

The fixture is a small Python package with N commits (default 1,000), written by one ``git
fast-import`` from a seeded generator: each commit changes the bodies of 1-3 functions or methods,
sometimes adds, renames or deletes one, adds or moves a module, or touches a non-Python file; dated
authors, increasing dates, ordinary messages. It lives in ``$TMPDIR/acms-bench/history-N`` and is
reused while it matches N (ten more commits wait on the branch ``next`` for the incremental run).

Measured in one run, each on a fresh store unless said:

* baselines: ``git log -p -U0`` of the N commits (the command the ingest runs), ``git cat-file
  --batch`` of the file versions it reads, and ``acms index`` without history;
* ``acms index --history N``: total seconds, the history phase, commits/s, versions, touches;
* store growth per commit: bytes on disk and quads, with history minus without, divided by N;
* re-running with no new commits, and ten new commits on top (incremental).

Embeddings and derived caches are left out (no ``layout`` is passed to ``index_project``); they
do not depend on the history. Aims (issue 5): 1,000 commits under 60 s; no new commits under 2 s.

    python bench/history.py [--commits N] [--work DIR] [--json] [--profile FILE]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from acms.config import Settings
from acms.service.indexing import IndexReport, index_project
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore
from acms.temporal import git_history
from installed import as_installed

DEFAULT_WORK = Path(tempfile.gettempdir()) / "acms-bench"
GENERATOR_VERSION = 2  # bump when the generator changes: cached fixtures are then rebuilt
EXTRA_COMMITS = 10  # on refs/heads/next, for the incremental run
SEED = 20240501
PROJECT = "histbench"  # fixed project name: the incremental run indexes a copy under another folder name

# ---------------------------------------------------------------------------------------------- fixture

AUTHORS = [
    ("Ada Lindqvist", "ada@example.org", "+0100"), ("Bram Okafor", "bram@example.org", "+0000"),
    ("Chen Wei", "chen.wei@example.com", "+0800"), ("Dana Morales", "dana@example.net", "-0500"),
    ("Elif Demir", "elif.demir@example.org", "+0300"), ("Felix Hartmann", "felix@example.de", "+0100"),
    ("Grace Mbeki", "grace@example.co.za", "+0200"), ("Hiro Tanaka", "hiro@example.jp", "+0900"),
]
VERBS = ["load", "parse", "build", "merge", "resolve", "render", "fetch", "encode", "decode", "split",
         "collect", "normalize", "validate", "apply", "compute", "format", "scan", "flush", "open", "close"]
NOUNS = ["config", "header", "token", "record", "batch", "payload", "index", "cache", "path", "entry",
         "schema", "query", "result", "chunk", "buffer", "span", "label", "metric", "rule", "request"]
CLASS_NOUNS = ["Parser", "Registry", "Loader", "Builder", "Resolver", "Cache", "Session", "Writer",
               "Reader", "Planner", "Scheduler", "Encoder", "Router", "Store", "Pool", "Tracker"]
MODULE_NAMES = ["core", "config", "io", "parsing", "render", "cache", "schema", "query", "util", "net",
                "cli", "batch", "metrics", "rules", "tokens", "paths", "errors", "plugins", "storage", "sync"]
IMPORTS = ["import os", "import re", "import json", "import logging", "import itertools",
           "from collections import defaultdict", "from pathlib import Path", "from typing import Any"]
STATEMENTS = [
    "result = result + {a}", "result = max(result, {n})", "result = len(str({a})) + {n}",
    "result = str({a}).strip() or result", "result = result * {n} - {a}", "result = [result, {a}][{b}]",
    "if {a} is None:\n    return result", "if result > {n}:\n    result = result - {n}",
    "for _i in range({n}):\n    result = result + _i", "{a} = {a} or {n}", "result = ({a}, result)[{b}]",
    "result = sorted([result, {a}], key=str)[0]", "result = hash((result, {a})) % {m}",
    "try:\n    result = int(result)\nexcept (TypeError, ValueError):\n    result = {n}",
]
CHANGE_MSG = [
    "Fix off-by-one in {f}", "Handle empty input in {f}", "Simplify {f}", "Refactor {f} for readability",
    "Avoid a redundant copy in {f}", "Guard {f} against None", "Speed up {f}", "Tidy up {f}",
    "Make {f} deterministic", "Clamp the value returned by {f}", "Return early from {f}",
    "Fix regression in {f} introduced last week", "Use max() in {f}", "Correct the loop bound in {f}",
]
DOC_FILES = ["README.md", "CHANGELOG.md", "docs/usage.md", "docs/design.md", "pyproject.toml", "data/defaults.json"]


@dataclass
class Func:
    name: str
    params: list[str]
    body: list[str]  # statements (possibly several lines), the last is the return


@dataclass
class Klass:
    name: str
    methods: list[Func]


@dataclass
class Module:
    path: str
    doc: str
    imports: list[str]
    items: list[Func | Klass] = field(default_factory=list)


class Generator:
    """A package in memory; each ``commit()`` mutates it and returns (message, changed files, removed paths)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.names: set[str] = set()
        self.modules: dict[str, Module] = {}
        self.docs: dict[str, list[str]] = {}
        for mod in rng.sample(MODULE_NAMES, 15):
            self._new_module(mod)
        for path in DOC_FILES:
            self.docs[path] = [f"# {path}", "", "Generated fixture for the acms history benchmark.", ""]

    # --- pieces
    def _name(self, make) -> str:  # type: ignore[no-untyped-def]
        for _ in range(1000):
            n = make()
            if n not in self.names:
                self.names.add(n)
                return n
        n = f"{make()}_{len(self.names)}"
        self.names.add(n)
        return n

    def _stmt(self, params: list[str]) -> str:
        r = self.rng
        a = r.choice(params) if params else "result"
        return r.choice(STATEMENTS).format(a=a, n=r.randint(1, 99), b=r.randint(0, 1), m=r.choice([7, 31, 97, 1009]))

    def _func(self, method: bool = False) -> Func:
        r = self.rng
        name = self._name(lambda: f"{r.choice(VERBS)}_{r.choice(NOUNS)}")
        params = r.sample(["value", "items", "limit", "key", "default", "source", "options"], r.randint(1, 3))
        body = [f"result = {r.choice(['0', 'None', '[]', repr(name)])}"]
        body += [self._stmt(params) for _ in range(r.randint(2, 7))]
        body.append("return result")
        return Func(name, (["self"] if method else []) + params, body)

    def _klass(self) -> Klass:
        r = self.rng
        name = self._name(lambda: f"{r.choice(NOUNS).title()}{r.choice(CLASS_NOUNS)}")
        return Klass(name, [self._func(method=True) for _ in range(r.randint(2, 5))])

    def _new_module(self, mod: str) -> Module:
        r = self.rng
        path = f"pkg/{mod}.py"
        m = Module(path, f"{mod.title()} helpers for the benchmark package.", sorted(r.sample(IMPORTS, 3)))
        m.items = [self._klass() if r.random() < 0.3 else self._func() for _ in range(r.randint(4, 9))]
        self.modules[path] = m
        return m

    def render(self, m: Module) -> str:
        out = [f'"""{m.doc}"""', "", "from __future__ import annotations", "", *m.imports, ""]
        for item in m.items:
            out.append("")
            if isinstance(item, Klass):
                out += [f"class {item.name}:", f'    """The {item.name} of the package."""', ""]
                for i, meth in enumerate(item.methods):
                    if i:
                        out.append("")
                    out += self._render_func(meth, "    ")
            else:
                out += self._render_func(item, "")
            out.append("")
        return "\n".join(out).rstrip("\n") + "\n"

    @staticmethod
    def _render_func(f: Func, indent: str) -> list[str]:
        out = [f"{indent}def {f.name}({', '.join(f.params)}):"]
        for stmt in f.body:
            out += [f"{indent}    {line}" for line in stmt.split("\n")]
        return out

    def _functions(self) -> list[tuple[Module, Klass | None, Func]]:
        return [(m, None, it) if isinstance(it, Func) else (m, it, meth)
                for m in self.modules.values() for it in m.items
                for meth in ([it] if isinstance(it, Func) else it.methods)]

    # --- one commit
    def commit(self) -> tuple[str, dict[str, str], list[str]]:
        r = self.rng
        changed: set[str] = set()
        removed: list[str] = []
        subject: str
        roll = r.random()
        funcs = self._functions()
        if roll < 0.08:  # add a function or a method
            m = r.choice(list(self.modules.values()))
            target = [it for it in m.items if isinstance(it, Klass)]
            if target and r.random() < 0.5:
                k = r.choice(target)
                f = self._func(method=True)
                k.methods.insert(r.randint(0, len(k.methods)), f)
                subject = f"Add {k.name}.{f.name}"
            else:
                f = self._func()
                m.items.insert(r.randint(0, len(m.items)), f)
                subject = f"Add {f.name} to {Path(m.path).stem}"
            changed.add(m.path)
        elif roll < 0.11:  # rename a function
            m, k, f = r.choice(funcs)
            old = f.name
            f.name = self._name(lambda: f"{r.choice(VERBS)}_{r.choice(NOUNS)}")
            subject = f"Rename {old} to {f.name}"
            changed.add(m.path)
        elif roll < 0.14:  # delete a function (modules and classes keep two)
            m, k, f = r.choice(funcs)
            if k is not None and len(k.methods) > 2:
                k.methods.remove(f)
                subject = f"Remove unused {k.name}.{f.name}"
                changed.add(m.path)
            elif k is None and len(m.items) > 2:
                m.items.remove(f)
                subject = f"Remove unused {f.name}"
                changed.add(m.path)
            else:
                subject = self._edit(r.choice(funcs), changed)
        elif roll < 0.15 and len(self.modules) < len(MODULE_NAMES):  # a new module
            mod = r.choice([n for n in MODULE_NAMES if f"pkg/{n}.py" not in self.modules])
            m = self._new_module(mod)
            subject = f"Add the {mod} module"
            changed.add(m.path)
        elif roll < 0.155:  # move a module (git sees a rename)
            m = r.choice(list(self.modules.values()))
            new = f"pkg/{Path(m.path).stem}_{r.choice(['impl', 'base', 'core', 'ops'])}.py"
            if new in self.modules:
                subject = self._edit(r.choice(funcs), changed)
            else:
                removed.append(m.path)
                del self.modules[m.path]
                subject = f"Move {m.path} to {new}"
                m.path = new
                self.modules[new] = m
                changed.add(new)
        else:  # the common case: change the bodies of 1-3 functions, mostly in one module
            picks = r.sample(funcs, min(len(funcs), r.choice([1, 1, 1, 2, 2, 3])))
            if len(picks) > 1 and r.random() < 0.6:
                same = [t for t in funcs if t[0] is picks[0][0]]
                picks = r.sample(same, min(len(same), len(picks)))
            subjects = [self._edit(p, changed) for p in picks]
            subject = subjects[0] if len(subjects) == 1 else f"{subjects[0]} and {len(subjects) - 1} more"
        if r.random() < 0.12:  # a non-Python file too
            path = r.choice(DOC_FILES)
            self.docs[path].append(f"- {subject}")
            changed.add(path)
        message = subject
        if r.random() < 0.35:
            message += "\n\n" + r.choice([
                "The old behaviour surprised callers that pass an empty sequence.",
                "Found while reviewing the nightly failures; covered by the existing tests.",
                "No functional change intended for callers of the public API.",
                "This keeps the result stable across runs.\n\nRefs #%d" % r.randint(10, 400),
            ])
        files = {p: self.render(self.modules[p]) if p in self.modules else self._doc_text(p) for p in sorted(changed)}
        return message, files, removed

    def _doc_text(self, path: str) -> str:
        if path.endswith(".json"):
            return json.dumps({"notes": self.docs[path][4:]}, indent=2) + "\n"
        return "\n".join(self.docs[path]) + "\n"

    def _edit(self, pick: tuple[Module, Klass | None, Func], changed: set[str]) -> str:
        r = self.rng
        m, k, f = pick
        params = [p for p in f.params if p != "self"]
        middle = len(f.body) - 2  # statements between the first assignment and the return
        op = r.random()
        if op < 0.5 and middle > 0:
            i = r.randint(1, middle)
            old = f.body[i]
            while f.body[i] == old:  # an identical statement would make an empty commit
                f.body[i] = self._stmt(params)
        elif op < 0.8 or middle <= 1:
            f.body.insert(r.randint(1, middle + 1), self._stmt(params))
        else:
            del f.body[r.randint(1, middle)]
        changed.add(m.path)
        return r.choice(CHANGE_MSG).format(f=f"{k.name}.{f.name}" if k else f.name)

    def initial(self) -> dict[str, str]:
        files = {p: self.render(m) for p, m in self.modules.items()}
        files["pkg/__init__.py"] = '"""The benchmark package."""\n'
        files.update({p: self._doc_text(p) for p in self.docs})
        return files


def fast_import_stream(n: int, extra: int, seed: int) -> bytes:
    """N commits on main, ``extra`` more on next (starting from main), as one fast-import stream."""
    rng = random.Random(seed)
    gen = Generator(rng)
    out: list[bytes] = []
    when = 1_640_995_200  # 2022-01-01

    def data(text: str) -> None:
        raw = text.encode()
        out.append(b"data %d\n" % len(raw))
        out.append(raw)
        out.append(b"\n")

    for i in range(n + extra):
        if i == n:
            out.append(b"reset refs/heads/next\nfrom :%d\n\n" % n)
        if i == 0:
            message, files, removed = "Initial import of the package", gen.initial(), []
        else:
            message, files, removed = gen.commit()
        when += rng.randint(600, 2 * 86_400)
        name, email, tz = rng.choice(AUTHORS)
        branch = b"main" if i < n else b"next"
        out.append(b"commit refs/heads/%s\nmark :%d\n" % (branch, i + 1))
        stamp = f"{name} <{email}> {when} {tz}".encode()
        out.append(b"author %s\ncommitter %s\n" % (stamp, stamp))
        data(message + "\n")
        if i:
            out.append(b"from :%d\n" % i)
        for path in removed:
            out.append(f"D {path}\n".encode())
        for path, text in files.items():
            out.append(f"M 100644 inline {path}\n".encode())
            data(text)
        out.append(b"\n")
    return b"".join(out)


def git(repo: Path, *args: str, input_bytes: bytes | None = None) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], input=input_bytes, capture_output=True, check=True).stdout


def fixture(work: Path, n: int) -> tuple[Path, float, bool]:
    """(repo, seconds to build it, reused?) — ``work/history-N/repo`` with main at commit N."""
    home = work / f"history-{n}"
    repo = home / "repo"
    marker = home / "fixture.json"
    want = {"commits": n, "extra": EXTRA_COMMITS, "seed": SEED, "generator": GENERATOR_VERSION}
    if marker.exists() and repo.is_dir():
        have = json.loads(marker.read_text())
        try:
            head = git(repo, "rev-parse", "HEAD").decode().strip()
        except subprocess.CalledProcessError:
            head = ""
        if {k: have.get(k) for k in want} == want and head == have.get("head"):
            return repo, 0.0, True
    shutil.rmtree(home, ignore_errors=True)
    repo.mkdir(parents=True)
    t = time.perf_counter()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "fast-import", "--quiet", "--done", input_bytes=fast_import_stream(n, EXTRA_COMMITS, SEED) + b"done\n")
    git(repo, "read-tree", "-u", "--reset", "HEAD")  # the working tree of main (the index starts empty)
    seconds = time.perf_counter() - t
    changing = int(git(repo, "rev-list", "--count", "HEAD", "--", ".").decode())
    assert changing == n, f"the generator made {n - changing} empty commits"
    marker.write_text(json.dumps({**want, "head": git(repo, "rev-parse", "HEAD").decode().strip()}))
    return repo, seconds, False


# -------------------------------------------------------------------------------------------- measuring

def git_baseline(repo: Path, n: int) -> dict[str, float | int]:
    """The git work the ingest cannot avoid: its ``git log`` and its ``git cat-file --batch``."""
    fmt = "%x00%x00%H%x1f%P%x1f%an%x1f%aI%x1f%B%x00"
    t = time.perf_counter()
    log = git(repo, "-c", "core.quotepath=off", "log", f"--max-count={n}", f"--format={fmt}", "-p", "-U0", "-M",
              "--no-color", "--no-ext-diff", "--relative", "HEAD", "--", ".")
    t_log = time.perf_counter() - t
    t = time.perf_counter()
    commits = git_history.read_log(repo, n)  # git log again + the parse
    t_read = time.perf_counter() - t
    names = git_history.blob_names(commits)
    t = time.perf_counter()
    git(repo, "cat-file", "--batch", input_bytes=("\n".join(names) + "\n").encode())
    t_cat = time.perf_counter() - t
    return {"git_log_s": t_log, "git_log_mb": len(log) / 1e6, "read_log_s": t_read,
            "cat_file_s": t_cat, "blobs": len(names)}


@dataclass
class Run:
    report: IndexReport
    quads: int
    bytes: int


def index(repo: Path, store_dir: Path, history: int, profile: Path | None = None) -> Run:
    store = OxigraphStore(store_dir)
    try:
        prof = cProfile.Profile() if profile else None
        if prof:
            prof.enable()
        report = index_project(repo, store, Settings(project_name=PROJECT), history=history)
        if prof:
            prof.disable()
            prof.dump_stats(str(profile))
        store.flush()
        quads = len(store.raw)
        size = store.size_bytes()
    finally:
        store.close()
    return Run(report, quads, size)


def main() -> None:
    as_installed()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=1000, help="commits in the fixture and in --history")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="fixtures go to WORK/history-N")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--profile", type=Path, help="cProfile the --history run into this file (and print the top)")
    args = parser.parse_args()
    n = args.commits

    repo, t_fixture, reused = fixture(args.work, n)
    stores = IndexLayout(args.work / f"history-{n}" / "runs")
    shutil.rmtree(stores.root, ignore_errors=True)
    stores.root.mkdir(parents=True)

    base = git_baseline(repo, n)
    plain = index(repo, stores.root / "plain", 0)
    hist = index(repo, stores.graph, n, args.profile)
    again = index(repo, stores.graph, n)
    # ten more commits: a copy of the fixture fast-forwarded to next, indexed into the same store
    inc_repo = stores.root / "repo-next"
    shutil.copytree(repo, inc_repo, symlinks=True)
    git(inc_repo, "merge", "-q", "--ff-only", "next")
    inc = index(inc_repo, stores.graph, n)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    h = hist.report.history
    assert h is not None and h.available, "the fixture is a git checkout"
    h_again, h_inc = again.report.history, inc.report.history
    t_total = hist.report.seconds
    t_hist = hist.report.timings.get("history", 0.0)
    git_floor = base["git_log_s"] + base["cat_file_s"]
    data = {
        "commits": n, "fixture": {"path": str(repo), "built_s": round(t_fixture, 2), "reused": reused,
                                  "files": plain.report.files_indexed},
        "baseline": {k: round(v, 4) if isinstance(v, float) else v for k, v in base.items()}
        | {"plain_index_s": round(plain.report.seconds, 3)},
        "history_index": {
            "total_s": round(t_total, 3), "history_s": round(t_hist, 3),
            "tiers_s": round(hist.report.timings.get("tiers", 0.0), 3),
            "commits_per_s": round(h.commits_ingested / t_hist, 1) if t_hist else None,
            **h.as_dict(), "timings": {k: round(v, 3) for k, v in hist.report.timings.items()},
        },
        "growth": {
            "quads_plain": plain.quads, "quads_history": hist.quads,
            "bytes_plain": plain.bytes, "bytes_history": hist.bytes,
            "quads_per_commit": round((hist.quads - plain.quads) / n, 1),
            "bytes_per_commit": round((hist.bytes - plain.bytes) / n),
        },
        "rerun_no_new": {"total_s": round(again.report.seconds, 3),
                         "history_s": round(again.report.timings.get("history", 0.0), 3),
                         "note": h_again.note if h_again else ""},
        "incremental": {"new_commits": h_inc.commits_ingested if h_inc else 0,
                        "total_s": round(inc.report.seconds, 3),
                        "history_s": round(inc.report.timings.get("history", 0.0), 3),
                        "files_indexed": inc.report.files_indexed},
        "ratios": {"history_phase_vs_git_log": round(t_hist / base["git_log_s"], 1),
                   "history_phase_vs_git_log_and_cat_file": round(t_hist / git_floor, 1)},
        "aims": {"commits_1000_under_60s": t_total < 60.0 * n / 1000, "no_new_under_2s": again.report.seconds < 2.0},
        "peak_rss_mb": round(rss_mb),
    }
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print_table(data, hist.report)
    if args.profile:
        print(f"\nprofile of the --history run ({args.profile}), top 25 by cumulative time:", file=sys.stderr)
        pstats.Stats(str(args.profile), stream=sys.stderr).sort_stats("cumulative").print_stats(25)


def print_table(d: dict, report: IndexReport) -> None:  # type: ignore[type-arg]
    n, b, hi, g = d["commits"], d["baseline"], d["history_index"], d["growth"]
    again, inc = d["rerun_no_new"], d["incremental"]
    t_hist, t_total = hi["history_s"], hi["total_s"]

    built = "reused" if d["fixture"]["reused"] else f"built in {d['fixture']['built_s']:.1f}s"

    def ok(flag: bool) -> str:
        return "met" if flag else "MISSED"

    rows = [
        ("fixture", f"{n:,} commits, {d['fixture']['files']} files, " + built),
        (f"baseline: git log -p -U0 ({b['git_log_mb']:.1f} MB) (s)", f"{b['git_log_s']:.2f}"),
        (f"baseline: git cat-file --batch ({b['blobs']:,} blobs) (s)", f"{b['cat_file_s']:.2f}"),
        ("baseline: read_log (git log + parse) (s)", f"{b['read_log_s']:.2f}"),
        ("baseline: acms index, no history (s)", f"{b['plain_index_s']:.2f}"),
        (f"index --history {n} (s)", f"{t_total:.2f}"),
        ("  phase history (s)", f"{share(t_hist, t_total)}"),
        ("  phase tiers (s)", f"{share(hi['tiers_s'], t_total)}"),
        ("commits ingested", f"{hi['commits_ingested']:,}"),
        ("commits/s (history phase)", f"{hi['commits_per_s']:,.0f}" if hi["commits_per_s"] else "-"),
        ("versions archived", f"{hi['versions']:,}"),
        ("touches", f"{hi['touches']:,}"),
        ("history triples", f"{hi['triples']:,}"),
        ("history phase / git log", f"{d['ratios']['history_phase_vs_git_log']:.1f}x"),
        ("history phase / (git log + cat-file)", f"{d['ratios']['history_phase_vs_git_log_and_cat_file']:.1f}x"),
        ("quads without / with history", f"{g['quads_plain']:,} / {g['quads_history']:,}"),
        ("store size without / with history (MB)", f"{g['bytes_plain'] / 1e6:.1f} / {g['bytes_history'] / 1e6:.1f}"),
        ("growth per commit (quads)", f"{g['quads_per_commit']:,.1f}"),
        ("growth per commit (KB on disk)", f"{g['bytes_per_commit'] / 1e3:,.1f}"),
        ("re-run, no new commits (s)", f"{again['total_s']:.2f} (history {again['history_s']:.2f})"),
        (f"+{inc['new_commits']} commits, incremental (s)",
         f"{inc['total_s']:.2f} (history {inc['history_s']:.2f}, {inc['files_indexed']} files re-indexed)"),
        ("peak RSS (MB)", f"{d['peak_rss_mb']:,}"),
        (f"aim: {n:,} commits under {60 * n / 1000:.0f} s", f"{ok(d['aims']['commits_1000_under_60s'])} ({t_total:.1f} s)"),
        ("aim: no new commits under 2 s", f"{ok(d['aims']['no_new_under_2s'])} ({again['total_s']:.2f} s)"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"acms history benchmark — {n:,} commits — Python {sys.version.split()[0]}")
    print(f"{'metric'.ljust(width)} | value")
    print(f"{'-' * width}-|-{'-' * 16}")
    for name, value in rows:
        print(f"{name.ljust(width)} | {value}")
    others = ", ".join(f"{k} {v:.2f}s" for k, v in report.timings.items() if k not in ("history", "tiers"))
    print(f"other phases of the --history run: {others}")


def share(secs: float, total: float) -> str:
    return f"{secs:.2f} ({100 * secs / total:.0f}%)" if total else f"{secs:.2f}"


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "history")  # --write-docs: this run's tables onto docs/benchmarks.md
