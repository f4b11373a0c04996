"""``acms config``: the effective settings of a project and where each value came from."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from acms.cli.common import boundary, echo_json, flag_settings, json_option, settings_for
from acms.config import Settings, env_values, file_values
from acms.paths import project_root


def _sources(root: Path) -> dict[str, str]:
    """Setting name -> default, file, environment or flag: the highest-precedence source that set it."""
    sources = {f.name: "default" for f in dataclasses.fields(Settings)}
    sources.update({name: "file" for name in file_values(root)})
    sources.update({name: "environment" for name in env_values()})
    sources.update({name.replace("-", "_"): "--set" for name in flag_settings()})
    return sources


@click.command("config")
@click.option("--project", "-C", "project", type=click.Path(path_type=Path), default=".", show_default=True,
              help="Project root whose settings to show.")
@json_option
@boundary
def config_cmd(project: Path, as_json: bool) -> None:
    """Show the effective settings (defaults < acms.toml / [tool.acms] < ACMS_* < flags and --set), each with its
    type and source. A value of the wrong type is exit 6 naming the setting and the type it expects."""
    root = project_root(project)
    settings = settings_for(root)
    sources, types = _sources(root), Settings.type_table()
    rows = {f.name: {"value": getattr(settings, f.name), "type": types[f.name], "source": sources[f.name]}
            for f in dataclasses.fields(Settings)}
    if as_json:
        echo_json(rows)
        return
    for name, row in rows.items():
        value = ",".join(row["value"]) if isinstance(row["value"], tuple) else row["value"]
        click.echo(f"{name:<22} {value!s:<28} {row['source']}")
