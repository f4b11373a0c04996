"""Every surface of acms, grepped for every planted secret: what the store holds is what they show.

Writes the generated project of ``bench/secret_placements.py`` as a git repository of two commits
(the second replaces the secrets of some files, so the first commit's values live on only in
history), indexes it with ``acms index --history``, then collects what each surface returns, all as
real processes:

* the CLI: ``assemble`` (markdown and json; allow, redact and block), ``search``, ``describe`` and
  ``history`` of a dozen planted files (a process each), ``export`` in every format, ``sparql`` over
  every graph;
* ``acms serve``: ``/sparql`` over every graph (JSON and CSV), ``/store`` per graph, ``/v0/render``
  in every privacy mode;
* ``acms mcp`` through the MCP SDK's client: every tool (assemble in each mode and format, search,
  sparql, describe and history of every planted file, explore) and every resource.

A secret counts as shown when any of its fragments (or a planted secret file name) is in an output
as written, JSON-escaped, HTML-escaped or percent-encoded. The table has one row per surface; the
target is 0 everywhere.

    python bench/secret_surfaces.py [--seed N] [--only N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent

ACMS = str(Path(sys.executable).parent / "acms")
TIMEOUT = 300
ALL_QUADS = "SELECT ?g ?s ?p ?o WHERE { GRAPH ?g { ?s ?p ?o } }"
EXPORT_FORMATS = ("turtle", "trig", "nquads", "jsonld", "graphml", "dot", "cytoscape", "html")
TASKS = ("password token secret api key credentials connection database", "deploy login registry cache redis",
         "private key certificate signing", "config settings environment")
MODES = ("allow", "redact", "block")


if str(_HERE) not in sys.path:  # bench/ is sys.path[0] when run as a script, not when a test loads it by path
    sys.path.insert(0, str(_HERE))
import secret_placements as sp  # a sibling script: the generated corpus
from installed import as_installed


@dataclass
class Planted:
    """The project and what must not show: every fragment of every planted secret (both commits)."""

    root: Path
    values: list[str]
    paths: list[str]  # the files as they were planted (relative, real names)
    placements: int = 0
    secrets: int = 0


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=bench@example.invalid", "-c", "user.name=bench", *args], cwd=root,
                   check=True, capture_output=True)


def plant(root: Path, seed: int, only: int | None = None) -> Planted:
    """The corpus as a git repository: commit 1 with seed ``seed``, commit 2 with every other
    placement's file written again from ``seed + 1`` (new secrets; the old ones stay in history)."""
    first = sp.build(seed)
    second = sp.build(seed + 1)
    if only is not None:
        first, second = first[:only], second[:only]
    root.mkdir(parents=True, exist_ok=True)
    values: set[str] = set()

    def write(ps: list[Any]) -> None:
        for p in ps:
            target = root / p.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(p.text)
            values.update(f for s in p.secrets for f in s.fragments)
            if p.name_secret:
                values.add(p.name_secret)

    write(first)
    (root / "acms.toml").write_text("include_hidden = true\n")  # .env files and CI configs are surfaces too
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "first version")
    again = [q for p, q in zip(first, second) if p.path == q.path][::2]  # same files, new values
    write(again)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "rotate some credentials")
    return Planted(root, sorted(v for v in values if len(v) >= 6), sorted({p.path for p in first}),
                   len(first), sum(len(p.secrets) + bool(p.name_secret) for p in first))


def forms(value: str) -> set[str]:
    """The ways an output may spell a value: as is, JSON-escaped, HTML-escaped, percent-encoded."""
    return {value, json.dumps(value)[1:-1], json.dumps(value)[1:-1].replace("/", "\\/"), html.escape(value),
            html.escape(value, quote=False), urllib.parse.quote(value, safe="/"), urllib.parse.quote(value, safe="")}


def shown(text: str, values: list[str]) -> list[str]:
    """The values ``text`` shows in any spelling."""
    return [v for v in values if any(f in text for f in forms(v))]


def cli(*args: str) -> str:
    out = subprocess.run([ACMS, *args], capture_output=True, text=True, timeout=TIMEOUT)
    if out.returncode != 0:
        raise RuntimeError(f"acms {' '.join(args[:3])}… exit {out.returncode}: {out.stderr[-800:]}")
    return out.stdout + out.stderr


@dataclass
class Outputs:
    """What each surface returned, in pieces (one per call)."""

    parts: dict[str, list[str]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, surface: str, text: str) -> None:
        self.parts.setdefault(surface, []).append(text)

    @contextmanager
    def timed(self, surface: str) -> Iterator[None]:
        t = time.perf_counter()
        yield
        self.seconds[surface] = self.seconds.get(surface, 0.0) + time.perf_counter() - t


