"""``acms describe ENTITY``: one entity as the MCP ``describe`` tool gives it, from the command line."""

from __future__ import annotations

from pathlib import Path

import click

from acms.cli.common import boundary, echo_json, json_option, note_stale, open_index, project_options, refresh_option


@click.command("describe")
@click.argument("entity")
@refresh_option
@project_options
@json_option
@boundary
def describe_cmd(entity: str, refresh: str | None, project: Path, store: Path | None, as_json: bool) -> None:
    """Kind, location, signature, docstring, callers, callees and members of one ENTITY.

    ENTITY is a qualified name, a name, a path, path::Qualified.name or an IRI. One that an edit removed
    is shown as gone, with the count of its earlier versions (`acms history ENTITY` shows them).
    """
    idx = open_index(project, store, refresh=refresh)
    try:
        found = idx.describe(entity)
        stale = idx.stale
    finally:
        idx.close()
    note_stale(stale)
    if as_json:
        echo_json({**found.as_dict(), "stale_files": list(stale)})
        return
    click.echo(f"{found.name} [{found.kind}] {found.location or 'no longer exists'}" +
               (f" ({found.tier})" if found.tier else ""))
    click.echo(f"  {found.entity}")
    for label, value in (("signature", found.signature), ("defined in", found.defined_in)):
        if value:
            click.echo(f"  {label}: {value}")
    if found.docstring:
        click.echo(f"  doc: {found.docstring.strip().splitlines()[0]}")
    if found.location is None:
        versions = found.history.get("earlier_versions", 0)
        click.echo(f"  {versions} earlier version{'s' if versions != 1 else ''}: acms history {entity}")
    for label, items in (("callers", found.callers), ("callees", found.callees), ("members", found.members)):
        if items:
            total = found.counts.get(label, len(items))
            click.echo(f"  {label} ({total}):")
            for item in items:
                click.echo(f"    {item}")
