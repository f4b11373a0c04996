"""Editing the ``extensions`` setting in the project's config file, keeping everything else intact.

Which file: ``acms.toml`` when it exists, else ``pyproject.toml`` when it has ``[tool.acms]`` (the order
``config.load_settings`` reads them in), else a new ``acms.toml``. Written with tomlkit (comments and
layout survive) to a temporary file that replaces the old one atomically.
"""

from __future__ import annotations

import os
import tempfile
import tomllib
from pathlib import Path

import tomlkit

from acms.errors import ConfigError


def config_file(root: Path) -> tuple[Path, bool]:
    """(path, is_pyproject) of the file that holds (or will hold) the project's acms settings."""
    acms_toml, pyproject = root / "acms.toml", root / "pyproject.toml"
    if acms_toml.is_file():
        return acms_toml, False
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"cannot read {pyproject}: {exc}") from None
        if "acms" in data.get("tool", {}):
            return pyproject, True
    return acms_toml, False


def write_extensions(root: Path, refs: list[str]) -> tuple[Path, str | None]:
    """Set ``extensions`` to ``refs``; returns (path, previous text or None if the file was new)."""
    path, is_pyproject = config_file(root)
    old = path.read_text(encoding="utf-8") if path.is_file() else None
    try:
        doc = tomlkit.parse(old or "")
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    table = doc
    if is_pyproject:
        table = doc["tool"]["acms"]  # type: ignore[assignment]
    array = tomlkit.array()
    array.extend(refs)
    table["extensions"] = array  # type: ignore[index]
    atomic_write(path, tomlkit.dumps(doc))
    return path, old


def restore(path: Path, old: str | None) -> None:
    """Put back what ``write_extensions`` replaced (used when the store write fails after it)."""
    if old is None:
        path.unlink(missing_ok=True)
    else:
        atomic_write(path, old)


def atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
