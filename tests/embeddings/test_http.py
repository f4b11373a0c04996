from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from acms.errors import ProviderError, ProviderTimeout
from acms.embeddings.http import OpenAICompatibleProvider

from .support import conforms

DIMS = 4


def vector(text: str) -> list[float]:
    """Deterministic, deliberately not normalised."""
    return [float(len(text)), float(sum(map(ord, text)) % 97), 1.0, float(text.count("a"))]


@dataclass
class Server:
    url: str
    script: list[int] = field(default_factory=list)  # statuses to answer before the normal answers
    sleep_s: float = 0.0
    retry_after: str | None = None
    batches: list[int] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    auth: list[str | None] = field(default_factory=list)
    requests: int = 0
    body: bytes | None = None  # a fixed answer body, e.g. a malformed one


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server(url="")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                state.requests += 1
                status = state.script.pop(0) if state.script else 200
            if state.sleep_s:
                time.sleep(state.sleep_s)
            if self.path != "/v1/embeddings":
                status = 404
            if status != 200:
                extra = {"Retry-After": state.retry_after} if state.retry_after else {}
                self._send(status, b'{"error": {"message": "unavailable, try later"}}', extra)
                return
            with lock:
                state.batches.append(len(payload["input"]))
                state.models.append(payload["model"])
                state.auth.append(self.headers.get("Authorization"))
            data = [{"object": "embedding", "index": i, "embedding": vector(t)} for i, t in enumerate(payload["input"])]
            data.reverse()  # the index field, not the order, says which is which
            self._send(200, state.body or json.dumps({"object": "list", "data": data}).encode())

        def _send(self, status: int, body: bytes, extra: dict[str, str] | None = None) -> None:
            try:
                self.send_response(status)
                for name, value in (extra or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:  # the client gave up (timeout tests)
                pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def provider(url: str, **kwargs: object) -> OpenAICompatibleProvider:
    kwargs = {"backoff_s": 0.01, "timeout_s": 2.0, **kwargs}
    return OpenAICompatibleProvider(url, "test-embed", **kwargs)  # type: ignore[arg-type]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_embeds_in_batches_in_order_normalised(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    texts = [f"text number {i} " + "a" * i for i in range(7)]
    p = provider(server.url, batch_size=3)
    assert conforms(p)
    out = p.embed(texts)
    assert server.batches == [3, 3, 1]
    assert server.models == ["test-embed"] * 3
    assert server.auth == [None] * 3
    assert out.dtype == np.float32 and out.shape == (7, DIMS)
    expected = np.array([vector(t) for t in texts])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert p.dimensions == DIMS and p.model_id == "openai-compatible:test-embed"
    assert p.embed([]).shape == (0, DIMS)
    assert server.requests == 3


def test_bearer_token_from_the_named_variable(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACMS_TEST_KEY", "sk-secret")
    provider(server.url, api_key_env="ACMS_TEST_KEY").embed(["x"])
    assert server.auth == ["Bearer sk-secret"]


def test_dimensions_learnt_on_demand_and_checked(server: Server) -> None:
    p = provider(server.url)
    assert p.dimensions == DIMS and server.requests == 1
    with pytest.raises(ProviderError, match="4-dimensional vectors; 8 expected"):
        provider(server.url, dimensions=8).embed(["x"])


def test_retries_a_503_then_succeeds(server: Server) -> None:
    server.script = [503]
    out = provider(server.url, max_retries=2).embed(["hello"])
    assert server.requests == 2 and server.batches == [1]
    assert out.shape == (1, DIMS)


def test_backoff_doubles_and_retry_after_is_honoured(server: Server) -> None:
    server.script = [503, 502]
    start = time.monotonic()
    provider(server.url, max_retries=2, backoff_s=0.1).embed(["hello"])
    assert time.monotonic() - start >= 0.1 + 0.2
    server.script, server.retry_after = [429], "0.4"
    start = time.monotonic()
    provider(server.url, max_retries=1, backoff_s=0.01).embed(["hello"])
    assert time.monotonic() - start >= 0.4


def test_persistent_503_is_a_provider_error_naming_it(server: Server) -> None:
    server.script = [503] * 10
    with pytest.raises(ProviderError, match="HTTP 503 after 3 attempts: .*unavailable") as info:
        provider(server.url, max_retries=2).embed(["hello"])
    assert not isinstance(info.value, ProviderTimeout)
    assert info.value.exit_code == 7 and info.value.code == "PROVIDER_ERROR"
    assert server.requests == 3


def test_client_errors_are_not_retried(server: Server) -> None:
    server.script = [401]
    with pytest.raises(ProviderError, match="HTTP 401"):
        provider(server.url, max_retries=3).embed(["hello"])
    assert server.requests == 1


def test_slow_server_times_out(server: Server) -> None:
    server.sleep_s = 0.6
    start = time.monotonic()
    with pytest.raises(ProviderTimeout, match=r"within 0.2 s \(2 attempts\)") as info:
        provider(server.url, timeout_s=0.2, max_retries=1).embed(["hello"])
    assert info.value.code == "PROVIDER_TIMEOUT" and info.value.exit_code == 7
    assert server.requests == 2
    assert time.monotonic() - start < 1.5


def test_unreachable_server() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ProviderError, match="cannot reach") as info:
        provider(url, max_retries=1).embed(["hello"])
    assert not isinstance(info.value, ProviderTimeout)
    assert provider(url).healthcheck() is False


def test_healthcheck(server: Server) -> None:
    assert provider(server.url).healthcheck() is True
    server.script = [500]
    assert provider(server.url, max_retries=3).healthcheck() is False  # no retries in a healthcheck


def test_malformed_answers(server: Server) -> None:
    server.body = b"<html>gateway</html>"
    with pytest.raises(ProviderError, match="unexpected answer.*gateway"):
        provider(server.url).embed(["x"])
    server.body = json.dumps({"data": [{"index": 0, "embedding": [1, 2, 3, 4]}]}).encode()
    with pytest.raises(ProviderError, match="1 embeddings for 2 texts"):
        provider(server.url).embed(["x", "y"])


def test_bad_configuration() -> None:
    with pytest.raises(ProviderError, match="http"):
        OpenAICompatibleProvider("localhost:11434", "m")
    with pytest.raises(ProviderError):
        OpenAICompatibleProvider("http://localhost", "m", batch_size=0)
