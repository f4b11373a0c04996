from __future__ import annotations

from pathlib import Path

import pytest

from acms.embeddings import PROVIDERS, make_provider

from acms.errors import ProviderError, UsageError
from acms.embeddings.http import OpenAICompatibleProvider
from acms.embeddings.lsa import LsaModel, LsaProvider


def test_unknown_name_lists_the_valid_ones() -> None:
    with pytest.raises(UsageError, match="unknown embedding provider 'bert'; choose one of: local, lsa, openai"):
        make_provider("bert", {})
    assert sorted(PROVIDERS) == ["local", "lsa", "openai"]


def test_lsa(tmp_path: Path) -> None:
    model = LsaModel.fit(["car engine oil", "pasta sauce basil", "car oil change"], dimensions=2)
    model.save(tmp_path / "lsa")
    provider = make_provider("lsa", {"model_dir": str(tmp_path / "lsa")})
    assert isinstance(provider, LsaProvider) and provider.model_id == model.model_id
    with pytest.raises(UsageError, match="needs option\\(s\\): model_dir"):
        make_provider("lsa", {})
    with pytest.raises(ProviderError, match="no LSA model"):
        make_provider("lsa", {"model_dir": str(tmp_path / "nothing")})


def test_openai_options_are_converted_and_checked() -> None:
    provider = make_provider(
        "openai",
        {"base_url": "http://127.0.0.1:9/v1", "model": "nomic-embed-text", "timeout_s": "0.5",
         "max_retries": "0", "batch_size": "16", "api_key_env": ""},
    )
    assert isinstance(provider, OpenAICompatibleProvider)
    assert provider.model_id == "openai-compatible:nomic-embed-text"
    assert provider._timeout_s == 0.5 and provider._max_retries == 0 and provider._batch_size == 16
    with pytest.raises(UsageError, match="bad timeout_s='soon'"):
        make_provider("openai", {"base_url": "http://x", "model": "m", "timeout_s": "soon"})
    with pytest.raises(UsageError, match="bad batch_size='0'"):
        make_provider("openai", {"base_url": "http://x", "model": "m", "batch_size": "0"})
    with pytest.raises(UsageError, match="unknown embedding provider option\\(s\\) modle; provider 'openai' takes: base_url, model"):
        make_provider("openai", {"base_url": "http://x", "modle": "m"})
    with pytest.raises(UsageError, match="needs option\\(s\\): model"):
        make_provider("openai", {"base_url": "http://x"})


def test_a_settings_bag_with_every_providers_options() -> None:
    bag = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "", "path": "", "dimensions": ""}
    provider = make_provider("openai", bag)
    assert isinstance(provider, OpenAICompatibleProvider) and provider._dimensions is None
    assert provider._api_key_env == ""  # empty: send no key


def test_local_path_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match="no local embedding model directory"):
        make_provider("local", {"path": str(tmp_path / "none")})


def test_providers_register_like_strategies_and_a_clash_is_an_error() -> None:
    from acms.embeddings.registry import BUILTIN_PROVIDERS, ProviderSpec, builtin_providers
    from acms.errors import ConfigError

    assert [s.name for s in BUILTIN_PROVIDERS] == list(PROVIDERS) and all(PROVIDERS.is_builtin(n) for n in PROVIDERS)
    registry = builtin_providers()
    mine = ProviderSpec("mine", "a test provider", (), {}, PROVIDERS["lsa"].build)
    registry.register("mine", mine)
    assert registry["mine"] is mine and len(registry) == len(PROVIDERS) + 1 and "mine" not in PROVIDERS
    with pytest.raises(ConfigError, match="embedding provider 'lsa' is already registered by a built-in one"):
        registry.register("lsa", ProviderSpec("lsa", "an impostor", (), {}, mine.build))
    with pytest.raises(ConfigError, match="'mine' is already registered by another one"):
        registry.register("mine", mine)
