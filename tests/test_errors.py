"""One error tree, one code table: every error class lives in acms.errors and has a row; every retry
hint names something that exists (a strategy, a CLI command and its flags, a request field)."""

from __future__ import annotations

import importlib
import pkgutil
import re

import click
import pytest

import acms
from acms.assembly.protocol import envelope_for, request_schema
from acms.cli.main import cli
from acms.errors import CODES, AcmsError, ErrorCode
from acms.server.app import STATUS_BY_CODE
from acms.strategies.registry import StrategyRegistry


def _all_subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub} | _all_subclasses(sub)
    return out


def test_every_error_class_is_in_the_one_tree_with_a_code_row() -> None:
    for info in pkgutil.walk_packages(acms.__path__, "acms."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    classes = {c for c in _all_subclasses(AcmsError) if c.__module__.startswith("acms.")} | {AcmsError}
    outside = sorted(f"{c.__module__}.{c.__name__}" for c in classes if c.__module__ != "acms.errors")
    assert not outside, f"error classes outside acms.errors: {outside}"
    import acms.errors as errors_module

    doc = errors_module.__doc__ or ""
    for cls in classes:
        assert cls.code in CODES
        assert cls.exit_code == CODES[cls.code].exit_code
        assert cls.__name__ in doc, f"{cls.__name__} is missing from the tree in the docstring"


def test_one_table_feeds_exit_codes_envelope_and_http() -> None:
    assert set(CODES) == set(ErrorCode) == set(STATUS_BY_CODE)
    for code, spec in CODES.items():
        assert STATUS_BY_CODE[code] == spec.http_status
        assert spec.options and spec.max_attempts >= 1
    env = envelope_for(acms.ConfigError("bad"), "r")["error"]
    assert env["code"] == "CONFIG_ERROR" and env["options"] == [
        {"action": a, "hint": h} for a, h in CODES[ErrorCode.CONFIG_ERROR].options]


def _command_exists(words: list[str]) -> None:
    """``acms reindex --embeddings``: each word a subcommand or an option of the command reached."""
    command: click.Command = cli
    for word in words:
        if word.startswith("<"):
            continue
        if word.startswith("--"):
            names = {o for p in command.params for o in getattr(p, "opts", [])}
            assert word in names, f"acms {' '.join(words)}: {word} is no option of {command.name}"
        else:  # get_command: the CLI's group loads its commands on first use (commands is empty until then)
            found = command.get_command(click.Context(command), word) if isinstance(command, click.Group) else None
            assert found is not None, f"acms {' '.join(words)}: no {word}"
            command = found


def _field_exists(path: str) -> None:
    node = request_schema()
    for part in path.split("."):
        props = node.get("properties", {})
        assert part in props, f"request field {path} does not exist"
        node = props[part]


HINTS = sorted({(code, action, hint) for code, spec in CODES.items() for action, hint in spec.options})


@pytest.mark.parametrize(("code", "action", "hint"), HINTS)
def test_every_retry_hint_names_something_that_exists(code: ErrorCode, action: str, hint: str) -> None:
    strategies = StrategyRegistry.default().names()
    for name in re.findall(r"strategy=([\w-]+)", hint):
        assert name in strategies, f"{code}: strategy {name} does not exist"
    for match in re.finditer(r"\bacms((?: (?:--)?[a-z][a-z-]*| <\w+>)+)", hint):
        _command_exists(match.group(1).split())
    for flag in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", hint):
        if f"acms {flag}" not in hint and not re.search(rf"acms [^;]*{flag}", hint):
            assert flag in {o for p in cli.params for o in getattr(p, "opts", [])}, f"{code}: {flag} does not exist"
    fields = re.findall(r"\b([a-z_]+(?:\.[a-z_]+)?)\s*(?:>=|=)", hint)
    fields += [f for pair in re.findall(r"\b(?:raise|lower) ([a-z_.]+)(?: or ([a-z_.]+))?", hint) for f in pair if f]
    for path in fields:
        _field_exists(path)
