"""Provider names → factories. ``make_provider("openai", {"base_url": …, "model": …})``.

Options arrive as strings (from ``acms.toml``, the environment or the CLI); each factory states
which it requires and accepts, converts them, and a mistake is a ``UsageError`` that names the
valid choices. Optional providers import their module only when chosen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from acms.embeddings.base import EmbeddingProvider
from acms.errors import UsageError

__all__ = ["PROVIDERS", "ProviderSpec", "make_provider"]


@dataclass(frozen=True)
class ProviderSpec:
    name: str
    summary: str
    required: tuple[str, ...]
    optional: Mapping[str, Callable[[str], object]]  # option → converter from its string form
    build: Callable[[Mapping[str, object]], EmbeddingProvider]


def _lsa(options: Mapping[str, object]) -> EmbeddingProvider:
    from acms.embeddings.lsa import LsaModel, LsaProvider

    return LsaProvider(LsaModel.load(str(options["model_dir"])))  # type: ignore[arg-type]


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


PROVIDERS: Mapping[str, ProviderSpec] = {
    spec.name: spec
    for spec in (
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
}


def make_provider(name: str, options: Mapping[str, str]) -> EmbeddingProvider:
    spec = PROVIDERS.get(name)
    if spec is None:
        raise UsageError(f"unknown embedding provider {name!r}; choose one of: {', '.join(sorted(PROVIDERS))}")
    accepted = (*spec.required, *spec.optional)
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise UsageError(
            f"embedding provider {name!r} does not take option(s) {', '.join(unknown)}; "
            f"it takes: {', '.join(accepted)}"
        )
    missing = [key for key in spec.required if not options.get(key)]
    if missing:
        raise UsageError(f"embedding provider {name!r} needs option(s): {', '.join(missing)}")
    converted: dict[str, object] = {key: options[key] for key in spec.required}
    for key, convert in spec.optional.items():
        if key in options:
            try:
                converted[key] = convert(options[key])
            except ValueError as exc:
                raise UsageError(f"embedding provider {name!r}: bad {key}={options[key]!r} ({exc})") from None
    return spec.build(converted)
