"""``acms mcp`` through the official SDK's client: a real ``acms mcp`` subprocess per session, started
from the configurations the README shows (``examples/mcp/``), on an indexed copy of the sample project."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client, StdioServerParameters

from acms.tokens import count
from tests.conftest import copy_of_indexed

EXAMPLES = Path(__file__).parents[2] / "examples" / "mcp"
BIN = Path(sys.executable).parent
READ_TOOLS = {"assemble", "search", "sparql", "describe", "history", "explore", "neighbourhood", "decisions",
              "stats", "tiers"}
REF = re.compile(r"pkg/mod\.py:\d+-\d+")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, _indexed_sample_template: Path) -> Path:
    return copy_of_indexed(_indexed_sample_template, tmp_path_factory.mktemp("mcp"))


def server_from(config: str, project: Path, *extra: str) -> StdioServerParameters:
    """The stdio server an MCP client starts from one of the example configurations: its command
    (``acms`` from this environment), its arguments with the project folder filled in, its cwd."""
    path = EXAMPLES / config
    data = yaml.safe_load(path.read_text()) if path.suffix == ".yaml" else json.loads(path.read_text())
    entry = data["mcpServers"][0] if isinstance(data["mcpServers"], list) else data["mcpServers"]["acms"]
    args = [a.replace("${workspaceFolder}", str(project)).replace("/path/to/your/project", str(project))
            for a in entry["args"]]
    command = shutil.which(entry["command"]) or str(BIN / entry["command"])
    return StdioServerParameters(command=command, args=[*args, *extra], env=entry.get("env") or None,
                                 cwd=str(project))


def session(params: StdioServerParameters | str, body: Callable[[Client], Awaitable[None]]) -> None:
    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(params) as client:
                await body(client)

    anyio.run(main)


def text_of(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


async def call(client: Client, tool: str, **args: Any) -> str:
    result = await client.call_tool(tool, args)
    assert not result.is_error, text_of(result)
    return text_of(result)


async def error_of(client: Client, tool: str, **args: Any) -> str:
    """The message of a tool error, after the SDK's "Error executing tool NAME: " prefix."""
    result = await client.call_tool(tool, args)
    text = text_of(result)
    assert result.is_error, text
    prefix = f"Error executing tool {tool}: "
    return text[len(prefix):] if text.startswith(prefix) else text


