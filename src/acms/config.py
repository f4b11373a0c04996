"""One frozen settings object; every field carries its help text.

Precedence: defaults < ``acms.toml`` or ``[tool.acms]`` in pyproject.toml at the project root <
``ACMS_*`` environment variables < CLI flags (applied by the CLI with ``Settings.merged``).
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from acms.errors import ConfigError


def _setting(default: Any, help: str) -> Any:  # noqa: A002 - mirrors click's naming
    if isinstance(default, (list, dict, tuple)):
        return field(default_factory=lambda: default, metadata={"help": help})
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class Settings:
    store: str = _setting(".acms", "Where the on-disk index lives, relative to the project root.")
    max_file_bytes: int = _setting(256 * 1024, "Files larger than this are skipped (too-large).")
    max_total_bytes: int = _setting(0, "Stop indexing files after this many bytes in all (0 = no cap).")
    exclude: tuple[str, ...] = _setting((), "Extra gitignore-style patterns to skip.")
    include_hidden: bool = _setting(False, "Index hidden files and directories too.")
    window_lines: int = _setting(60, "Lines per fragment for files without a language extractor.")
    project_name: str = _setting("", "Project name used in entity IRIs (default: the root folder's name).")
    embedding_provider: str = _setting("lsa", "Embedding provider: lsa (offline, fitted on the corpus), openai, local.")
    embedding_dims: int = _setting(192, "Dimensions of the default LSA embeddings.")
    embedding_base_url: str = _setting("http://127.0.0.1:11434/v1", "Base URL of an OpenAI-compatible embeddings endpoint.")
    embedding_model: str = _setting("", "Model name for the openai provider, or a model directory for the local provider.")
    embedding_api_key_env: str = _setting("OPENAI_API_KEY", "Environment variable holding the API key for the openai provider.")
    embed_on_index: bool = _setting(True, "Compute vectors for new fragments at the end of `acms index`.")
    hot_commits: int = _setting(10, "Tier policy: entities touched by the last N ingested commits are hot.")
    hot_days: float = _setting(7.0, "Tier policy: entities changed (a commit or a re-index replaced them) in the last N days are hot.")
    hot_use_days: float = _setting(3.0, "Tier policy: entities used in an assembled context in the last N days are hot.")
    hot_max: int = _setting(500, "Tier policy: at most this many hot entities, the most recently active first.")
    record_use: bool = _setting(True, "Record which entities assembled contexts used (meta graph), for the hot tier.")
    store_secrets: bool = _setting(False, "Store file text with its secrets in clear (default: secrets are replaced by [REDACTED:kind] at ingest and never stored). Only for an index that never leaves a trusted machine.")
    lock_wait: float = _setting(60.0, "Seconds a command waits for the index while another acms process writes it (readers) or uses it (the writer); `--wait` overrides.")
    extensions: tuple[str, ...] = _setting((), "Ontology extensions to load: shipped names (web-api) or folder paths relative to the project root (`acms ontology add`).")

    @classmethod
    def help_table(cls) -> dict[str, str]:
        return {f.name: f.metadata["help"] for f in fields(cls)}

    def merged(self, overrides: Mapping[str, Any]) -> Settings:
        """A copy with the non-None overrides applied (CLI flags)."""
        clean = {k: v for k, v in overrides.items() if v is not None}
        return dataclasses.replace(self, **_coerce(clean))


def _coerce(values: Mapping[str, Any]) -> dict[str, Any]:
    known = {f.name: f for f in fields(Settings)}
    out: dict[str, Any] = {}
    for key, value in values.items():
        name = key.replace("-", "_")
        if name not in known:
            raise ConfigError(f"unknown setting {key!r}; known: {', '.join(sorted(known))}")
        default = known[name].default
        if default is dataclasses.MISSING:
            default = known[name].default_factory()  # type: ignore[misc]
        try:
            if isinstance(default, bool):
                if isinstance(value, str):
                    value = value.strip().lower() in {"1", "true", "yes", "on"}
                out[name] = bool(value)
            elif isinstance(default, int):
                out[name] = int(value)
            elif isinstance(default, float):
                out[name] = float(value)
            elif isinstance(default, tuple):
                out[name] = tuple(value.split(",") if isinstance(value, str) else value)
            else:
                out[name] = str(value)
        except (TypeError, ValueError):
            raise ConfigError(f"setting {key!r} has an invalid value {value!r}") from None
    return out


def load_settings(root: Path, env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    acms_toml, pyproject = root / "acms.toml", root / "pyproject.toml"
    try:
        if acms_toml.is_file():
            values.update(tomllib.loads(acms_toml.read_text(encoding="utf-8")))
        elif pyproject.is_file():
            values.update(tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("acms", {}))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"cannot read the acms configuration: {exc}") from None
    for f in fields(Settings):
        key = "ACMS_" + f.name.upper()
        if key in env:
            values[f.name] = env[key]
    return Settings(**_coerce(values))
