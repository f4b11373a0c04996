"""An embedding provider for any OpenAI-compatible ``/embeddings`` endpoint.

Works with OpenAI, Ollama (``http://localhost:11434/v1``), vLLM, LM Studio and the like:
``POST {base_url}/embeddings`` with ``{"model": …, "input": [texts]}``, answer
``{"data": [{"index": i, "embedding": [...]}, …]}``. Standard library only (urllib).

- Authorization: ``Bearer $<api_key_env>`` when that variable is set (local servers need none).
  The key is read at each request and never appears in errors.
- Batches of ``batch_size`` texts, one request each, in order.
- Retries with exponential backoff (``backoff_s × 2^attempt``, or the server's ``Retry-After``
  when larger, capped at 30 s) on 429, 5xx, refused/reset connections and timeouts;
  ``max_retries`` retries after the first attempt. Other statuses fail at once.
- ``ProviderTimeout`` when the last attempt timed out; ``ProviderError`` otherwise, naming the
  status and a short excerpt of the body.
- ``timeout_s`` bounds each socket operation (connect, each read), not the whole request.
- ``dimensions``, when given, is checked against every answer (it is not sent: not every
  server accepts the field); otherwise it is learnt from the first answer. Reading the
  ``dimensions`` property before any ``embed`` therefore makes one request.
- Rows are put back in order by their ``index`` and L2-normalised.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from email.message import Message

import numpy as np

from acms.embeddings.base import normalize_rows

from acms.errors import ProviderError, ProviderTimeout

__all__ = ["OpenAICompatibleProvider"]

_RETRY_STATUSES = frozenset({408, 425, 429}) | frozenset(range(500, 600))
_MAX_RETRY_AFTER_S = 30.0
_EXCERPT = 200


def _excerpt(body: bytes) -> str:
    text = " ".join(body.decode("utf-8", "replace").split())
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"


def _retry_after(headers: Message | None) -> float:
    try:
        return min(float((headers or {}).get("Retry-After", 0)), _MAX_RETRY_AFTER_S)
    except (TypeError, ValueError):  # an HTTP date: fall back to our own backoff
        return 0.0


def _is_timeout(exc: BaseException) -> bool:
    return isinstance(exc, TimeoutError) or isinstance(getattr(exc, "reason", None), TimeoutError)


class OpenAICompatibleProvider:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = "OPENAI_API_KEY",
        dimensions: int | None = None,
        timeout_s: float = 10.0,
        max_retries: int = 3,
        batch_size: int = 64,
        backoff_s: float = 0.5,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ProviderError(f"embedding endpoint must be an http(s) URL, not {base_url!r}")
        if batch_size < 1 or max_retries < 0 or timeout_s <= 0:
            raise ProviderError("batch_size must be >= 1, max_retries >= 0 and timeout_s > 0")
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._api_key_env = api_key_env
        self._dimensions = dimensions
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._batch_size = batch_size
        self._backoff_s = backoff_s

    @property
    def model_id(self) -> str:
        return f"openai-compatible:{self._model}"

    @property
    def dimensions(self) -> int:
        if self._dimensions is None:
            self.embed(["ping"])  # learns it
        assert self._dimensions is not None
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed(texts, self._timeout_s, self._max_retries)

    def healthcheck(self) -> bool:
        try:
            self._embed(["ping"], min(self._timeout_s, 2.0), 0)
        except Exception:  # noqa: BLE001 - any failure means "not healthy"
            return False
        return True

    # -- internals ------------------------------------------------------------------------

    def _embed(self, texts: Sequence[str], timeout_s: float, max_retries: int) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self._dimensions or 0), dtype=np.float32)
        batches = [
            self._request(texts[i : i + self._batch_size], timeout_s, max_retries)
            for i in range(0, len(texts), self._batch_size)
        ]
        return normalize_rows(np.concatenate(batches))

    def _request(self, batch: list[str], timeout_s: float, max_retries: int) -> np.ndarray:
        body = json.dumps({"model": self._model, "input": batch}).encode("utf-8")
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "acms",
        }
        key = os.environ.get(self._api_key_env) if self._api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        for attempt in range(max_retries + 1):
            last = attempt == max_retries
            wait = self._backoff_s * 2**attempt
            request = urllib.request.Request(self._url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=timeout_s) as response:
                    payload = response.read()
                return self._parse(payload, len(batch))
            except urllib.error.HTTPError as exc:
                detail = _excerpt(exc.read() if exc.fp else b"")
                exc.close()
                if exc.code not in _RETRY_STATUSES or last:
                    raise ProviderError(
                        f"embedding endpoint {self._url} answered HTTP {exc.code}"
                        + (f" after {attempt + 1} attempts" if attempt else "")
                        + (f": {detail}" if detail else "")
                    ) from None
                wait = max(wait, _retry_after(exc.headers))
            except (OSError, http.client.HTTPException) as exc:  # refused, reset, timed out, cut
                if last:
                    attempts = f" ({attempt + 1} attempts)"
                    if _is_timeout(exc):
                        raise ProviderTimeout(
                            f"embedding endpoint {self._url} did not answer within "
                            f"{timeout_s:g} s{attempts}"
                        ) from None
                    reason = getattr(exc, "reason", exc)
                    raise ProviderError(
                        f"cannot reach embedding endpoint {self._url}: {reason}{attempts}"
                    ) from None
            time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _parse(self, payload: bytes, expected: int) -> np.ndarray:
        try:
            data = json.loads(payload)["data"]
            rows = sorted(data, key=lambda item: item["index"])
            indices = [item["index"] for item in rows]
            matrix = np.array([item["embedding"] for item in rows], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise ProviderError(
                f"embedding endpoint {self._url} sent an unexpected answer ({exc}): "
                f"{_excerpt(payload)}"
            ) from None
        if indices != list(range(expected)) or matrix.ndim != 2 or not np.isfinite(matrix).all():
            raise ProviderError(
                f"embedding endpoint {self._url} sent {len(indices)} embeddings for "
                f"{expected} texts, or malformed ones"
            )
        if self._dimensions is None:
            self._dimensions = int(matrix.shape[1])
        elif matrix.shape[1] != self._dimensions:
            raise ProviderError(
                f"embedding endpoint {self._url} sent {matrix.shape[1]}-dimensional vectors; "
                f"{self._dimensions} expected for model {self._model}"
            )
        return matrix
