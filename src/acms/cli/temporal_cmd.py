"""``acms tiers`` (counts, policy, rebalance, check) and ``acms history ENTITY``."""

from __future__ import annotations

from pathlib import Path

import click

from acms.cli.common import boundary, echo_json, json_option, note_stale, open_index, project_options, refresh_option
from acms.errors import TiersInconsistent


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
    """Versions and commits of one ENTITY (qualified name, name, path, path::Qualified.name or IRI).

    Lists, oldest first, the commits that touched it (`acms index --history N`) and every earlier
    version acms kept in the cold tier, with where it was and what ended it.
    """
    idx = open_index(project, store, refresh=refresh)
    try:
        found = idx.history(entity)
        note_stale(idx.stale)
    finally:
        idx.close()
    if as_json:
        echo_json([h.as_dict() for h in found])
        return
    for h in found:
        where = f"{h.current_ref} ({h.tier})" if h.current_ref is not None else "no longer exists"
        click.echo(f"{h.name} [{h.kind}] {where}")
        click.echo(f"  {h.entity}")
        if not h.events:
            click.echo("  no commit or earlier version recorded for it (`acms index --history N` reads the last N "
                       "commits; none of those read touched it)")
        for ev in h.events:
            if ev.what == "commit":
                click.echo(f"  {ev.time}  commit {ev.commit[:10]} {ev.author}: {_first_line(ev.message)}")
            else:
                ended = f"commit {ev.commit[:10]} {ev.author}: {_first_line(ev.message)}" if ev.commit else "re-index"
                click.echo(f"  {ev.time}  version {ev.ref} ended by {ended}")
                if show_text and ev.text:
                    for line in ev.text.splitlines():
                        click.echo(f"      | {line}")


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else ""
