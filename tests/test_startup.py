"""Fast start (issue 14): the read path imports only what it uses.

``acms --help``, ``search``, ``assemble`` and ``sparql`` run in a fresh interpreter (a real process, a
real index of the sample project) and must not have imported scipy, pyshacl, owlready2, rdflib or
bm25s: those cost 0.1-0.5 s each and only the writer (``acms index``) or ``acms validate`` needs
them. The timings themselves are in ``bench/startup.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from acms.cli.main import COMMANDS, cli, load_command

HEAVY = ("scipy", "pyshacl", "owlready2", "rdflib", "bm25s", "sklearn", "torch")

_PROBE = """
import json, sys
from acms.cli.main import cli
try:
    cli(args=sys.argv[1:], prog_name="acms")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
heavy = sorted({name.split(".")[0] for name in sys.modules} & set(json.loads(sys.stdin.read())))
print("\\nPROBE " + json.dumps({"code": code, "heavy": heavy}))
"""


def _probe(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _PROBE, *args], input=json.dumps(HEAVY), capture_output=True,
                         text=True, timeout=120)
    line = [x for x in out.stdout.splitlines() if x.startswith("PROBE ")]
    assert line, out.stderr[-2000:]
    return json.loads(line[-1].removeprefix("PROBE "))


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory, _fully_indexed_sample_template: Path) -> Path:
    """An index as ``acms index`` leaves it (a copy of the session's)."""
    from .conftest import copy_of_indexed

    return copy_of_indexed(_fully_indexed_sample_template, tmp_path_factory.mktemp("startup"))


def test_help_imports_no_command_module() -> None:
    got = _probe("--help")
    assert got == {"code": 0, "heavy": []}


@pytest.mark.parametrize("args", [
    ("search", "greeting"),
    ("search", "greeting", "--mode", "vector"),
    ("assemble", "how is a greeting made", "--budget", "500"),
    ("sparql", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"),
])
def test_read_commands_import_nothing_heavy(indexed: Path, args: tuple[str, ...]) -> None:
    got = _probe(*args[:1], "-C", str(indexed), *args[1:])
    assert got["code"] in (0, None), got
    assert got["heavy"] == [], f"acms {args[0]} imported {got['heavy']}"


def test_listing_matches_the_commands_own_help() -> None:
    ctx = click.Context(cli)
    for name, (_module, _attr, short) in COMMANDS.items():
        command = load_command(name)
        assert command.name == name
        assert command.get_short_help_str(limit=500) == short, name


def test_unknown_command_is_a_usage_error() -> None:
    from click.testing import CliRunner

    result = CliRunner().invoke(cli, ["no-such-command"])
    assert result.exit_code == 2 and "No such command" in result.output


def test_an_index_with_nothing_to_do_imports_no_assembling_stack(indexed: Path) -> None:
    """``acms index`` (and a refresh) never assembles: the request schema's jsonschema (~40 ms) and the
    assembling service are the assembling commands' own."""
    out = subprocess.run([sys.executable, "-c", _PROBE, "index", str(indexed)], capture_output=True, text=True,
                         timeout=120, input=json.dumps(["jsonschema"]))
    line = [x for x in out.stdout.splitlines() if x.startswith("PROBE ")]
    assert line, out.stderr[-2000:]
    got = json.loads(line[-1].removeprefix("PROBE "))
    assert got["code"] in (0, None), got
    assert got["heavy"] == [], f"acms index imported {got['heavy']}"
