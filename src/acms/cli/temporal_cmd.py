"""``acms tiers`` (counts, policy, rebalance, check) and ``acms history ENTITY``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from acms.cli import relay
from acms.cli.common import (boundary, echo_json, json_option, open_index, project_options, refresh_option, relay_answer,
                             stale_lines)
from acms.errors import TiersInconsistent

if TYPE_CHECKING:  # the engine is imported once the command runs it, not for an answer a watcher gives
    from acms.api import Index


@click.group("tiers", invoke_without_command=True)
@project_options
@json_option
@click.pass_context
@boundary
def tiers_group(ctx: click.Context, project: Path, store: Path | None, as_json: bool) -> None:
    """Triples and entities per tier (hot, warm, cold) and the policy that assigns them.

    \b
    hot   current entities touched by the last `hot_commits` commits, changed in the last
          `hot_days` days, or used in an assembled context in the last `hot_use_days` days
    warm  the rest of the current project
    cold  superseded versions, commits, retired decisions
    Settings: acms.toml / [tool.acms] / ACMS_HOT_COMMITS etc. `acms tiers rebalance` applies them now.
    """
    if ctx.invoked_subcommand is not None:
        return
    with open_index(project, store) as idx:
        data = idx.tiers.counts().as_dict()
    if as_json:
        echo_json(data)
        return
    for name, row in data["tiers"].items():
        click.echo(f"{name:<5} {row['entities']:>8,} entities {row['triples']:>10,} triples   {data['policy'][name]}")


@tiers_group.command("rebalance")
@project_options
@json_option
@boundary
def rebalance_cmd(project: Path, store: Path | None, as_json: bool) -> None:
    """Apply the tier policy now (acms index does it after every run)."""
    with open_index(project, store, write=True) as idx:
        result = idx.tiers.rebalance()
    if as_json:
        echo_json({"hot_entities": result.hot_entities, "promoted": result.promoted, "demoted": result.demoted,
                   "reasons": result.reasons})
        return
    why = ", ".join(f"{n} {reason}" for reason, n in result.reasons.items()) or "no recent activity"
    click.echo(f"{result.hot_entities} hot entities ({why}); {result.promoted} promoted, {result.demoted} demoted")


@tiers_group.command("check")
@project_options
@json_option
@boundary
def check_cmd(project: Path, store: Path | None, as_json: bool) -> None:
    """Check that every resource's triples sit in exactly one tier (exit 1 when not)."""
    with open_index(project, store) as idx:
        checked = idx.tiers.check()
    bad = checked.violations
    if as_json:
        echo_json(checked.as_dict())
    else:
        for s, n in bad[:50]:
            click.echo(f"{s}: in {n} tiers")
        if not bad:
            click.echo("ok: every resource is in exactly one tier")
    if bad:
        raise TiersInconsistent(f"{len(bad)} resources have triples in more than one tier")


@click.command("history")
@click.argument("entity")
@refresh_option
@project_options
@click.option("--text", "show_text", is_flag=True, help="Print each earlier version's text too.")
@json_option
@boundary
def history_cmd(entity: str, refresh: str | None, project: Path, store: Path | None, show_text: bool,
                as_json: bool) -> None:
    """Versions and commits of one ENTITY (qualified name or its end, Class.method; name, path,
    path::Qualified.name or IRI).

    Lists, oldest first, the commits that touched it (`acms index --history N`) and every earlier
    version acms kept in the cold tier, with where it was and what ended it.
    """
    answer = relay_answer("history", project, store, refresh, {"entity": entity, "text": show_text, "json": as_json})
    if answer is None:
        with open_index(project, store, refresh=refresh) as idx:
            answer = histories(idx, entity, show_text, as_json)
    for line in answer["stderr"]:
        click.echo(line, err=True)
    if answer["stdout"]:  # no entity, no line
        click.echo(answer["stdout"])


def histories(index: Index, entity: str, show_text: bool, as_json: bool) -> dict[str, Any]:
    """What ``acms history`` prints of an entity's history: the versions and commits on stdout (text or
    JSON), the note on files it answered without on stderr."""
    found = index.history(entity)
    notes = stale_lines(index.stale)
    if as_json:
        return {"stderr": notes, "stdout": json.dumps([h.as_dict() for h in found], indent=2, sort_keys=True, default=str)}
    lines: list[str] = []
    for h in found:
        where = f"{h.current_ref} ({h.tier})" if h.current_ref is not None else "no longer exists"
        lines += [f"{h.name} [{h.kind}] {where}", f"  {h.entity}"]
        if not h.events:
            lines.append("  no commit or earlier version recorded for it (`acms index --history N` reads the last N "
                         "commits; none of those read touched it)")
        for ev in h.events:
            if ev.what == "commit":
                lines.append(f"  {ev.time}  commit {ev.commit[:10]} {ev.author}: {_first_line(ev.message)}")
                continue
            ended = f"commit {ev.commit[:10]} {ev.author}: {_first_line(ev.message)}" if ev.commit else "re-index"
            lines.append(f"  {ev.time}  version {ev.ref} ended by {ended}")
            if show_text and ev.text:
                lines += [f"      | {line}" for line in ev.text.splitlines()]
    return {"stderr": notes, "stdout": "\n".join(lines)}


def answer_history(index: Index) -> relay.Handler:
    """``acms history`` as ``acms watch`` answers it for the command (``acms.cli.relay``)."""

    def history(message: dict[str, Any]) -> dict[str, Any]:
        return histories(index, str(message["entity"]), bool(message["text"]), bool(message["json"]))

    return history


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else ""
