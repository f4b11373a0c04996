"""After any edit, every ``path:line`` acms returns matches the file on disk.

An agent edits files and then acts on what acms tells it: it opens ``pkg/mod.py:20-23`` and changes
those lines. So every answer after an edit must point at the lines as they are now, whoever answers:
the CLI (``assemble``, ``search --json``, ``describe --json``), the MCP tools of a running ``acms mcp``
and ``POST /v0/render`` (and ``/sparql``) of a running ``acms serve``, with the servers' watcher on
(it refreshes after saves) or off (then the read itself refreshes first). With ``refresh = warn``
(``--refresh warn`` on the CLI, ``--set refresh=warn`` on the servers) an answer names the files it was
made without, its stale lines are caught by the same checks, and nothing is re-indexed.

Real processes on real files, no mocks. One index of the sample and polyglot projects per module,
copied per test; one server of each kind per module, taken through all edits in turn.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from acms.api import Index
from tests.provenance import (
    Block,
    blocks_of_markdown,
    blocks_of_reply,
    check_blocks,
    check_described,
    check_markdown,
    check_ref,
    check_reply,
    file_lines,
    parse_ref,
)

FIXTURES = Path(__file__).parent / "fixtures"
ACMS = str(Path(sys.executable).parent / "acms")
RUN_TIMEOUT = 60.0  # one CLI command, refresh included
FRESH_TIMEOUT = 15.0  # a watcher's refresh after a save: debounce (50 ms) + a refresh of a few files
STALE = re.compile(r"stale: (\d+) files? changed on disk since indexed \(([^)]*)\)")
BUDGET = 2500
UNKNOWN = "no entity named"  # describe of a removed entity no earlier version names
CLI_DESCRIBES = 1  # entities a CLI test describes per edit (a process each); the servers describe every one


# -- the edits -------------------------------------------------------------------------------------
def replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


@dataclass(frozen=True)
class Found:
    """An entity that must be described after the edit, its range opening with the line ``opens``."""

    entity: str
    path: str
    opens: str


@dataclass(frozen=True)
class Edit:
    """One edit an agent makes, and what every answer after it must (and must not) hold."""

    name: str
    apply: Callable[[Path], None]
    task: str  # for assemble and render
    query: str  # for search
    changed: tuple[str, ...]  # the files it touches, as a look names them
    found: tuple[Found, ...] = ()
    gone: tuple[str, ...] = ()  # entities describe must no longer find, and no answer may name
    gone_paths: tuple[str, ...] = ()  # files no answer may cite any more
    cites: tuple[str, ...] = ()  # files the assembled context must cite (so its check is not vacuous)


def insert_lines(root: Path) -> None:
    """A method above ``parse_header`` and a Go function above ``Circle.Area``: what follows moves down."""
    replace(root / "pkg" / "mod.py", "    def parse_header(",
            '    def reset(self) -> None:\n        """Forget the strict flag."""\n        self.strict = False\n\n'
            "    def parse_header(")
    replace(root / "poly" / "shapes" / "shape.go", "// Area of the circle.",
            "// Perimeter of the circle.\nfunc (c *Circle) Perimeter() float64 {\n\treturn 2 * math.Pi * c.R\n}\n\n"
            "// Area of the circle.")


def rename_function(root: Path) -> None:
    """``normalize`` becomes ``canonical``, with its import and call, as an agent's rename does."""
    replace(root / "pkg" / "util.py", "def normalize(", "def canonical(")
    mod = root / "pkg" / "mod.py"
    replace(mod, "from pkg.util import normalize", "from pkg.util import canonical")
    replace(mod, "return normalize(name)", "return canonical(name)")


def move_class(root: Path) -> None:
    """``Base`` leaves ``pkg/mod.py`` for a new ``pkg/base.py``; ``mod.py`` imports it from there."""
    mod = root / "pkg" / "mod.py"
    text = mod.read_text()
    base = text[text.index("class Base:"):text.index("class Parser(")]
    text = text.replace(base, "").replace("from . import util", "from . import util\nfrom pkg.base import Base")
    mod.write_text(text)
    (root / "pkg" / "base.py").write_text('"""The base of every parser."""\n\n\n' + base.rstrip("\n") + "\n")


