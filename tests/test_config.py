"""Typed settings: every setting through the file, the environment and the --set flag; a value of the
wrong type is exit 6 naming the setting, its source and the type it expects, before anything runs."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from acms.cli.main import cli
from acms.config import Settings, load_settings
from acms.errors import ConfigError

FIELDS = {f.name: f for f in dataclasses.fields(Settings)}


def _default(name: str) -> Any:
    return getattr(Settings(), name)


def sample(name: str) -> tuple[str, str, Any]:
    """(TOML literal, environment text, expected value): a valid value other than the default."""
    default = _default(name)
    if choices := FIELDS[name].metadata.get("choices"):
        other = next(c for c in choices if c != default)
        return f'"{other}"', other, other
    if isinstance(default, bool):
        return ("false" if default else "true"), ("off" if default else "on"), not default
    if isinstance(default, int):
        return str(default + 3), str(default + 3), default + 3
    if isinstance(default, float):
        return "2.5", "2.5", 2.5
    if isinstance(default, tuple):
        return '["a/", "b/"]', "a/,b/", ["a/", "b/"]
    return '"custom-value"', "custom-value", "custom-value"


def bad(name: str) -> tuple[str, str]:
    """(TOML literal, environment text) of the wrong type for the setting."""
    default = _default(name)
    if isinstance(default, bool):
        return '"maybe"', "maybe"
    if isinstance(default, (int, float)):
        return '"soon"', "soon"
    if isinstance(default, tuple):
        return "[1, 2]", None  # type: ignore[return-value]  # any text is a comma-separated list
    return "42", None  # type: ignore[return-value]  # any text is a string


def config(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, Any, str]:
    result = CliRunner(env=env).invoke(cli, [*args, "config", "-C", str(root), "--json"])
    return result.exit_code, json.loads(result.stdout) if result.exit_code == 0 else None, result.stderr


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_every_setting_through_file_environment_and_flag(tmp_path: Path, name: str) -> None:
    literal, text, expected = sample(name)
    (tmp_path / "acms.toml").write_text(f"{name} = {literal}\n")
    code, rows, err = config(tmp_path)
    assert code == 0, err
    assert rows[name] == {"value": expected, "type": Settings.type_table()[name], "source": "file"}

    (tmp_path / "acms.toml").unlink()
    code, rows, err = config(tmp_path, env={f"ACMS_{name.upper()}": text})
    assert code == 0, err
    assert rows[name]["value"] == expected and rows[name]["source"] == "environment"

    code, rows, err = config(tmp_path, "--set", f"{name}={text}")
    assert code == 0, err
    assert rows[name]["value"] == expected and rows[name]["source"] == "--set"


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_a_wrong_type_is_exit_6_naming_setting_source_and_type(tmp_path: Path, name: str) -> None:
    literal, text = bad(name)
    expects = Settings.type_table()[name]
    (tmp_path / "acms.toml").write_text(f"{name} = {literal}\n")
    code, _, err = config(tmp_path)
    assert code == 6
    assert err.strip().splitlines() == [f"acms: error: setting {name} (acms.toml) expects {expects}, got {literal.strip(chr(34)) if literal.startswith(chr(34)) else json.loads(literal)!r}"]
    if text is None:
        return
    (tmp_path / "acms.toml").unlink()
    code, _, err = config(tmp_path, env={f"ACMS_{name.upper()}": text})
    assert code == 6 and f"setting {name} (ACMS_{name.upper()}) expects {expects}" in err
    code, _, err = config(tmp_path, "--set", f"{name}={text}")
    assert code == 6 and f"setting {name} (--set) expects {expects}" in err


def test_a_value_outside_a_settings_choices_is_exit_6_naming_them(tmp_path: Path) -> None:
    code, _, err = config(tmp_path, env={"ACMS_REFRESH": "sometimes"})
    assert code == 6
    assert "setting refresh (ACMS_REFRESH) expects one of auto, warn, off, got 'sometimes'" in err


def test_precedence_file_environment_flag(tmp_path: Path) -> None:
    (tmp_path / "acms.toml").write_text("hot_days = 1\nhot_max = 9\nwindow_lines = 5\n")
    code, rows, _ = config(tmp_path, "--set", "hot_days=3", env={"ACMS_HOT_DAYS": "2", "ACMS_HOT_MAX": "8"})
    assert code == 0
    assert (rows["hot_days"]["value"], rows["hot_max"]["value"], rows["window_lines"]["value"]) == (3.0, 8, 5)


def test_pyproject_table_and_unknown_and_out_of_range(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.acms]\nhot_days = 4\n")
    assert load_settings(tmp_path, env={}).hot_days == 4.0
    (tmp_path / "pyproject.toml").write_text("[tool.acms]\nhot_dayz = 4\n")
    with pytest.raises(ConfigError, match="unknown setting 'hot_dayz'"):
        load_settings(tmp_path, env={})
    (tmp_path / "pyproject.toml").write_text("[tool.acms]\nwindow_lines = 0\n")
    with pytest.raises(ConfigError, match="window_lines .* must be at least 1"):
        load_settings(tmp_path, env={})
    (tmp_path / "pyproject.toml").unlink()
    with pytest.raises(ConfigError, match="expects a number"):
        load_settings(tmp_path, env={"ACMS_HOT_DAYS": "nan"})
    code, _, err = config(tmp_path, "--set", "no-equals-sign")
    assert code == 2 and "NAME=VALUE" in err


def test_a_bad_setting_writes_nothing_on_index(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    result = CliRunner(env={"ACMS_HOT_MAX": "lots"}).invoke(cli, ["index", str(tmp_path)])
    assert result.exit_code == 6 and "hot_max" in result.stderr
    assert not (tmp_path / ".acms").exists()
