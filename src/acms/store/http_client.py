"""The wire to a SPARQL 1.1 engine: the Protocol (query, update) and the Graph Store Protocol (GET).

``requests`` (a keep-alive pool per client: an assembly sends a handful of queries, a connection each
would cost more than the queries) with acms's own retry loop: reads are retried on a connection error or
a 429/502/503/504, with a doubling back-off; an update only when it cannot have reached the engine
(the connection was refused) or the engine said it was unavailable (503), because re-sending one that
may have been applied is the caller's decision (the guarded push of :mod:`acms.store.remote` makes it).

Errors are mapped here, once: 400 is ``QuerySyntaxError`` with the engine's message, 401/403 names the
credentials setting, anything else is ``StoreError`` naming the URL, and a request given up says what was
tried: how many times, over how long, with which timeout.

An ``https://`` store is checked once per client before its first request (:func:`check_tls`): a TLS
handshake with a plain-HTTP server (the Oxigraph server, for one) is not refused, it waits for bytes
that never come, so every request used to wait out its whole timeout and its retries (four minutes at
the defaults). The check waits for the server's handshake answer a few round trips of the TCP connect
(at least a second), and when none comes asks the port in plain HTTP, to say which it is.
"""

from __future__ import annotations

import base64
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from acms.errors import ConfigError, QuerySyntaxError, StoreError
from acms.paths import is_remote
from acms.sparql.runner import QueryLimits, memory_limit_error, time_limit_error

if TYPE_CHECKING:  # requests is imported when a client is made: a local index never pays for it
    import requests

__all__ = ["Endpoints", "SparqlClient"]

_RETRY_STATUS = {429, 502, 503, 504}
_BODY_CHARS = 300  # of an engine's error page in a message
_HANDSHAKE_RTTS = 20  # a TLS server answers a ClientHello in one round trip; wait this many connects' worth
_HANDSHAKE_MIN = 1.0  # seconds, at least