def delete_file(root: Path) -> None:
    (root / "poly" / "shapes" / "util.go").unlink()


def turn_binary(root: Path) -> None:
    (root / "docs" / "guide.md").write_bytes(b"\x00\x01\x02 binary now \x00" * 40)


PARSE_HEADER = Found("pkg.mod.Parser.parse_header", "pkg/mod.py",
                     "def parse_header(self, line: str) -> tuple[str, str]:")
EDITS: tuple[Edit, ...] = (
    Edit("insert", insert_lines, "how are header lines parsed, and the area of a circle", "parse header circle area",
         ("pkg/mod.py", "poly/shapes/shape.go"),
         found=(PARSE_HEADER,
                Found("pkg.mod.Parser.reset", "pkg/mod.py", "def reset(self) -> None:"),
                Found("pkg.mod.make_parser", "pkg/mod.py", "def make_parser() -> Parser:"),
                Found("poly.shapes.shape.Circle.Area", "poly/shapes/shape.go", "// Area of the circle.")),
         cites=("pkg/mod.py", "poly/shapes/shape.go")),
    Edit("rename", rename_function, "canonical form of a header name: strip and lower-case", "canonical",
         ("pkg/mod.py", "pkg/util.py"),
         found=(Found("pkg.util.canonical", "pkg/util.py", "def canonical(text: str) -> str:"),
                PARSE_HEADER),
         gone=("pkg.util.normalize",), cites=("pkg/util.py",)),
    Edit("move", move_class, "the Base class and its describe method", "Base describe",
         ("pkg/base.py", "pkg/mod.py"),
         found=(Found("pkg.base.Base", "pkg/base.py", "class Base:"),
                Found("pkg.base.Base.describe", "pkg/base.py", "def describe(self) -> str:"),
                Found("pkg.mod.Parser", "pkg/mod.py", "class Parser(Base):")),
         gone=("pkg.mod.Base", "pkg.mod.Base.describe"), cites=("pkg/base.py",)),
    Edit("delete", delete_file, "square a number; the Base every shape has and how it describes its name",
         "square Base Describe Name", ("poly/shapes/util.go",),
         found=(Found("poly.shapes.shape.NewCircle", "poly/shapes/shape.go",
                      "// NewCircle makes a circle and logs it."),),
         gone=("poly.shapes.util.square", "poly.shapes.util.Base", "poly/shapes/util.go"),
         gone_paths=("poly/shapes/util.go",)),
    Edit("binary", turn_binary, "guide: install, usage, advanced strict mode", "install usage guide strict",
         ("docs/guide.md",), gone=("docs/guide.md",), gone_paths=("docs/guide.md",)),
)


# -- what every answer must hold -------------------------------------------------------------------
def start_of(root: Path, found: Found) -> int:
    """The line the entity's range must open with, found on disk now (exactly one such line)."""
    lines = file_lines(root, found.path)
    assert lines is not None, found
    at = [i for i, line in enumerate(lines, 1) if line.strip() == found.opens]
    assert len(at) == 1, (found, at)
    return at[0]


def check_found(root: Path, found: Found, about: dict[str, Any], where: str) -> None:
    """``describe`` of an entity the edit kept or made: at its line now, and all it lists too."""
    check_described(root, about, where=where)
    path, start, _ = parse_ref(about["location"])
    assert (path, start) == (found.path, start_of(root, found)), (
        f"{where}{found.entity} is described at {about['location']}, but on disk it opens at "
        f"{found.path}:{start_of(root, found)} ({found.opens!r})")


def check_not_citing(edit: Edit, refs: Sequence[str], names: Sequence[str], where: str) -> None:
    """Nothing of a deleted, renamed or binary file or entity is returned any more."""
    for ref in refs:
        assert parse_ref(ref)[0] not in edit.gone_paths, f"{where}cites {ref}, which is gone from disk"
    for name in names:
        assert name not in edit.gone, f"{where}returns {name}, which no longer exists"


