"""``acms mcp`` at its edges, through the official SDK's client and a real ``acms mcp`` subprocess:
started before any index, an UPDATE through the ``sparql`` tool, an empty context's reason."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import LATEST_PROTOCOL_VERSION

from tests.conftest import FIXTURES, copy_of_indexed
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

        done = await anyio.run_process([ACMS, "index", str(root)], check=False)
        assert done.returncode == 0, done.stderr.decode()
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
def project(tmp_path_factory: pytest.TempPathFactory, _indexed_sample_template: Path) -> Path:
    return copy_of_indexed(_indexed_sample_template, tmp_path_factory.mktemp("mcp-edges"))


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


# -- JSON-RPC read strictly: raw messages on the wire ---------------------------------------------
TWICE = ('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"assemble","arguments":'
         '{"task":"parse header","privacy":"block","privacy":"allow"}}}')
DEEP = '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":' + "[" * 5000 + "]" * 5000 + "}"


def test_stdio_answers_a_key_twice_deep_nesting_and_bad_json_with_jsonrpc_errors(project: Path) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}}
    lines = [json.dumps(init), '{"jsonrpc":"2.0","method":"notifications/initialized"}', TWICE, DEEP,
             '{"jsonrpc":"2.0","id":9,"method":', json.dumps({"jsonrpc": "2.0", "id": 10, "method": "ping"})]
    proc = subprocess.Popen([ACMS, "mcp", "--no-watch"], cwd=project, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    answers: dict[object, dict[str, object]] = {}
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("\n".join(lines) + "\n")
        proc.stdin.flush()
        while len(answers) < 5:  # the ids 1, 7, 8, 9 and 10; stdin stays open until all are answered
            line = proc.stdout.readline()
            assert line, "acms mcp closed the wire before answering every message"
            message = json.loads(line)
            answers[message.get("id")] = message
        proc.stdin.close()
        proc.wait(timeout=30)
        assert proc.stderr is not None
        err = proc.stderr.read()
    finally:
        watchdog.cancel()
        proc.kill()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert answers[7]["error"] == {"code": -32600, "message": "acms: the message has the key 'privacy' twice in one object"}
    assert answers[8]["error"]["code"] == -32600 and "64 levels deep" in answers[8]["error"]["message"]
    assert answers[9]["error"]["code"] == -32700  # not JSON: a parse error, its id read from the text
    assert answers[10]["result"] == {} and "serverInfo" in answers[1]["result"]  # served on, around them
    assert "Traceback" not in err


def test_streamable_http_answers_a_key_twice_with_400(project: Path) -> None:
    proc = subprocess.Popen([ACMS, "mcp", "--http", "--port", "0", "--no-watch"], cwd=project,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        url = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", proc.stderr.readline())
        assert url, "acms mcp --http printed no URL"
        request = urllib.request.Request(url.group(1), data=TWICE.encode(), method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(request, timeout=30)
        assert err.value.code == 400
        assert json.loads(err.value.read())["error"]["message"].endswith("has the key 'privacy' twice in one object")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()


def test_mcp_reads_a_read_only_index(project: Path, tmp_path: Path) -> None:
    """The index bind-mounted read-only in the server's own mount namespace (a shared, mounted index)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare for a private read-only bind mount")
    if subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False).returncode != 0:
        pytest.skip("unshare -m is not permitted here")
    root = tmp_path / "copy"
    shutil.copytree(project, root)
    warmed = subprocess.run([ACMS, "search", "parse", "-C", str(root)], capture_output=True, timeout=120, check=False)
    assert warmed.returncode == 0  # its derived caches built while the index could still be written
    script = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"'
    params = StdioServerParameters(command="unshare", cwd=str(root), args=[
        "-m", "sh", "-c", script, str(root / ".acms"), ACMS, "mcp", "--no-watch"])

    async def body(client: Client) -> None:
        assert "def parse_header" in await call(client, "assemble", task="how are header lines parsed", budget=600)
        assert json.loads(await call(client, "search", query="parse header", k=2))["hits"]
        assert json.loads(await call(client, "sparql", query="ASK { ?s ?p ?o }"))["boolean"]

    session(params, body)
