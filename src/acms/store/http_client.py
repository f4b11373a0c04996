"""The wire to a SPARQL 1.1 engine: the Protocol (query, update) and the Graph Store Protocol (GET).

``requests`` (a keep-alive pool per client: an assembly sends a handful of queries, a connection each
would cost more than the queries) with acms's own retry loop: reads are retried on a connection error or
a 429/502/503/504, with a doubling back-off; an update only when it cannot have reached the engine
(the connection was refused) or the engine said it was unavailable (503), because re-sending one that
may have been applied is the caller's decision (the guarded push of :mod:`acms.store.remote` makes it).

Errors are mapped here, once: 400 is ``QuerySyntaxError`` with the engine's message, 401/403 names the
credentials setting, anything else is ``StoreError`` naming the URL.
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

if TYPE_CHECKING:  # requests is imported when a client is made: a local index never pays for it
    import requests

__all__ = ["Endpoints", "SparqlClient", "is_remote"]

_RETRY_STATUS = {429, 502, 503, 504}
_BODY_CHARS = 300  # of an engine's error page in a message


def is_remote(location: object) -> bool:
    """True for an ``http://`` or ``https://`` store location (a SPARQL engine, not a directory)."""
    return isinstance(location, str) and location.lower().startswith(("http://", "https://"))


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

    def query(self, text: str, accept: str, params: Sequence[tuple[str, str]] = ()) -> "requests.Response":
        """A query by POST (form-encoded: no URL length limit), dataset parameters alongside."""
        return self._send("POST", self.endpoints.query, idempotent=True, accept=accept,
                          data=[("query", text), *params])

    def update(self, text: str, params: Sequence[tuple[str, str]] = ()) -> None:
        self._send("POST", self.endpoints.update, idempotent=False, accept="*/*",
                   data=[("update", text), *params])

    def get_graph(self, graph: str, accept: str = "application/n-triples") -> bytes | None:
        """A named graph's triples through the Graph Store Protocol; None when the engine has no such graph."""
        response = self._send("GET", self.endpoints.data, idempotent=True, accept=accept, params={"graph": graph},
                              missing_ok=True)
        return None if response.status_code == 404 else response.content

    def _send(self, method: str, url: str, *, idempotent: bool, accept: str, missing_ok: bool = False,
              data: Sequence[tuple[str, str]] | None = None, params: Mapping[str, str] | None = None) -> "requests.Response":
        import requests

        delay, attempt = 0.25, 0
        while True:
            attempt += 1
            try:
                response = self._http.request(method, url, data=data, params=params, headers={"Accept": accept},
                                              timeout=self.endpoints.timeout)
            except requests.ConnectionError as exc:
                refused = "refused" in str(exc).lower()
                if attempt <= self.endpoints.retries and (idempotent or refused):
                    time.sleep(delay)
                    delay *= 2
                    continue
                raise StoreError(f"cannot reach the SPARQL store at {self.endpoints.display}: {_reason(exc)}") from None
            except requests.Timeout:
                if attempt <= self.endpoints.retries and idempotent:
                    time.sleep(delay)
                    delay *= 2
                    continue
                raise StoreError(f"the SPARQL store at {self.endpoints.display} did not answer within "
                                 f"{self.endpoints.timeout:g} s (setting store_timeout)") from None
            status = response.status_code
            if status < 300 or (missing_ok and status == 404):
                return response
            if status in _RETRY_STATUS and attempt <= self.endpoints.retries and (idempotent or status == 503):
                time.sleep(delay)
                delay *= 2
                continue
            raise _error(response, url, self.endpoints)

    def close(self) -> None:
        self._http.close()


def _reason(exc: Exception) -> str:
    text = str(exc)
    return "connection refused" if "refused" in text.lower() else text[:_BODY_CHARS]


def _error(response: "requests.Response", url: str, endpoints: Endpoints) -> Exception:
    body = " ".join(response.text.split())[:_BODY_CHARS]
    if response.status_code == 400:
        return QuerySyntaxError(f"the SPARQL store refused the request: {body}")
    if response.status_code in (401, 403):
        return StoreError(f"the SPARQL store at {endpoints.display} refused the credentials (HTTP "
                          f"{response.status_code}); put user:password or a full Authorization value in the "
                          f"environment variable {endpoints.auth_env} (setting store_auth_env)")
    where = urlsplit(url)._replace(query="").geturl()
    return StoreError(f"the SPARQL store answered HTTP {response.status_code} at {where}: {body}")