def check_context(root: Path, edit: Edit, blocks: Sequence[Block], where: str) -> None:
    """An assembled context after ``edit``: every block verified, the edited files cited, gone ones not."""
    check_blocks(root, blocks, where=where)
    check_not_citing(edit, [b.ref for b in blocks], [b.name for b in blocks], where)
    cited = {b.path for b in blocks}
    assert set(edit.cites) <= cited, f"{where}the context does not cite {set(edit.cites) - cited}: {sorted(cited)}"


def check_hits(root: Path, edit: Edit, hits: Sequence[dict[str, Any]], ref_key: str, where: str) -> None:
    """Search hits after ``edit``: each reference opens with the definition it names."""
    assert hits, f"{where}no hits for {edit.query!r}"
    for h in hits:
        check_ref(root, h[ref_key], h["name"], h["kind"], what=f"{where}hit {h[ref_key]} ({h['name']})")
    check_not_citing(edit, [h[ref_key] for h in hits], [h["name"] for h in hits], where)


def stale_named(text: str) -> list[str]:
    """The files a ``stale: N files changed on disk since indexed (a, b)`` notice names."""
    m = STALE.search(text)
    assert m, f"no stale notice in {text[:400]!r}"
    return [p.strip() for p in m.group(2).split(",")]


def look(root: Path) -> list[str]:
    """The indexed files changed on disk, from a reader beside the servers (writes nothing)."""
    with Index.open(root, mode="read", refresh="off", wait=30) as idx:
        return idx.look().paths


