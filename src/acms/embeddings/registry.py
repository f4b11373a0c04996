"""Provider names → factories. ``make_provider("openai", {"base_url": …, "model": …})``.

``PROVIDERS`` is a registry (:class:`acms.registry.Registry`): the built-in providers register through
``register`` as a third party's would, and a name already taken is a ``ConfigError``.

Options arrive as strings (from ``acms.toml``, the environment or the CLI); each provider states
which it requires and accepts and how to convert them; a mistake is a ``UsageError`` that names
the valid choices. Optional providers import their module only when chosen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from acms.embeddings.base import EmbeddingProvider
from acms.errors import UsageError
from acms.registry import Registry

__all__ = ["PROVIDERS", "ProviderSpec", "builtin_providers", "make_provider"]


@dataclass(frozen=True)
class ProviderSpec:
    name: str
    summary: str
    required: tuple[str, ...]
    optional: Mapping[str, Callable[[str], object]]  # option → converter from its string form
    build: Callable[[Mapping[str, object]], EmbeddingProvider]


def _lsa(options: Mapping[str, object]) -> EmbeddingProvider:
    from acms.embeddings.lsa import LsaModel, LsaProvider

    return LsaProvider(LsaModel.load(Path(str(options["model_dir"]))))


def _openai(options: Mapping[str, object]) -> EmbeddingProvider:
    from acms.embeddings.http import OpenAICompatibleProvider

    return OpenAICompatibleProvider(**options)  # type: ignore[arg-type]


def _local(options: Mapping[str, object]) -> EmbeddingProvider:
    from acms.embeddings.local import LocalModelProvider

    return LocalModelProvider(**options)  # type: ignore[arg-type]


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(f"{value} is not positive")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(f"{value} is negative")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise ValueError(f"{value} is not positive")
    return value


BUILTIN_PROVIDERS = (
    ProviderSpec("lsa", "offline LSA model fitted on the project", ("model_dir",), {}, _lsa),
    ProviderSpec(
        "openai",
        "an OpenAI-compatible /embeddings endpoint (OpenAI, Ollama, vLLM, LM Studio)",
        ("base_url", "model"),
        {
            "api_key_env": str,
            "dimensions": _positive_int,
            "timeout_s": _positive_float,
            "max_retries": _non_negative_int,
            "batch_size": _positive_int,
            "backoff_s": float,
        },
        _openai,
    ),
    ProviderSpec(
        "local",
        "a model directory on disk (needs model2vec or sentence-transformers)",
        ("path",),
        {"batch_size": _positive_int},
        _local,
    ),
)


def builtin_providers() -> Registry[ProviderSpec]:
    return Registry.of_builtins("embedding provider", {spec.name: spec for spec in BUILTIN_PROVIDERS})


PROVIDERS = builtin_providers()


def make_provider(name: str, options: Mapping[str, str]) -> EmbeddingProvider:
    """Build provider ``name`` from string options.

    ``options`` may be a settings bag holding every provider's options: those of other providers
    are ignored, and an empty value counts as absent. An option no provider knows is a
    ``UsageError`` (a typo), as are a missing required option and a value that does not convert.
    """
    spec = PROVIDERS.get(name)
    if spec is None:
        valid = ", ".join(sorted(PROVIDERS))
        raise UsageError(f"unknown embedding provider {name!r}; choose one of: {valid}")
    accepted = (*spec.required, *spec.optional)
    known = {key for other in PROVIDERS.values() for key in (*other.required, *other.optional)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise UsageError(
            f"unknown embedding provider option(s) {', '.join(unknown)}; "
            f"provider {name!r} takes: {', '.join(accepted)}"
        )
    missing = [key for key in spec.required if not options.get(key)]
    if missing:
        raise UsageError(f"embedding provider {name!r} needs option(s): {', '.join(missing)}")
    converted: dict[str, object] = {key: options[key] for key in spec.required}
    for key, convert in spec.optional.items():
        value = options.get(key)
        if value is None or (value == "" and key != "api_key_env"):
            continue
        try:
            converted[key] = convert(value)
        except ValueError as exc:
            raise UsageError(f"embedding provider {name!r}: bad {key}={value!r} ({exc})") from None
    return spec.build(converted)
