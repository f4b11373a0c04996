from __future__ import annotations

import importlib.util
import json
import os
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from acms.errors import ProviderError
from acms.embeddings.local import LocalModelProvider

from .support import conforms

NEITHER = all(importlib.util.find_spec(m) is None for m in ("model2vec", "sentence_transformers"))


@pytest.fixture
def offline_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the provider set HF_*_OFFLINE itself, and restore the environment afterwards."""
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.setenv(name, "0")
        monkeypatch.delenv(name)


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "tiny-model"
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps({"dim": 3}))
    (directory / "model.safetensors").write_bytes(b"\0" * 64)
    return directory


class FakeModel:
    calls: list[tuple[str, ...]] = []

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    def encode(self, texts: list[str], **kwargs: object) -> np.ndarray:
        if self.fail:
            raise RuntimeError("out of memory")
        FakeModel.calls.append(tuple(kwargs))
        return np.array([[len(t), 1.0, 2.0] for t in texts])


def fake_module(name: str, loaded: list[str], model: FakeModel) -> types.ModuleType:
    module = types.ModuleType(name)

    def load(path: str, **kwargs: object) -> FakeModel:
        assert os.environ["HF_HUB_OFFLINE"] == "1"
        loaded.append(path)
        return model

    if name == "model2vec":
        module.StaticModel = types.SimpleNamespace(from_pretrained=load)  # type: ignore[attr-defined]
    else:
        module.SentenceTransformer = load  # type: ignore[attr-defined]
    return module


@pytest.mark.parametrize("backend", ["model2vec", "sentence_transformers"])
def test_adapter_with_a_stand_in_library(
    backend: str, model_dir: Path, offline_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded: list[str] = []
    for name in ("model2vec", "sentence_transformers"):
        monkeypatch.setitem(sys.modules, name, fake_module(name, loaded, FakeModel()) if name == backend else None)
    provider = LocalModelProvider(model_dir)
    assert loaded == [str(model_dir)]
    assert provider.backend == backend.replace("_", "-")
    assert conforms(provider) and provider.dimensions == 3 and provider.healthcheck()
    out = provider.embed(["ab", "abcd"])
    assert out.dtype == np.float32 and out.shape == (2, 3)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-6)
    assert provider.embed([]).shape == (0, 3)
    assert provider.model_id.startswith("local:tiny-model:")
    (model_dir / "config.json").write_text(json.dumps({"dim": 3, "other": True}))
    assert LocalModelProvider(model_dir).model_id != provider.model_id


def test_failures_become_provider_errors(model_dir: Path, offline_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    model = FakeModel()
    monkeypatch.setitem(sys.modules, "model2vec", fake_module("model2vec", [], model))
    provider = LocalModelProvider(model_dir)
    model.fail = True
    with pytest.raises(ProviderError, match="out of memory"):
        provider.embed(["x"])
    assert provider.healthcheck() is False


def test_missing_directory_is_never_a_hub_name(tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match="no local embedding model directory"):
        LocalModelProvider(tmp_path / "sentence-transformers" / "all-MiniLM-L6-v2")


@pytest.mark.skipif(not NEITHER, reason="model2vec or sentence-transformers is installed")
def test_without_either_library_the_error_says_what_to_install(model_dir: Path) -> None:
    with pytest.raises(ProviderError, match="install model2vec .* or sentence-transformers"):
        LocalModelProvider(model_dir)


def test_real_model2vec_on_a_model_built_here(tmp_path: Path, offline_env: None) -> None:
    model2vec = pytest.importorskip("model2vec")
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    vocab = {"[UNK]": 0, "car": 1, "engine": 2, "pasta": 3}
    tokenizer = tokenizers.Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    vectors = np.array([[0, 0], [1, 0], [0.9, 0.1], [0, 1]], dtype=np.float32)
    model2vec.StaticModel(vectors, tokenizer, config={"normalize": True}).save_pretrained(tmp_path / "m")
    provider = LocalModelProvider(tmp_path / "m")
    assert provider.backend == "model2vec" and provider.dimensions == 2
    out = provider.embed(["car", "engine", "pasta"])
    assert out[0] @ out[1] > 0.9 > out[0] @ out[2]


def test_falls_back_to_sentence_transformers(model_dir: Path, offline_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = types.ModuleType("model2vec")

    def refuse(path: str) -> None:
        raise ValueError("not a model2vec model")

    broken.StaticModel = types.SimpleNamespace(from_pretrained=refuse)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "model2vec", broken)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ProviderError, match="model2vec: not a model2vec model"):
        LocalModelProvider(model_dir)
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake_module("sentence_transformers", [], FakeModel()))
    assert LocalModelProvider(model_dir).backend == "sentence-transformers"