def entities(root: Path) -> list[str]:
    """The planted files as the index names them (secret-looking names already redacted)."""
    rows = json.loads(cli("sparql", "SELECT ?p WHERE { ?f a uko:File ; uko:path ?p }", "-C", str(root),
                          "--format", "json", "--refresh", "off"))
    bindings = rows["results"]["bindings"] if isinstance(rows, dict) and "results" in rows else rows
    out = []
    for b in bindings:
        v = b["p"]["value"] if isinstance(b.get("p"), dict) else b.get("p")
        if isinstance(v, str):
            out.append(v)
    return sorted(out)


@dataclass(frozen=True)
class Reach:
    """How much of each surface a sweep asks for (the test asks for less than the bench)."""

    tasks: tuple[str, ...] = TASKS
    cli_modes: tuple[str, ...] = MODES
    export_formats: tuple[str, ...] = EXPORT_FORMATS
    sparql_formats: tuple[str, ...] = ("json", "csv", "table")
    describe_max: int = 12  # CLI describe/history processes (MCP describes every file)


def cli_surfaces(root: Path, out: Outputs, files: list[str], reach: Reach = Reach()) -> None:
    r = str(root)
    with out.timed("cli assemble"):
        for task in reach.tasks:
            for mode in reach.cli_modes:
                out.add(f"cli assemble md {mode}", cli("assemble", task, "-C", r, "--budget", "12000", "--privacy",
                                                       mode, "--refresh", "off"))
                out.add(f"cli assemble json {mode}", cli("assemble", task, "-C", r, "--budget", "12000", "--privacy",
                                                         mode, "--format", "json", "--refresh", "off"))
    with out.timed("cli search"):
        for task in reach.tasks:
            out.add("cli search", cli("search", task, "-C", r, "--json", "-k", "100", "--refresh", "off"))
    with out.timed("cli describe/history"):
        for path in files[:reach.describe_max]:
            out.add("cli describe", cli("describe", path, "-C", r, "--json", "--refresh", "off"))
            out.add("cli history", cli("history", path, "-C", r, "--json", "--refresh", "off"))
    with out.timed("cli export"):
        for fmt in reach.export_formats:
            out.add(f"cli export {fmt}", cli("export", "-C", r, "--format", fmt))
    with out.timed("cli sparql"):
        for fmt in reach.sparql_formats:
            out.add(f"cli sparql {fmt}", cli("sparql", ALL_QUADS, "-C", r, "--format", fmt, "--refresh", "off"))
        out.add("cli sparql turtle", cli("sparql", "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }", "-C", r,
                                         "--refresh", "off"))


def _post(url: str, body: bytes, ctype: str, accept: str = "") -> str:
    headers = {"Content-Type": ctype}
    if accept:
        headers["Accept"] = accept
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    return _answer(req)


def _get(url: str) -> str:
    return _answer(urllib.request.Request(url))


def _answer(req: urllib.request.Request) -> str:
    """Headers and body of a 2xx answer; an error status raises (an error answer shows nothing, so a
    sweep over errors would pass for the wrong reason)."""
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
            return str(resp.headers) + resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{req.full_url}: HTTP {e.code}: {e.read().decode('utf-8', 'replace')[:400]}") from e