@dataclass(frozen=True)
class Endpoints:
    """Where a SPARQL engine answers. ``url`` is the store's base; the three services default to the
    Oxigraph server's paths under it (``/query``, ``/update``, ``/store``) and each can be set alone."""

    url: str
    query_url: str = ""
    update_url: str = ""
    data_url: str = ""
    auth_env: str = "ACMS_STORE_AUTH"
    timeout: float = 60.0
    retries: int = 3

    def __post_init__(self) -> None:
        for name in ("url", "query_url", "update_url", "data_url"):
            value = getattr(self, name)
            if value and not is_remote(value):
                raise ConfigError(f"setting store{'_' + name if name != 'url' else ''} expects an http(s):// URL, "
                                  f"got {value!r}")

    def _under(self, path: str) -> str:
        parts = urlsplit(self.url)
        return urlunsplit(parts._replace(path=parts.path.rstrip("/") + path, query="", fragment=""))

    @property
    def query(self) -> str:
        return self.query_url or self._under("/query")

    @property
    def update(self) -> str:
        return self.update_url or self._under("/update")

    @property
    def data(self) -> str:
        return self.data_url or self._under("/store")

    @property
    def display(self) -> str:
        """The base URL without credentials, for messages and cache keys."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        return urlunsplit(parts._replace(netloc=netloc))

    def authorization(self) -> str | None:
        """The Authorization header from the environment variable ``auth_env``: ``user:password``
        (HTTP Basic) or a full header value (``Bearer …``). Never read from a file or a setting."""
        value = os.environ.get(self.auth_env, "") if self.auth_env else ""
        if not value:
            return None
        if " " in value.split(":", 1)[0]:  # "Bearer abc", "Basic abc="
            return value
        user, _, password = value.partition(":")
        return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


class SparqlClient:
    """One keep-alive HTTP session to one engine."""

    def __init__(self, endpoints: Endpoints) -> None:
        import requests

        self.endpoints = endpoints
        self._http = requests.Session()
        self._http.headers["User-Agent"] = "acms"
        auth = endpoints.authorization()
        if auth:
            self._http.headers["Authorization"] = auth
        self._tls_checked = False

    def query(self, text: str, accept: str, params: Sequence[tuple[str, str]] = (),
              limits: QueryLimits | None = None) -> "requests.Response":
        """A query by POST (form-encoded: no URL length limit), dataset parameters alongside. ``limits``
        (a user's query): one try, waited for at most its time limit, which a timeout is reported as."""
        return self._send("POST", self.endpoints.query, idempotent=True, accept=accept,
                          data=[("query", text), *params], limits=limits)

    def update(self, text: str, params: Sequence[tuple[str, str]] = ()) -> None:
        self._send("POST", self.endpoints.update, idempotent=False, accept="*/*",
                   data=[("update", text), *params])

    def get_graph(self, graph: str, accept: str = "application/n-triples") -> bytes | None:
        """A named graph's triples through the Graph Store Protocol; None when the engine has no such graph."""
        response = self._send("GET", self.endpoints.data, idempotent=True, accept=accept, params={"graph": graph},
                              missing_ok=True)
        return None if response.status_code == 404 else response.content

    def _send(self, method: str, url: str, *, idempotent: bool, accept: str, missing_ok: bool = False,
              data: Sequence[tuple[str, str]] | None = None, params: Mapping[str, str] | None = None,
              limits: QueryLimits | None = None) -> "requests.Response":
        import requests

        if not self._tls_checked and urlsplit(url).scheme == "https":
            if not requests.utils.get_environ_proxies(url):  # through a proxy, the proxy makes the handshake
                check_tls(url, self.endpoints.timeout, self.endpoints.display)
            self._tls_checked = True
        timeout = self.endpoints.timeout if limits is None else limits.timeout_s
        retries = self.endpoints.retries if limits is None else 0
        delay, attempt, began = 0.25, 0, time.monotonic()
        while True:
            attempt += 1
            try:
                response = self._http.request(method, url, data=data, params=params, headers={"Accept": accept},
                                              timeout=timeout, stream=limits is not None)
            except requests.exceptions.SSLError as exc:  # not transient: a retry meets the same server
                raise StoreError(f"no TLS connection to the SPARQL store at {self.endpoints.display}: "
                                 f"{_reason(exc)}") from None
            except requests.ConnectionError as exc:
                refused = "refused" in str(exc).lower()
                if attempt <= retries and (idempotent or refused):
                    time.sleep(delay)
                    delay *= 2
                    continue
                raise StoreError(f"cannot reach the SPARQL store at {self.endpoints.display}: {_reason(exc)}"
                                 f"{_tries(attempt, began)}") from None
            except requests.Timeout:
                if limits is not None:
                    raise time_limit_error(limits.timeout_s) from None
                if attempt <= retries and idempotent:
                    time.sleep(delay)
                    delay *= 2
                    continue
                raise StoreError(f"the SPARQL store at {self.endpoints.display} did not answer within "
                                 f"{timeout:g} s (setting store_timeout){_tries(attempt, began)}") from None
            status = response.status_code
            if status < 300 or (missing_ok and status == 404):
                return response
            if status in _RETRY_STATUS and attempt <= retries and (idempotent or status == 503):
                time.sleep(delay)
                delay *= 2
                continue
            raise _error(response, url, self.endpoints, _tries(attempt, began))

    def close(self) -> None:
        self._http.close()


def bounded_body(response: "requests.Response", limits: QueryLimits, began: float) -> bytes:
    """A user's query's answer, read as it comes: no more than its memory bound, no later than its time
    limit from ``began`` (a timeout only bounds each read); the connection is closed when either passes,
    which is all the engine is told."""
    import requests

    bound, deadline = limits.memory_mb << 20, began + limits.timeout_s
    body = bytearray()
    try:
        for chunk in response.iter_content(1 << 16):
            body += chunk
            if len(body) > bound:
                raise memory_limit_error(limits.memory_mb)
            if time.monotonic() > deadline:
                raise time_limit_error(limits.timeout_s)
    except requests.RequestException:  # a read timed out, or the connection broke, midway
        if time.monotonic() > deadline:
            raise time_limit_error(limits.timeout_s) from None
        raise StoreError("the SPARQL store's answer broke off midway") from None
    finally:
        response.close()
    return bytes(body)


def _tries(attempts: int, began: float) -> str:
    """What was tried, for a message: nothing when it was one try."""
    if attempts == 1:
        return ""
    return f" ({attempts} tries over {time.monotonic() - began:.1f} s; setting store_retries)"


def check_tls(url: str, timeout: float, store: str = "") -> None:
    """Fail at once, saying why, when ``url``'s server does not speak TLS: its handshake is waited for
    ``_HANDSHAKE_RTTS`` times the TCP connect's time (at least ``_HANDSHAKE_MIN`` s, at most ``timeout``);
    ``store``: the store's URL, shown with ``http://`` when the server turns out to speak plain HTTP.
    Only whether the server speaks TLS is checked here; its certificate is checked by the request."""
    import socket
    import ssl

    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port or 443
    where = f"{host}:{port}"
    began = time.monotonic()
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError:
        return  # the request says what is wrong with the connection (refused, unknown host), with its retries
    connect = time.monotonic() - began
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    wait = min(timeout, max(_HANDSHAKE_MIN, _HANDSHAKE_RTTS * connect))
    try:
        sock.settimeout(wait)
        with context.wrap_socket(sock, server_hostname=host):
            return
    except (TimeoutError, socket.timeout):
        problem = f"the server at {where} did not answer a TLS handshake within {wait:.1f} s"
    except (ssl.SSLError, OSError) as exc:
        problem = f"the TLS handshake with {where} failed ({getattr(exc, 'reason', None) or exc})"
    finally:
        sock.close()
    if _speaks_plain_http(host, port, wait):
        plain = urlsplit(store or url)._replace(scheme="http", query="", fragment="")
        raise StoreError(f"{problem}: it speaks plain HTTP, not TLS; use {plain.geturl()} as the store")
    raise StoreError(f"{problem}; check that the store's URL and port are those of an https:// server")


def _speaks_plain_http(host: str, port: int, timeout: float) -> bool:
    """Whether the port answers a plain HTTP request with an HTTP status line."""
    import socket

    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(f"HEAD / HTTP/1.0\r\nHost: {host}\r\n\r\n".encode("ascii"))
            return sock.recv(16).startswith(b"HTTP/")
    except OSError:
        return False


def _reason(exc: Exception) -> str:
    text = str(exc)
    return "connection refused" if "refused" in text.lower() else text[:_BODY_CHARS]


def _error(response: "requests.Response", url: str, endpoints: Endpoints, tried: str = "") -> Exception:
    body = " ".join(response.text.split())[:_BODY_CHARS]
    if response.status_code == 400:
        return QuerySyntaxError(f"the SPARQL store refused the request: {body}")
    if response.status_code in (401, 403):
        return StoreError(f"the SPARQL store at {endpoints.display} refused the credentials (HTTP "
                          f"{response.status_code}); put user:password or a full Authorization value in the "
                          f"environment variable {endpoints.auth_env} (setting store_auth_env)")
    where = urlsplit(url)._replace(query="").geturl()
    return StoreError(f"the SPARQL store answered HTTP {response.status_code} at {where}{tried}: {body}")
