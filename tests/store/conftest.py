"""A real Oxigraph server (the ``oxigraph`` package's CLI, installed by the test extras) on a free port.

One server per test session: every test uses its own project name, and projects in one store are
separate by design (per-project graph names), which the tests check as well.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def oxigraph_binary() -> str:
    found = shutil.which("oxigraph") or str(Path(sys.executable).with_name("oxigraph"))
    if not Path(found).exists():
        pytest.fail("the oxigraph server CLI is missing: install the test extras (pip install -e '.[test]')")
    return found


@pytest.fixture(scope="session")
def oxigraph_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a running ``oxigraph serve`` (stopped at the end of the session)."""
    location = tmp_path_factory.mktemp("oxigraph-server")
    port = _free_port()
    log = location / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([oxigraph_binary(), "serve", "--location", str(location / "db"),
                                 "--bind", f"127.0.0.1:{port}"], stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            if requests.get(f"{url}/query", params={"query": "ASK {}"}, timeout=1).ok:
                break
        except requests.ConnectionError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"oxigraph serve did not start: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.05)
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def project_name() -> str:
    """A project name no other test uses in the shared server."""
    return f"p{uuid.uuid4().hex[:10]}"
