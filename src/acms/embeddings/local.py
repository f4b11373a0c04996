"""An embedding provider for a model directory already on disk. Never downloads.

Uses ``model2vec`` (static embeddings, fast on CPU) when it is installed and loads the
directory, else ``sentence-transformers`` (on CPU); neither is a dependency of acms. The path
must be an existing directory: it is never taken for a hub name. ``HF_HUB_OFFLINE`` and
``TRANSFORMERS_OFFLINE`` are also set (when unset) before either library is imported here.

``model_id`` is ``local:<directory name>:<12 hex>``, the hex a SHA-256 over the names and sizes of
the directory's files and the content of its small JSON files (configs, tokenizer settings): a
different model in the same place is a different id.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from acms.embeddings.base import normalize_rows

from acms.errors import ProviderError

__all__ = ["LocalModelProvider"]

INSTALL_HINT = "install model2vec (pip install model2vec) or sentence-transformers"
_SMALL_JSON = 1 << 20


def _fingerprint(directory: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        rel = path.relative_to(directory).as_posix()
        size = path.stat().st_size
        digest.update(f"{rel}\0{size}\0".encode())
        if path.suffix == ".json" and size <= _SMALL_JSON:
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _import(name: str) -> Any | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


class LocalModelProvider:
    def __init__(self, path: str | os.PathLike[str], *, batch_size: int = 64) -> None:
        directory = Path(path).expanduser()
        if not directory.is_dir():
            raise ProviderError(f"no local embedding model directory at {directory}")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        self._batch_size = batch_size
        self._encode, self._backend = self._open(directory, batch_size)
        self._model_id = f"local:{directory.name}:{_fingerprint(directory)}"
        self._dimensions = int(self._run(["ping"]).shape[1])

    @staticmethod
    def _open(directory: Path, batch_size: int) -> tuple[Any, str]:
        """The first installed library that loads the directory: (encode function, its name)."""
        failures = []
        model2vec = _import("model2vec")
        if model2vec is not None:
            try:
                m2v = model2vec.StaticModel.from_pretrained(str(directory))
                return (lambda texts: m2v.encode(texts, batch_size=batch_size)), "model2vec"
            except Exception as exc:  # noqa: BLE001 - third-party loaders raise anything
                failures.append(f"model2vec: {exc}")
        st = _import("sentence_transformers")
        if st is not None:
            try:
                model = st.SentenceTransformer(str(directory), device="cpu")
                encode = lambda texts: model.encode(  # noqa: E731
                    texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False
                )
                return encode, "sentence-transformers"
            except Exception as exc:  # noqa: BLE001
                failures.append(f"sentence-transformers: {exc}")
        detail = "; ".join(failures) if failures else INSTALL_HINT
        raise ProviderError(f"cannot load the local embedding model at {directory}: {detail}")

    @property
    def backend(self) -> str:
        return self._backend

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def _run(self, texts: list[str]) -> np.ndarray:
        try:
            vectors = np.asarray(self._encode(texts), dtype=np.float32)
        except Exception as exc:  # noqa: BLE001
            raise ProviderError(f"the local embedding model failed: {exc}") from exc
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ProviderError(
                f"the local embedding model returned an array of shape {vectors.shape}"
            )
        return vectors

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self._dimensions), dtype=np.float32)
        return normalize_rows(self._run(texts))

    def healthcheck(self) -> bool:
        try:
            self._run(["ping"])
        except ProviderError:
            return False
        return True