def wait_until_fresh(root: Path, timeout: float = FRESH_TIMEOUT) -> None:
    """Until a look finds nothing changed: what a watcher's refresh leaves (no read asked for it)."""
    deadline = time.monotonic() + timeout
    while (stale := look(root)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not stale, f"the watcher did not refresh {stale} within {timeout:g} s"


def wait_for_watcher(root: Path, timeout: float = FRESH_TIMEOUT) -> None:
    """Until the server's watcher follows saves: a save made before its watch is in place is not seen
    by it (a read would still refresh), so probe with a small file until a save is refreshed unasked."""
    deadline = time.monotonic() + timeout
    probe = root / "probe.txt"
    n = 0
    while time.monotonic() < deadline:
        n += 1
        probe.write_text(f"watch probe {n}\n")
        settle = time.monotonic() + 1.5
        while time.monotonic() < settle:
            if not look(root):
                return
            time.sleep(0.1)
    raise AssertionError(f"the watcher refreshed no save within {timeout:g} s")


# -- projects and processes ------------------------------------------------------------------------
def acms(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """One read command on ``root``, which must succeed without a traceback."""
    out = subprocess.run([ACMS, *args, "-C", str(root)], check=False, capture_output=True, text=True,
                         timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
    assert out.returncode == 0 and "Traceback" not in out.stderr, (
        f"acms {' '.join(args)}: exit {out.returncode}\n{out.stderr}")
    return out


def index(root: Path) -> None:
    """``acms index``: another process refreshing the index beside a server."""
    out = subprocess.run([ACMS, "index", str(root), "--quiet"], check=False, capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr


def acms_many(root: Path, commands: Sequence[Sequence[str]]) -> list[subprocess.CompletedProcess[str]]:
    """Several reads at once, as an agent's parallel tool calls are: each must answer right."""
    procs = [subprocess.Popen([ACMS, *c, "-C", str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, text=True) for c in commands]
    done = []
    for c, p in zip(commands, procs):
        try:
            stdout, stderr = p.communicate(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        assert "Traceback" not in stderr, f"acms {' '.join(c)}:\n{stderr}"
        done.append(subprocess.CompletedProcess(c, p.returncode, stdout, stderr))
    return done


def live_project(parent: Path) -> Path:
    """The sample package with the polyglot project inside, indexed by ``acms index``."""
    root = parent / "proj"
    shutil.copytree(FIXTURES / "sample_project", root)
    shutil.copytree(FIXTURES / "polyglot_project", root / "poly")
    index(root)
    return root


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The projects the tests edit, indexed once per module."""
    return live_project(tmp_path_factory.mktemp("live"))


def copy_of(indexed: Path, parent: Path) -> Path:
    """A pristine indexed project (same folder name: same IRIs; mtimes kept: nothing looks changed)."""
    root = parent / indexed.name
    shutil.copytree(indexed, root)
    return root


# -- the CLI ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("edit", EDITS, ids=[e.name for e in EDITS])
def test_cli_answers_match_the_files_after_an_edit(edit: Edit, indexed: Path, tmp_path: Path) -> None:
    """Each read command refreshes first (a different one goes first per edit), then the others
    answer at once, side by side; all of them with the lines on disk."""
    root = copy_of(indexed, tmp_path)
    edit.apply(root)
    assert sorted(look(root)) == sorted(edit.changed)
    assemble = ["assemble", edit.task, "--budget", str(BUDGET)]
    search = ["search", edit.query, "--json", "-k", "15"]
    found_here, gone_here = edit.found[:CLI_DESCRIBES], edit.gone[:1]  # the servers describe them all
    describes = [["describe", e, "--json"] for e in [*(f.entity for f in found_here), *gone_here]]
    commands = [assemble, search, *describes]
    first = EDITS.index(edit) % len(commands)
    results = {first: acms_many(root, [commands[first]])[0]}
    assert not look(root), f"{commands[first][0]} answered without refreshing"
    rest = [i for i in range(len(commands)) if i != first]
    results.update(zip(rest, acms_many(root, [commands[i] for i in rest])))

    where = f"[cli {edit.name}] "
    out = results[0]
    assert out.returncode == 0, out.stderr
    assert "stale" not in out.stdout.split("\n", 2)[1] and "note: stale" not in out.stderr
    check_context(root, edit, check_markdown(root, out.stdout, where=where), where)
    out = results[1]
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert found["stale_files"] == [], found["stale_files"]
    check_hits(root, edit, found["hits"], "source_ref", where)
    for i, entity in enumerate([*(f.entity for f in found_here), *gone_here], start=2):
        out = results[i]
        if i - 2 < len(found_here):
            assert out.returncode == 0, f"{where}describe {entity}: {out.stderr}"
            about = json.loads(out.stdout)
            assert about["stale_files"] == []
            check_found(root, found_here[i - 2], about, where)
        else:
            assert (out.returncode == 2 and UNKNOWN in out.stderr) or (
                out.returncode == 0 and json.loads(out.stdout)["location"] is None), (
                f"{where}describe {entity} after it was removed: exit {out.returncode}, {out.stdout[:600]}")


def fails_check(root: Path, block: Block) -> bool:
    """Whether the checker rejects a block: a warn answer's stale lines must be caught by it."""
    try:
        check_blocks(root, [block])
    except AssertionError:
        return True
    return False


def test_cli_warn_names_the_stale_files_and_writes_nothing(indexed: Path, tmp_path: Path) -> None:
    """``--refresh warn`` answers from the index as it is and names the changed files (markdown line,
    JSON, stderr); its stale lines are caught by the checker (so it is not vacuous), a second warn
    read names them still (nothing was re-indexed), and an ``auto`` read then refreshes."""
    root = copy_of(indexed, tmp_path)
    edit = EDITS[0]
    edit.apply(root)
    changed = sorted(edit.changed)
    warn = ["--refresh", "warn"]
    md, found, about = acms_many(root, [["assemble", edit.task, "--budget", str(BUDGET), *warn],
                                        ["search", edit.query, "--json", *warn],
                                        ["describe", PARSE_HEADER.entity, "--json", *warn]])
    for out in (md, found, about):
        assert out.returncode == 0 and stale_named(out.stderr) == changed, out.stderr
    notice = md.stdout.splitlines()[1]
    assert notice.startswith("> stale: 2 files changed on disk since indexed") and stale_named(notice) == changed
    blocks = blocks_of_markdown(md.stdout)
    check_blocks(root, [b for b in blocks if b.path not in changed])  # the files that did not change: true
    assert [b for b in blocks if b.path in changed and fails_check(root, b)], "warn answered from fresh files"
    assert json.loads(found.stdout)["stale_files"] == changed
    described = json.loads(about.stdout)
    assert described["stale_files"] == changed
    with pytest.raises(AssertionError, match="does not open pkg/mod.py:20-23"):
        check_found(root, PARSE_HEADER, described, "")
    again = acms(root, "search", edit.query, "--json", *warn)  # nothing was re-indexed: still named
    assert json.loads(again.stdout)["stale_files"] == changed and stale_named(again.stderr) == changed
    assert sorted(look(root)) == changed
    out = acms(root, "describe", PARSE_HEADER.entity, "--json")  # auto: refreshes first
    check_found(root, PARSE_HEADER, json.loads(out.stdout), "[cli auto after warn] ")
    assert not look(root)


# -- acms mcp --------------------------------------------------------------------------------------
def text_of(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


async def tool(client: Client, name: str, **args: Any) -> str:
    result = await client.call_tool(name, args)
    assert not result.is_error, f"{name}{args}: {text_of(result)}"
    return text_of(result)


def mcp_session(root: Path, log: Path, flags: Sequence[str], body: Callable[[Client], Any],
                settings: Sequence[str] = (), timeout: float = 90.0) -> None:
    """One ``acms mcp`` over stdio for ``body``, stopped when it returns (or fails, or times out);
    its stderr goes to ``log`` and must hold no traceback."""
    params = StdioServerParameters(command=ACMS, args=[*settings, "mcp", *flags, "-C", str(root)], cwd=str(root))

    async def main() -> None:
        with log.open("w") as errlog, anyio.fail_after(timeout):
            async with Client(stdio_client(params, errlog=errlog)) as client:
                await body(client)

    try:
        anyio.run(main)
    finally:
        errors = log.read_text()
        assert "Traceback" not in errors, errors


async def mcp_answers(client: Client, root: Path, edit: Edit, where: str) -> None:
    """The assemble, search and describe tools after ``edit``: every path:line true on disk."""
    context = await tool(client, "assemble", task=edit.task, budget=BUDGET)
    assert context.startswith("# Context for:") and "> stale:" not in context.splitlines()[1], context[:300]
    check_context(root, edit, check_markdown(root, context, where=where), where)
    found = await tool(client, "search", query=edit.query, k=15)
    hits = json.loads(found)["hits"]  # a stale line first would not parse
    check_hits(root, edit, hits, "ref", where)
    for h in hits:  # the preview is the first line of the fragment: an outline's, or the lines' own
        path, start, end = parse_ref(h["ref"])
        window = [" ".join(x.split()) for x in (file_lines(root, path) or [])[start - 1:end]]
        preview = " ".join(h["preview"].rstrip("…").split())
        assert preview == path or any(preview in line for line in window), (
            f"{where}hit {h['ref']} previews {h['preview']!r}; on disk: {window[:3]!r}")
    for f in edit.found:
        check_found(root, f, json.loads(await tool(client, "describe", entity=f.entity)), where)
    for gone in edit.gone:  # refused, or described as gone (its history holds it): never at a line
        result = await client.call_tool("describe", {"entity": gone})
        assert UNKNOWN in text_of(result) if result.is_error else json.loads(text_of(result))["location"] is None, where


@pytest.mark.parametrize("watch", [True, False], ids=["watch", "no-watch"])
def test_mcp_tools_follow_every_edit(watch: bool, indexed: Path, tmp_path: Path) -> None:
    """One ``acms mcp`` through all the edits in turn. Watching, the watcher refreshes by itself
    (every other edit is read at once, racing it); with ``--no-watch`` the index stays stale until
    the tool call, which refreshes before it answers."""
    root = copy_of(indexed, tmp_path)

    async def body(client: Client) -> None:
        await tool(client, "search", query="warm up", k=1)
        if watch:
            await anyio.to_thread.run_sync(wait_for_watcher, root)
        for n, edit in enumerate(EDITS):
            edit.apply(root)
            where = f"[mcp {'watch' if watch else 'no-watch'} after {edit.name}] "
            if not watch:
                assert sorted(look(root)) == sorted(edit.changed), where
            elif n % 2 == 0:
                await anyio.to_thread.run_sync(wait_until_fresh, root)
            await mcp_answers(client, root, edit, where)
            assert not look(root), where

    mcp_session(root, tmp_path / "mcp.log", [] if watch else ["--no-watch"], body)


def test_mcp_warn_names_the_stale_files(indexed: Path, tmp_path: Path) -> None:
    """``refresh = warn``: each tool's text opens with the stale line, nothing is re-indexed, and once
    another process refreshes (``acms index``) the next call is whole and true again."""
    root = copy_of(indexed, tmp_path)
    edit = EDITS[0]
    changed = sorted(edit.changed)

    async def body(client: Client) -> None:
        edit.apply(root)
        for _ in range(2):
            context = await tool(client, "assemble", task=edit.task, budget=BUDGET)
            assert stale_named(context.splitlines()[1]) == changed
            blocks = blocks_of_markdown(context)
            check_blocks(root, [b for b in blocks if b.path not in changed])
            assert [b for b in blocks if b.path in changed and fails_check(root, b)], "warn answered from fresh files"
            found = await tool(client, "search", query=edit.query, k=5)
            first, _, rest = found.partition("\n")
            assert stale_named(first) == changed and json.loads(rest)["hits"]
            first, _, rest = (await tool(client, "describe", entity=PARSE_HEADER.entity)).partition("\n")
            assert stale_named(first) == changed and json.loads(rest)["name"] == PARSE_HEADER.entity
            assert sorted(await anyio.to_thread.run_sync(look, root)) == changed
        await anyio.to_thread.run_sync(index, root)
        await mcp_answers(client, root, edit, "[mcp warn after acms index] ")

    mcp_session(root, tmp_path / "mcp.log", ["--no-watch"], body, settings=["--set", "refresh=warn"])


# -- acms serve ------------------------------------------------------------------------------------
@dataclass
class Served:
    """A running ``acms serve`` on 127.0.0.1 over its own copy of the project."""

    url: str
    root: Path
    proc: subprocess.Popen[bytes]
    log: Path
    watch: bool

    def post(self, path: str, body: bytes, ctype: str) -> tuple[int, dict[str, str], bytes]:
        req = urllib.request.Request(self.url + path, data=body, headers={"Content-Type": ctype}, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=RUN_TIMEOUT) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def render(self, task: str) -> dict[str, Any]:
        request = {"version": "v0", "id": str(uuid.uuid4()), "intent": task, "request_id": "live",
                   "budgets": {"tokens_max": BUDGET, "time_ms": 30000}}
        status, _, body = self.post("/v0/render", json.dumps(request).encode(), "application/json")
        reply = json.loads(body)
        assert status == 200, reply
        return reply

    def select(self, query: str) -> tuple[list[dict[str, str]], str]:
        """SELECT rows (values only) and the ``Acms-Stale`` header ("" when absent)."""
        status, headers, body = self.post("/sparql", urllib.parse.urlencode({"query": query}).encode(),
                                          "application/x-www-form-urlencoded")
        assert status == 200, body
        rows = [{k: v["value"] for k, v in b.items()} for b in json.loads(body)["results"]["bindings"]]
        return rows, headers.get("Acms-Stale", headers.get("acms-stale", ""))


def start_serve(root: Path, log: Path, flags: Sequence[str] = (), settings: Sequence[str] = ()) -> Served:
    """``acms serve --port 0`` on 127.0.0.1; the URL from its first stderr line (bounded wait)."""
    errlog = log.open("wb")
    command = [ACMS, *settings, "serve", "--host", "127.0.0.1", "--port", "0", "--workers", "1", *flags,
               "-C", str(root)]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errlog, stdin=subprocess.DEVNULL)
    errlog.close()
    served = Served("", root, proc, log, "--no-watch" not in flags)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        m = re.search(r"serving (http://127\.0\.0\.1:\d+)", log.read_text())
        if m:
            served.url = m.group(1)
            try:
                with urllib.request.urlopen(served.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        return served
            except OSError:
                pass
        time.sleep(0.05)
    stop_serve(served)
    raise AssertionError(f"acms serve did not start: {log.read_text()}")


def stop_serve(served: Served) -> None:
    """Ctrl-C, then kill past a bounded wait; its stderr must hold no traceback."""
    if served.proc.poll() is None:
        served.proc.send_signal(signal.SIGINT)
        try:
            served.proc.wait(15)
        except subprocess.TimeoutExpired:
            served.proc.kill()
            served.proc.wait(15)
    errors = served.log.read_text()
    assert "Traceback" not in errors, errors


@pytest.fixture(scope="module", params=[True, False], ids=["watch", "no-watch"])
def served(request: pytest.FixtureRequest, indexed: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One ``acms serve`` per watch mode for the module, over its own copy of the project."""
    parent = tmp_path_factory.mktemp("serve")
    running = start_serve(copy_of(indexed, parent), parent / "serve.log", [] if request.param else ["--no-watch"])
    yield running
    stop_serve(running)


ENTITIES = ("SELECT ?name ?where ?kind WHERE { ?e uko:qualifiedName ?name ; uko:sourceRef ?where ; a ?kind "
            "FILTER(STRSTARTS(STR(?kind), STR(uko:))) }")


def serve_answers(served: Served, edit: Edit, where: str) -> None:
    """/v0/render's fragments and every entity /sparql places, true on disk after ``edit``."""
    reply = served.render(edit.task)
    assert not [w for w in reply["metrics"]["warnings"] if w.startswith("stale")], reply["metrics"]["warnings"]
    check_context(served.root, edit, check_reply(served.root, reply, where=where), where)
    rows, stale = served.select(ENTITIES)
    assert not stale, f"{where}Acms-Stale: {stale}"
    for row in rows:
        check_ref(served.root, row["where"], row["name"], row["kind"].rsplit("#", 1)[-1],
                  what=f"{where}/sparql places {row['name']} at {row['where']}")
    check_not_citing(edit, [r["where"] for r in rows], [r["name"] for r in rows], f"{where}/sparql ")
    names = {r["name"] for r in rows}
    assert {f.entity for f in edit.found} <= names, f"{where}/sparql lacks {({f.entity for f in edit.found}) - names}"


def test_serve_follows_every_edit(served: Served) -> None:
    """All the edits in turn on one server: watching, it refreshes by itself (every other edit read at
    once, racing it); with ``--no-watch`` each request refreshes before it answers."""
    watch = served.watch
    if watch:
        wait_for_watcher(served.root)
    for n, edit in enumerate(EDITS):
        edit.apply(served.root)
        where = f"[serve {'watch' if watch else 'no-watch'} after {edit.name}] "
        if not watch:
            assert sorted(look(served.root)) == sorted(edit.changed), where
        elif n % 2 == 0:
            wait_until_fresh(served.root)
        serve_answers(served, edit, where)
        assert not look(served.root), where


@pytest.fixture(scope="module")
def served_warn(indexed: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """An ``acms serve`` with ``refresh = warn`` (and no watcher, which would refresh anyway)."""
    parent = tmp_path_factory.mktemp("serve-warn")
    running = start_serve(copy_of(indexed, parent), parent / "serve.log", ["--no-watch"], ["--set", "refresh=warn"])
    yield running
    stop_serve(running)


def test_serve_warn_names_the_stale_files(served_warn: Served) -> None:
    """``refresh = warn``: the render reply's warnings and /sparql's ``Acms-Stale`` name the changed
    files, twice (nothing re-indexed); after ``acms index`` the answers are whole and true."""
    served, edit = served_warn, EDITS[0]
    edit.apply(served.root)
    changed = sorted(edit.changed)
    for _ in range(2):
        reply = served.render(edit.task)
        warned = [w for w in reply["metrics"]["warnings"] if w.startswith("stale:")]
        assert len(warned) == 1 and stale_named(warned[0]) == changed, reply["metrics"]["warnings"]
        blocks = blocks_of_reply(reply)
        check_blocks(served.root, [b for b in blocks if b.path not in changed])
        assert [b for b in blocks if b.path in changed and fails_check(served.root, b)], "warn answered fresh files"
        _, header = served.select("SELECT ?n WHERE { ?e uko:qualifiedName ?n } LIMIT 1")
        assert header.startswith("2; ") and sorted(header[3:].split(", ")) == changed, header
        assert sorted(look(served.root)) == changed
    index(served.root)
    serve_answers(served, edit, "[serve warn after acms index] ")
