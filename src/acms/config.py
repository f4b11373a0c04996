"""One frozen, typed settings object; every field carries its help text, type and lower bound.

Precedence: defaults < ``acms.toml`` or ``[tool.acms]`` in pyproject.toml at the project root <
``ACMS_*`` environment variables < command-line flags (``acms --set NAME=VALUE`` and the commands'
own flags, applied with ``Settings.merged``).

Every value is checked against its field's type when it is read, before any command does any work:
a wrong one is a ``ConfigError`` (exit 6) naming the setting, where it came from and the type it
expects (``setting hot_days (acms.toml) expects a number, got 'soon'``). A TOML file carries types
(``hot_days = 7`` is a number, ``hot_days = "7"`` is not); the environment and flags carry text,
parsed by the field's type (``ACMS_HOT_DAYS=3.5``, ``ACMS_EXCLUDE=a/,b/``, ``ACMS_RECORD_USE=off``).
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from acms.errors import ConfigError
from acms.text_checks import InputProblem, strict_toml

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _setting(default: Any, help: str, minimum: float | None = None,  # noqa: A002 - mirrors click's naming
             choices: tuple[str, ...] | None = None) -> Any:
    meta = {"help": help, "minimum": minimum, "choices": choices}
    if isinstance(default, (list, dict, tuple)):
        return field(default_factory=lambda: default, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class Settings:
    store: str = _setting(".acms", "Where the index lives: a directory (relative to the project root) for the embedded store, or the http(s):// URL of a SPARQL 1.1 engine (docs/remote-stores.md).")
    store_query_url: str = _setting("", "Remote store: the SPARQL query endpoint (default: <store>/query, the Oxigraph server's).")
    store_update_url: str = _setting("", "Remote store: the SPARQL update endpoint (default: <store>/update).")
    store_data_url: str = _setting("", "Remote store: the Graph Store Protocol endpoint (default: <store>/store).")
    store_auth_env: str = _setting("ACMS_STORE_AUTH", "Remote store: the environment variable holding user:password (HTTP Basic) or a full Authorization value (Bearer ...).")
    store_timeout: float = _setting(60.0, "Remote store: seconds to wait for one HTTP request.", 0.1)
    store_retries: int = _setting(3, "Remote store: retries of a request that failed to connect or got 429/502/503/504 (updates only when they cannot have been applied).", 0)
    store_cache: str = _setting(".acms/remote", "Remote store: the local directory (relative to the project root) for derived caches, one folder per store and project.")
    query_timeout: float = _setting(30.0, "Seconds a SPARQL query (acms sparql, the Python API, the MCP sparql tool) may run before its process is stopped (acms serve has its own --query-timeout).", 0.1)
    query_memory_mb: int = _setting(768, "Megabytes of memory (address space) a SPARQL query's process may use before it is stopped.", 64)
    max_file_bytes: int = _setting(256 * 1024, "Files larger than this are skipped (too-large); above 64 MiB a file is always skipped (over-ceiling), and above 1 MiB it is indexed as text windows, not parsed.", 1)
    max_total_bytes: int = _setting(0, "Stop indexing files after this many bytes in all (0 = no cap).", 0)
    exclude: tuple[str, ...] = _setting((), "Extra gitignore-style patterns to skip.")
    include_hidden: bool = _setting(False, "Index hidden files and directories too.")
    window_lines: int = _setting(60, "Lines per fragment for files without a language extractor.", 1)
    project_name: str = _setting("", "Project name used in entity IRIs (default: the name the index was first made with, else the root folder's name; renaming the folder keeps it).")
    embedding_provider: str = _setting("lsa", "Embedding provider: lsa (offline, fitted on the corpus), openai, local.")
    embedding_dims: int = _setting(192, "Dimensions of the default LSA embeddings.", 1)
    embedding_base_url: str = _setting("http://127.0.0.1:11434/v1", "Base URL of an OpenAI-compatible embeddings endpoint.")
    embedding_model: str = _setting("", "Model name for the openai provider, or a model directory for the local provider.")
    embedding_api_key_env: str = _setting("OPENAI_API_KEY", "Environment variable holding the API key for the openai provider.")
    embed_on_index: bool = _setting(True, "Compute vectors for new fragments at the end of `acms index`.")
    hot_commits: int = _setting(10, "Tier policy: entities touched by the last N ingested commits are hot.", 0)
    hot_days: float = _setting(7.0, "Tier policy: entities changed (a commit or a re-index replaced them) in the last N days are hot.", 0)
    hot_use_days: float = _setting(3.0, "Tier policy: entities used in an assembled context in the last N days are hot.", 0)
    hot_max: int = _setting(500, "Tier policy: at most this many hot entities, the most recently active first.", 0)
    record_use: bool = _setting(True, "Record the entities whose code assembled contexts showed (meta graph), for the hot tier.")
    store_secrets: bool = _setting(False, "Store file text with its secrets in clear (default: secrets are replaced by [REDACTED:kind] at ingest and never stored). Only for an index that never leaves a trusted machine.")
    refresh: str = _setting("auto", "Before every read, look for indexed files changed on disk (size and mtime): auto refreshes them first (a short write), warn answers and names them, off does not look.", choices=("auto", "warn", "off"))
    watch_debounce_ms: int = _setting(50, "acms mcp, acms serve and acms watch: milliseconds of quiet after a save before the changed files are refreshed (a burst of saves is one refresh; a save is refreshed this to twice this long after it, then a refresh's own time).", 10)
    lock_wait: float = _setting(60.0, "Seconds a command waits for the index while another acms process writes it (readers) or uses it (the writer); `--wait` overrides.", 0)
    extensions: tuple[str, ...] = _setting((), "Ontology extensions to load: shipped names (web-api) or folder paths relative to the project root (`acms ontology add`).")

    @classmethod
    def help_table(cls) -> dict[str, str]:
        return {f.name: f.metadata["help"] for f in fields(cls)}

    @classmethod
    def type_table(cls) -> dict[str, str]:
        """Setting name -> the type a user writes, as error messages and ``acms config`` name it."""
        return {f.name: _expects(f) for f in fields(cls)}

    def merged(self, overrides: Mapping[str, Any], source: str = "flag") -> Settings:
        """A copy with the non-None overrides applied (CLI flags, ``Index.open`` keywords)."""
        clean = {k: v for k, v in overrides.items() if v is not None}
        return dataclasses.replace(self, **coerce(clean, source))


def _kind(f: dataclasses.Field[Any]) -> type:
    default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
    return type(default)


def _expects(f: dataclasses.Field[Any]) -> str:
    choices = f.metadata.get("choices")
    return f"one of {', '.join(choices)}" if choices else _type_name(_kind(f))


def _type_name(kind: type) -> str:
    return {bool: "a boolean (true/false)", int: "an integer", float: "a number",
            tuple: "a list of strings", str: "a string"}[kind]


def _parse(kind: type, value: Any, typed: bool) -> Any:
    """``value`` as ``kind``; ``typed`` sources (TOML, Python) must already carry the type, text is parsed.
    Raises ValueError when it does not fit."""
    if isinstance(value, str) and not typed:
        text = value.strip()
        if kind is bool:
            if text.lower() in _TRUE | _FALSE:
                return text.lower() in _TRUE
            raise ValueError
        if kind is int:
            return int(text)
        if kind is float:
            number = float(text)
            if not math.isfinite(number):
                raise ValueError
            return number
        if kind is tuple:
            return tuple(p.strip() for p in text.split(",") if p.strip())
        return value
    if kind is bool and isinstance(value, bool):
        return value
    if kind is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind is float and isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    if kind is tuple and isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    if kind is tuple and isinstance(value, str):
        return tuple(p.strip() for p in value.split(",") if p.strip())
    if kind is str and isinstance(value, str):
        return value
    raise ValueError


def coerce(values: Mapping[str, Any], source: str, typed: bool = False) -> dict[str, Any]:
    """Check and convert raw values from one source (``acms.toml``, ``ACMS_HOT_DAYS``, ``--set``);
    ``typed``: the source carries types (a TOML file), so text is not parsed into numbers."""
    known = {f.name: f for f in fields(Settings)}
    out: dict[str, Any] = {}
    for key, value in values.items():
        name = key.replace("-", "_")
        if name not in known:
            raise ConfigError(f"unknown setting {key!r} ({source}); known: {', '.join(sorted(known))}")
        kind = _kind(known[name])
        choices = known[name].metadata.get("choices")
        try:
            parsed = _parse(kind, value, typed)
            if choices and parsed not in choices:
                raise ValueError
        except (TypeError, ValueError, OverflowError):
            raise ConfigError(
                f"setting {name} ({source}) expects {_expects(known[name])}, got {value!r}"
            ) from None
        minimum = known[name].metadata.get("minimum")
        if minimum is not None and parsed < minimum:
            raise ConfigError(f"setting {name} ({source}) must be at least {minimum:g}, got {value!r}")
        out[name] = parsed
    return out


def file_values(root: Path) -> dict[str, Any]:
    """The settings the project's ``acms.toml`` (else ``[tool.acms]`` in pyproject.toml) sets, checked."""
    acms_toml, pyproject = root / "acms.toml", root / "pyproject.toml"
    try:
        if acms_toml.is_file():
            return coerce(strict_toml(acms_toml.read_bytes()), "acms.toml", typed=True)
        if pyproject.is_file():
            table = strict_toml(pyproject.read_bytes()).get("tool", {}).get("acms", {})
            return coerce(table, "[tool.acms] in pyproject.toml", typed=True)
    except InputProblem as exc:  # a key given twice, absurd nesting, not UTF-8: one line, exit 6
        name = "acms.toml" if acms_toml.is_file() else "pyproject.toml"
        raise ConfigError(f"cannot read the acms configuration: {name} {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read the acms configuration: {exc}") from None
    return {}


def env_values(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings ``ACMS_*`` environment variables set, checked."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    for f in fields(Settings):
        key = "ACMS_" + f.name.upper()
        if key in env:
            values.update(coerce({f.name: env[key]}, key))
    return values


def load_settings(root: Path, env: Mapping[str, str] | None = None) -> Settings:
    """Defaults < the project's file < ``ACMS_*``; each value checked against its type on the way in."""
    return Settings(**{**file_values(root), **env_values(env)})
