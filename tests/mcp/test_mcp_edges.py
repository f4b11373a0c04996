"""``acms mcp`` at its edges, through the official SDK's client and a real ``acms mcp`` subprocess:
started before any index, an UPDATE through the ``sparql`` tool, an empty context's reason."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import FIXTURES, run_index
from tests.mcp.test_mcp_server import call, error_of, session

ACMS = str(Path(sys.executable).parent / "acms")


def stdio(project: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=ACMS, args=["mcp", "--no-watch", *extra], cwd=str(project))


def test_mcp_without_an_index_shakes_hands_names_acms_index_and_answers_once_it_exists(tmp_path: Path) -> None:
    root = tmp_path / "sample"
    shutil.copytree(FIXTURES / "sample_project", root)

    async def body(client: Client) -> None:
        tools = {t.name for t in (await client.list_tools()).tools}  # the handshake and the listing work
        assert {"assemble", "search", "sparql", "describe", "history", "explore"} <= tools
        for tool, args in (("assemble", {"task": "parse header"}), ("search", {"query": "parse"}),
                           ("sparql", {"query": "ASK { ?s ?p ?o }"}), ("describe", {"entity": "pkg.mod"}),
                           ("history", {"entity": "pkg.mod"}), ("explore", {"name": "callers",
                                                                            "params": {"name": "x"}})):
            message = await error_of(client, tool, **args)
            assert message.startswith("STORE_MISSING: ") and "acms index" in message, (tool, message)
        listed = json.loads(await call(client, "explore"))  # the saved queries need no index
        assert any(q["name"] == "callers" for q in listed)

        done = subprocess.run([ACMS, "index", str(root)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        context = await call(client, "assemble", task="how are header lines parsed", budget=600)
        assert "def parse_header" in context  # the same server, no restart
        assert json.loads(await call(client, "sparql", query="ASK { ?s ?p ?o }"))["boolean"]

    session(stdio(root), body)


def test_mcp_allow_index_without_an_index_makes_the_first_one_with_the_index_tool(tmp_path: Path) -> None:
    root = tmp_path / "sample"
    shutil.copytree(FIXTURES / "sample_project", root)

    async def body(client: Client) -> None:
        assert (await error_of(client, "search", query="parse")).startswith("STORE_MISSING: ")
        report = json.loads(await call(client, "index"))
        assert report["files_indexed"] >= 5
        assert "def parse_header" in await call(client, "assemble", task="how are header lines parsed", budget=600)

    session(stdio(root, "--allow-index"), body)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mcp-edges") / "sample"
    shutil.copytree(FIXTURES / "sample_project", root)
    run_index(root)
    return root


def test_mcp_refuses_an_update_as_an_update_and_says_why_a_context_is_empty(project: Path) -> None:
    async def body(client: Client) -> None:
        for update in ("INSERT DATA { <urn:a> <urn:b> <urn:c> }",
                       "PREFIX x: <http://x/> DELETE WHERE { ?s ?p ?o }", "DROP ALL"):
            message = await error_of(client, "sparql", query=update)
            assert message == "QUERY_REJECTED: read-only: updates are not allowed here", message
        assert json.loads(await call(client, "sparql", query="ASK { ?s ?p ?o }"))["boolean"]  # nothing written

        text = await call(client, "assemble", task="parse header", focus=["parse_headr"], budget=500)
        assert "the focus 'parse_headr' matches no entity in the index" in text.splitlines()[1]
        assert "did you mean: pkg.mod.Parser.parse_header" in text
        reply = json.loads(await call(client, "assemble", task="parse header", paths=["nomatch/**"],
                                      format="json", budget=500))
        assert not reply["fragments"]
        assert reply["metrics"]["warnings"][0].startswith("No context: the path filter 'nomatch/**' matches none")
        text = await call(client, "assemble", task="zzqqxx vvbbnnmm", budget=500)
        assert "No context: nothing in the index matches the task's words" in text

    session(stdio(project), body)
