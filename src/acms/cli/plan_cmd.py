"""``acms plan`` and ``acms decision``: plans, the decisions recorded in them, and the ADRs found in the project."""

from __future__ import annotations

from pathlib import Path

import click

from acms.cli.common import boundary, echo_json, json_option, open_index, project_options
from acms.results import RECORDABLE, DecisionInfo, PlanInfo


@click.group("plan")
def plan_group() -> None:
    """Plans: named units of work (with sub-plans) that decisions are recorded in."""


@plan_group.command("create")
@click.argument("name")
@click.option("--parent", "parent", default=None, help="Name (or IRI) of the plan this one is part of.")
@project_options
@json_option
@boundary
def plan_create_cmd(name: str, parent: str | None, project: Path, store: Path | None, as_json: bool) -> None:
    """Create plan NAME, optionally as a sub-plan of --parent."""
    with open_index(project, store, write=True) as idx:
        iri = idx.plans.create(name, parent)
    if as_json:
        echo_json({"name": name.strip(), "iri": iri, "parent": parent})
    else:
        click.echo(f"plan {name.strip()}" + (f" (in {parent})" if parent else "") + f": {iri}")


@plan_group.command("show")
@click.argument("plan", required=False)
@project_options
@json_option
@boundary
def plan_show_cmd(plan: str | None, project: Path, store: Path | None, as_json: bool) -> None:
    """The plans as a tree with their decisions (id, status, title, about, supersedes); retired ones
    are marked. With PLAN, that plan's subtree and its ancestors."""
    with open_index(project, store) as idx:
        tree = idx.plans.show(plan)
    roots, unplanned, lineage = tree.plans, tree.unplanned, tree.ancestors
    if as_json:
        echo_json(tree.as_dict())
        return
    if not roots and not unplanned:
        click.echo("no plans and no decisions yet: acms plan create NAME")
        return
    if lineage:
        click.echo("ancestors: " + " > ".join(reversed(lineage)))
    for root in roots:
        _echo_plan(root, 0)
    if unplanned:
        click.echo("decisions in no plan (ADRs)")
        for d in unplanned:
            _echo_decision(d, 1)


def _echo_plan(plan: PlanInfo, depth: int) -> None:
    pad = "  " * depth
    click.echo(f"{pad}plan {plan.name}" + ("" if plan.decisions else "  (no decisions)"))
    for d in plan.decisions:
        _echo_decision(d, depth + 1)
    for child in plan.children:
        _echo_plan(child, depth + 1)


def _status(d: DecisionInfo) -> str:
    return f"{d.status}, {d.tier}" if d.retired else d.status


def _echo_decision(d: DecisionInfo, depth: int) -> None:
    pad = "  " * depth
    mark = "x " if d.retired else "- "
    click.echo(f"{pad}{mark}{d.id}  [{_status(d)}]  {d.title}")
    details = []
    if d.about:
        details.append("about: " + ", ".join(d.about))
    if d.supersedes:
        details.append("supersedes: " + ", ".join(d.supersedes))
    if d.superseded_by:
        details.append("superseded by: " + ", ".join(d.superseded_by))
    if d.source and d.source != d.id:
        details.append("from: " + d.source)
    if details:
        click.echo(f"{pad}    " + "; ".join(details))


@click.group("decision")
def decision_group() -> None:
    """Decisions: record them in a plan, about entities of the project, superseding older ones."""


@decision_group.command("record")
@click.argument("text")
@click.option("--plan", "plan", required=True, help="Name (or IRI) of the plan the decision belongs to.")
@click.option("--title", default=None, help="Short title (default: the text's first line).")
@click.option("--about", "about", multiple=True,
              help="An entity the decision is about: qualified name, path, path::Qualified.name or IRI. Repeatable.")
@click.option("--supersedes", default=None,
              help="Id (D-3) or IRI of a decision this one replaces; that one is retired to the cold tier.")
@click.option("--status", type=click.Choice(RECORDABLE), default="accepted", show_default=True,
              help="Status of the new decision.")
@project_options
@json_option
@boundary
def decision_record_cmd(text: str, plan: str, title: str | None, about: tuple[str, ...], supersedes: str | None,
                        status: str, project: Path, store: Path | None, as_json: bool) -> None:
    """Record a decision (TEXT: what was decided and why) in a plan; prints its id."""
    with open_index(project, store, write=True) as idx:
        info = idx.plans.record(text, plan=plan, title=title, about=about, supersedes=supersedes, status=status)
        _note_secrets(idx.plans.secrets_replaced(f"{text}\n{title or ''}"))
    if as_json:
        echo_json({"id": info} if isinstance(info, str) else info.as_dict())
    else:
        click.echo(info if isinstance(info, str) else info.id)


def _note_secrets(kinds: dict[str, int]) -> None:
    """Say which secrets the recorded text lost (the graph holds ``[REDACTED:kind]`` in their place)."""
    if kinds:
        found = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
        click.echo(f"acms: note: replaced by [REDACTED:kind] before recording: {found} (the store_secrets setting "
                   "keeps them)", err=True)


@decision_group.command("list")
@click.option("--about", "about", default=None, help="Only decisions about this entity (name, path or IRI).")
@project_options
@json_option
@boundary
def decision_list_cmd(about: str | None, project: Path, store: Path | None, as_json: bool) -> None:
    """Every decision, recorded and from ADR files, oldest first (retired ones marked)."""
    with open_index(project, store) as idx:
        decisions = idx.plans.decisions(about)
    if as_json:
        echo_json([d.as_dict() for d in decisions])
        return
    if not decisions:
        click.echo("no decisions" + (f" about {about}" if about else ""))
    for d in decisions:
        _echo_decision(d, 0)
        if d.plan:
            click.echo(f"    plan: {d.plan}")