def test_claude_code_config_lists_tools_and_assembles_with_provenance(project: Path) -> None:
    async def body(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == READ_TOOLS  # no index tool unless --allow-index
        for tool in tools.values():
            assert tool.description and len(tool.description) > 60
            assert tool.input_schema["type"] == "object"
            assert tool.annotations is not None and tool.annotations.read_only_hint
        schema = tools["assemble"].input_schema
        assert schema["required"] == ["task"]
        assert set(schema["properties"]) == {"task", "budget", "strategy", "focus", "paths", "privacy", "lod", "format"}
        assert all(p.get("description") for p in schema["properties"].values())

        context = await call(client, "assemble", task="how are header lines parsed", budget=600)
        assert context.startswith("# Context for: how are header lines parsed")
        assert REF.search(context) and "def parse_header" in context
        assert count(context) <= 600
        reply = json.loads(await call(client, "assemble", task="how are header lines parsed", budget=300,
                                      format="json"))
        assert reply["fragments"] and sum(f["cost_tokens"] for f in reply["fragments"]) <= 300

    session(server_from("claude-code.mcp.json", project), body)


def test_every_tool_answers(project: Path) -> None:
    async def body(client: Client) -> None:
        hits = json.loads(await call(client, "search", query="parse header", k=3))["hits"]
        assert hits and hits[0]["name"].startswith("pkg.mod.Parser") and REF.match(hits[0]["ref"])

        rows = json.loads(await call(client, "sparql", query=(
            "SELECT ?c WHERE { GRAPH ?g { ?c a uko:Class } } ORDER BY ?c")))
        assert rows["form"] == "select" and len(rows["rows"]) == 2 and not rows["truncated"]
        capped = json.loads(await call(client, "sparql", query="SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } }",
                                       max_rows=3))
        assert len(capped["rows"]) == 3 and capped["truncated"]
        assert json.loads(await call(client, "sparql", query="ASK { GRAPH ?g { ?c a uko:Class } }"))["boolean"]
        plain = json.loads(await call(client, "sparql", query="SELECT ?c WHERE { ?c a uko:Class } ORDER BY ?c"))
        assert plain["rows"] == rows["rows"]  # the default graph is the current project, as in acms sparql

        about = json.loads(await call(client, "describe", entity="pkg.mod.Parser.parse_header"))
        assert about["kind"] == "Method" and REF.fullmatch(about["location"])
        assert about["callees"] and about["callees"][0].startswith("pkg.util.normalize")
        assert any(c.startswith("pkg.mod.Parser.parse_all") for c in about["callers"])
        assert about["defined_in"] == "pkg.mod.Parser" and "history" in about
        parser = json.loads(await call(client, "describe", entity="pkg/mod.py::Parser"))
        assert parser["counts"]["members"] == 3

        history = json.loads(await call(client, "history", entity="pkg.mod.Parser.parse_header"))
        assert history[0]["current"] and history[0]["kind"] == "Method"

        listed = json.loads(await call(client, "explore"))
        assert {"callers", "dead-functions"} <= {q["name"] for q in listed}
        assert list(next(q for q in listed if q["name"] == "callers")["params"]) == ["name"]
        callers = json.loads(await call(client, "explore", name="callers", params={"name": "normalize"}))
        assert [r["caller"] for r in callers["rows"]] == ["pkg.mod.Parser.parse_header"]

        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        assert "acms://ontology/uko.ttl" in uris and "acms://queries/explore/callers.rq" in uris
        ontology = await client.read_resource("acms://ontology/uko.ttl")
        assert "owl:Ontology" in ontology.contents[0].text
        query = await client.read_resource("acms://queries/explore/callers.rq")
        assert query.contents[0].text.startswith("# name: callers")

        stats = json.loads(await call(client, "stats"))
        assert stats["classes"]["Class"] == 2 and stats["quads"] > 0 and "python" in stats["languages"]
        tiers = json.loads(await call(client, "tiers"))
        assert set(tiers["tiers"]) == {"hot", "warm", "cold"} and set(tiers["policy"]) == set(tiers["tiers"])
        assert json.loads(await call(client, "decisions")) == []  # the sample records none
        around = await call(client, "neighbourhood", entity="pkg.mod.Parser", depth=1, format="nquads")
        assert "pkg.mod.Parser.parse_header>" in around and "pkg/mod.py#pkg.mod.Parser>" in around
        assert "no entity matches" in await error_of(client, "neighbourhood", entity="no_such_thing_anywhere")

    session(server_from("cursor.mcp.json", project), body)


def test_errors_are_tool_errors_and_the_server_keeps_serving(project: Path) -> None:
    async def body(client: Client) -> None:
        tiny = await error_of(client, "assemble", task="how are header lines parsed", budget=5)
        assert tiny.startswith("BUDGET_TOO_SMALL:") and "use a budget of at least" in tiny
        assert "budget" in await error_of(client, "assemble", task="x", budget=0)  # the input schema says no
        assert (await error_of(client, "describe", entity="parse_headr")).startswith(
            "INVALID_REQUEST: no entity named 'parse_headr'")
        assert "near matches: pkg.mod.Parser.parse_header" in await error_of(client, "describe", entity="parse_headr")
        assert (await error_of(client, "history", entity="no_such_thing")).startswith("INVALID_REQUEST:")
        service = await error_of(client, "sparql", query="SELECT * WHERE { SERVICE <http://example.org/s> { ?s ?p ?o } }")
        assert service.startswith("QUERY_REJECTED: SERVICE is refused")
        nested = await error_of(client, "sparql", query="SELECT * WHERE " + "{" * 3000 + "}" * 3000)
        assert nested.startswith("QUERY_REJECTED:")
        assert (await error_of(client, "sparql", query="SELECT ?x WHERE { oops")).startswith("QUERY_SYNTAX:")
        update = await error_of(client, "sparql", query="DELETE WHERE { GRAPH ?g { ?s ?p ?o } }")
        assert update == "QUERY_REJECTED: read-only: updates are not allowed here"
        assert "unknown saved query 'nope'" in await error_of(client, "explore", name="nope")
        assert "missing: name" in await error_of(client, "explore", name="callers")
        assert "index" in await error_of(client, "index")  # not offered without --allow-index
        # still serving, and the store still answers
        assert REF.search(await call(client, "assemble", task="normalize a header name", budget=400))

    session(server_from("generic.mcp.json", project), body)


def test_index_tool_and_a_writer_beside_the_server(indexed_sample: Path) -> None:
    """Many readers, one writer: `acms index` runs while the server is up, the next call sees it; with
    --allow-index the agent refreshes the index itself."""
    root = indexed_sample

    async def body(client: Client) -> None:
        assert "index" in {t.name for t in (await client.list_tools()).tools}
        assert "zebra_stripes" not in await call(client, "assemble", task="zebra stripes", budget=500)
        (root / "pkg" / "zebra.py").write_text("def zebra_stripes(n: int) -> int:\n    return n * 2\n")
        cli = subprocess.run([str(BIN / "acms"), "index", str(root), "--wait", "30"],
                             capture_output=True, text=True, timeout=120)
        assert cli.returncode == 0, cli.stderr
        assert "pkg/zebra.py:1-2" in await call(client, "assemble", task="zebra stripes", budget=500)
        (root / "pkg" / "zebra.py").write_text("def zebra_count(n: int) -> int:\n    return n * 3\n")
        report = json.loads(await call(client, "index"))
        assert report["files_indexed"] == 1
        about = json.loads(await call(client, "describe", entity="zebra_count"))
        assert about["location"] == "pkg/zebra.py:1-2"

    session(server_from("continue.acms.yaml", root, "--allow-index"), body)


def test_an_agent_records_a_decision_and_later_calls_see_it(indexed_sample: Path) -> None:
    """With --allow-record the agent records a decision; the same server lists it with its text, finds it,
    and shows it in the context of the code it is about. Its plan is created once, secrets are
    scrubbed, and a refused record leaves nothing behind."""
    token = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"

    async def body(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == READ_TOOLS | {"record_decision"}
        assert tools["record_decision"].annotations is not None
        assert not tools["record_decision"].annotations.read_only_hint
        text = f"Header names are lowercased once, in normalize, never again in parse_header. Test token {token}"
        recorded = json.loads(await call(client, "record_decision", text=text, plan="header parsing",
                                         about=["pkg.mod.Parser.parse_header"]))
        assert recorded["id"] == "D-1" and recorded["plan"] == "header parsing" and recorded["status"] == "accepted"
        assert recorded["about"] == ["pkg.mod.Parser.parse_header"]
        assert token not in recorded["text"] and "[REDACTED:github_token]" in recorded["text"]
        assert recorded["secrets_replaced"] == {"github_token": 1}

        listed = json.loads(await call(client, "decisions", about="pkg.mod.Parser.parse_header"))
        assert [d["id"] for d in listed] == ["D-1"] and listed[0]["text"] == recorded["text"]
        hits = json.loads(await call(client, "search", query="lowercased once", k=3))["hits"]
        assert hits[0]["ref"].startswith("decisions/D-1")
        context = await call(client, "assemble", task="how are header lines parsed", budget=1500)
        assert "def parse_header" in context and "lowercased once, in normalize" in context
        assert token not in context

        second = json.loads(await call(client, "record_decision", text="Parser keeps one state per line.",
                                       plan="header parsing", supersedes="D-1", status="proposed"))
        assert second["id"] == "D-2" and second["supersedes"] == ["D-1"] and "secrets_replaced" not in second
        refused = await error_of(client, "record_decision", text="About nothing known.", plan="another plan",
                                 about=["no_such_entity_anywhere"])
        assert refused.startswith("INVALID_REQUEST:") and "no_such_entity_anywhere" in refused
        plans = json.loads(await call(client, "sparql", query=(
            "SELECT ?name WHERE { GRAPH ?g { ?p a uko:Plan ; uko:name ?name } }")))
        assert [r["name"] for r in plans["rows"]] == ["header parsing"]  # made once; the refused one made none
        after = {d["id"]: d for d in json.loads(await call(client, "decisions"))}
        assert set(after) == {"D-1", "D-2"} and after["D-1"]["retired"] and not after["D-2"]["retired"]

        long = "Parser state is kept per line. " * 40  # 1,240 characters: cut in the list, whole on request
        await call(client, "record_decision", text=long, plan="header parsing")
        cut = json.loads(await call(client, "decisions"))[-1]["text"]
        assert len(cut) == 600 and cut.endswith("…") and long.startswith(cut[:-1])
        assert json.loads(await call(client, "decisions", text_chars=20000))[-1]["text"] == long.strip()
        assert {d["text"] for d in json.loads(await call(client, "decisions", text_chars=0))} == {""}

    session(server_from("claude-code.mcp.json", indexed_sample, "--allow-record"), body)


def test_streamable_http(project: Path) -> None:
    proc = subprocess.Popen([str(BIN / "acms"), "mcp", "--http", "--port", "0", "-C", str(project)],
                            stderr=subprocess.PIPE, text=True)
    try:
        url = None
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            line = proc.stderr.readline()  # type: ignore[union-attr]
            m = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
            url = m.group(1) if m else None
        assert url, "no URL printed"

        async def body(client: Client) -> None:
            assert READ_TOOLS == {t.name for t in (await client.list_tools()).tools}
            assert REF.search(await call(client, "assemble", task="how are header lines parsed", budget=500))

        session(url, body)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stderr.close()  # type: ignore[union-attr]


def test_no_index_is_a_one_line_note_and_the_server_still_starts(tmp_path: Path) -> None:
    """The agent must get a handshake (tests/mcp/test_mcp_edges.py has the client's side)."""
    out = subprocess.run([str(BIN / "acms"), "mcp", "-C", str(tmp_path)], capture_output=True, text=True,
                         timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 0 and out.stderr.startswith("acms mcp: note: no index at ") and "acms index" in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.splitlines()) == 1 and not out.stdout
