"""The ontology guide's tutorial (docs/guides/ontology.md) runs as written, on the webapi fixture."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from acms.cli.main import cli

GUIDE = Path(__file__).parents[2] / "docs" / "guides" / "ontology.md"


def tutorial_commands() -> list[str]:
    block = re.search(r"```sh\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    assert block, "the tutorial has no ```sh block"
    return [line for line in block.group(1).splitlines() if line.startswith("acms ")]


def test_tutorial_runs_as_written(webapi_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(webapi_project)
    commands = tutorial_commands()
    assert commands[0] == "acms index ." and commands[-1] == "acms ontology remove web-api"
    outputs = {}
    for command in commands:
        args = shlex.split(command)[1:]
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert result.exit_code == 0, f"{command}\n{result.stdout}\n{result.stderr}"
        outputs[" ".join(args[:2])] = result.stdout
    assert "added web-api 1.0.0: 58 ontology triples, 117 triples derived by its rules" in outputs["ontology add"]
    assert "instances:  10" in outputs["ontology describe"]
    table = [line.split() for line in outputs[next(k for k in outputs if k.startswith("sparql"))].splitlines()]
    assert ["POST", "/items", "fastapi_app.create_item"] in table
    assert ["ANY", "/products/<int:pk>/", "shop.views.product_detail"] in table
    assert len([row for row in table if row and row[0] in {"GET", "POST", "DELETE", "HEAD", "ANY"}]) == 12
    assert "api:Endpoint" in outputs["stats"]
    assert "tooltip=\"api:Endpoint" in (webapi_project / "api.dot").read_text(encoding="utf-8")
    assert "web-api" in outputs["ontology list"]
    # the guide's shown output is what the commands print
    guide = GUIDE.read_text(encoding="utf-8")
    for line in outputs["ontology describe"].splitlines():
        assert line.rstrip() in guide
    assert "removed web-api" in outputs["ontology remove"]
