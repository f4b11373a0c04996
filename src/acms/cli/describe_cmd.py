"""``acms describe ENTITY``: one entity as the MCP ``describe`` tool gives it, from the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from acms.cli import relay
from acms.cli.common import boundary, json_option, open_index, project_options, refresh_option, relay_answer, stale_lines

if TYPE_CHECKING:  # the engine is imported once the command runs it, not for an answer a watcher gives
    from acms.api import Index


@click.command("describe")
@click.argument("entity")
@refresh_option
@project_options
@json_option
@boundary
def describe_cmd(entity: str, refresh: str | None, project: Path, store: Path | None, as_json: bool) -> None:
    """Kind, location, signature, docstring, callers, callees and members of one ENTITY.

    ENTITY is a qualified name or its end (Class.method), a name, a path, path::Qualified.name or an
    IRI. One that an edit removed is shown as gone, with the count of its earlier versions (`acms
    history ENTITY` shows them).
    """
    answer = relay_answer("describe", project, store, refresh, {"entity": entity, "json": as_json})
    if answer is None:
        with open_index(project, store, refresh=refresh) as idx:
            answer = described(idx, entity, as_json)
    for line in answer.get("stderr", []):
        click.echo(line, err=True)
    click.echo(answer["stdout"])


def described(index: Index, entity: str, as_json: bool) -> dict[str, Any]:
    """What ``acms describe`` prints of an entity: the description on stdout (text or JSON), the note
    on files it answered without on stderr."""
    found = index.describe(entity)
    stale = index.stale
    notes = stale_lines(stale)
    if as_json:
        return {"stderr": notes, "stdout": json.dumps({**found.as_dict(), "stale_files": list(stale)}, indent=2,
                                                      sort_keys=True, default=str)}
    lines = [f"{found.name} [{found.kind}] {found.location or 'no longer exists'}" +
             (f" ({found.tier})" if found.tier else ""), f"  {found.entity}"]
    for label, value in (("signature", found.signature), ("defined in", found.defined_in)):
        if value:
            lines.append(f"  {label}: {value}")
    if found.docstring:
        lines.append(f"  doc: {found.docstring.strip().splitlines()[0]}")
    if found.location is None:
        versions = found.history.get("earlier_versions", 0)
        lines.append(f"  {versions} earlier version{'s' if versions != 1 else ''}: acms history {entity}")
    for label, items in (("callers", found.callers), ("callees", found.callees), ("members", found.members)):
        if items:
            lines.append(f"  {label} ({found.counts.get(label, len(items))}):")
            lines += [f"    {item}" for item in items]
    return {"stderr": notes, "stdout": "\n".join(lines)}


def answer_describe(index: Index) -> relay.Handler:
    """``acms describe`` as ``acms watch`` answers it for the command (``acms.cli.relay``)."""

    def describe(message: dict[str, Any]) -> dict[str, Any]:
        return described(index, str(message["entity"]), bool(message["json"]))

    return describe