@contextmanager
def served(root: Path, log: Path) -> Iterator[str]:
    """``acms serve --port 0`` on 127.0.0.1 (no watcher); its URL from its log."""
    with log.open("wb") as err:
        proc = subprocess.Popen([ACMS, "serve", "--host", "127.0.0.1", "--port", "0", "--no-watch", "--workers", "1",
                                 "--max-rows", "10000000", "--query-timeout", "120", "-C", str(root)],
                                stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        url = ""
        while time.monotonic() < deadline and proc.poll() is None and not url:
            m = re.search(r"serving (http://127\.0\.0\.1:\d+)", log.read_text())
            if m:
                try:
                    _get(m.group(1) + "/health")
                    url = m.group(1)
                except OSError:
                    pass
            time.sleep(0.05)
        if not url:
            raise RuntimeError(f"acms serve did not start: {log.read_text()[-800:]}")
        yield url
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(15)


def http_surfaces(root: Path, out: Outputs, log: Path, reach: Reach = Reach()) -> None:
    with out.timed("http"), served(root, log) as url:
        form = urllib.parse.urlencode({"query": ALL_QUADS}).encode()
        for accept in ("application/sparql-results+json", "text/csv", "text/tab-separated-values",
                       "application/sparql-results+xml"):
            out.add("http /sparql", _post(url + "/sparql", form, "application/x-www-form-urlencoded", accept))
        construct = urllib.parse.urlencode({"query": "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }"}).encode()
        out.add("http /sparql", _post(url + "/sparql", construct, "application/x-www-form-urlencoded", "text/turtle"))
        graphs = json.loads(_post(url + "/sparql", urllib.parse.urlencode(
            {"query": "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"}).encode(),
            "application/x-www-form-urlencoded", "application/sparql-results+json").split("\n\n", 1)[-1])
        for b in graphs["results"]["bindings"]:
            out.add("http /store", _get(url + "/store?" + urllib.parse.urlencode({"graph": b["g"]["value"]})))
        for task in reach.tasks:
            for mode in MODES:
                request = {"version": "v0", "id": str(uuid.uuid4()), "intent": task, "request_id": "sweep",
                           "privacy_mode": mode,
                           "budgets": {"tokens_max": 12000, "time_ms": 60000}}
                out.add(f"http /v0/render {mode}", _post(url + "/v0/render", json.dumps(request).encode(),
                                                         "application/json"))


def mcp_surfaces(root: Path, out: Outputs, files: list[str], reach: Reach = Reach()) -> None:
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=ACMS, args=["mcp", "-C", str(root), "--no-watch"], cwd=str(root))

    def text_of(result: Any) -> str:
        text = "".join(c.text for c in result.content if c.type == "text")
        if result.is_error:
            raise RuntimeError(f"MCP tool error: {text[:400]}")
        return text

    async def main() -> None:
        with anyio.fail_after(TIMEOUT * 2):
            async with Client(params) as client:
                for task in reach.tasks:
                    for mode in MODES:
                        for fmt in ("markdown", "json"):
                            r = await client.call_tool("assemble", {"task": task, "budget": 12000, "privacy": mode,
                                                                    "format": fmt})
                            out.add(f"mcp assemble {mode}", text_of(r))
                    r = await client.call_tool("search", {"query": task, "k": 100})
                    out.add("mcp search", text_of(r))
                offset = 0
                while True:  # every quad, a page of the tool's row cap at a time
                    page = text_of(await client.call_tool("sparql", {
                        "query": f"{ALL_QUADS} ORDER BY ?g ?s ?p ?o LIMIT 5000 OFFSET {offset}", "max_rows": 5000}))
                    out.add("mcp sparql", page)
                    offset += 5000
                    if len(json.loads(page[page.index("{"):])["rows"]) < 5000:
                        break
                for path in files:
                    out.add("mcp describe", text_of(await client.call_tool("describe", {"entity": path})))
                    out.add("mcp history", text_of(await client.call_tool("history", {"entity": path,
                                                                                      "include_text": True})))
                listing = text_of(await client.call_tool("explore", {}))
                out.add("mcp explore", listing)
                for saved in json.loads(listing):
                    if not saved["params"]:
                        out.add("mcp explore", text_of(await client.call_tool(
                            "explore", {"name": saved["name"], "max_rows": 5000})))
                for res in (await client.list_resources()).resources:
                    got = await client.read_resource(res.uri)
                    out.add("mcp resources", "".join(getattr(c, "text", "") for c in got.contents))

    with out.timed("mcp"):
        anyio.run(main)


def sweep(planted: Planted, workdir: Path, reach: Reach = Reach()) -> tuple[Outputs, dict[str, list[str]]]:
    """Index the planted project, collect every surface, and what each showed of the secrets."""
    out = Outputs()
    with out.timed("index"):
        out.add("cli index", cli("index", str(planted.root), "--history", "10", "--json"))
    files = entities(planted.root)
    out.add("cli sparql", "\n".join(files))  # the paths themselves are a surface
    cli_surfaces(planted.root, out, files, reach)
    http_surfaces(planted.root, out, workdir / "serve.log", reach)
    mcp_surfaces(planted.root, out, files, reach)
    leaked = {surface: sorted({v for text in texts for v in shown(text, planted.values)})
              for surface, texts in out.parts.items()}
    return out, leaked


def main() -> None:
    as_installed()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--only", type=int, help="the first N placements only")
    ap.add_argument("--keep", type=Path, help="build the project here (default: a temporary folder)")
    args = ap.parse_args()
    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="acms-surfaces-")
    work = args.keep or Path(tmp.name)  # type: ignore[union-attr]
    if args.keep and (work / "project").exists():
        shutil.rmtree(work / "project")
    planted = plant(work / "project", args.seed, args.only)
    out, leaked = sweep(planted, work)
    print(f"{planted.placements} placements, {planted.secrets} secrets planted in the last commit, "
          f"{len(planted.values)} values to look for (both commits, every fragment, file names)")
    print()
    print("| surface | outputs | kB | secrets shown |")
    print("| --- | ---: | ---: | ---: |")
    for surface in sorted(out.parts):
        texts = out.parts[surface]
        print(f"| {surface} | {len(texts)} | {sum(len(t) for t in texts) / 1e3:.0f} | {len(leaked[surface])} |")
    total = sorted({v for vs in leaked.values() for v in vs})
    print()
    print(f"secrets shown on any surface: {len(total)}; seconds: "
          + ", ".join(f"{k} {v:.0f}" for k, v in sorted(out.seconds.items())))
    for v in total[:40]:
        print("  shown:", v[:16] + "…", [s for s, vs in leaked.items() if v in vs])
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "secret_surfaces")  # --write-docs: this run's tables onto docs/benchmarks.md
