"""``acms ontology``: list, check, add, remove and describe ontology extensions."""

from __future__ import annotations

from pathlib import Path

import click

from acms.api import Index
from acms.cli.common import boundary, echo_json, json_option, open_index, project_options
from acms.errors import ExtensionRejected
from acms.results import Level


@click.group("ontology")
def ontology_group() -> None:
    """Ontology extensions: teach acms a domain's classes, shapes and rules (e.g. web-api endpoints).

    An extension is a folder with ontology.ttl (terms in its own namespace, subclassing UKO), optional
    shapes.ttl (SHACL) and rules/*.ru (SPARQL Update rules run after ingestion), and a README.md. Name a
    shipped one (web-api) or give a folder path (relative to the project root).
    """


@ontology_group.command("list")
@project_options
@json_option
@boundary
def list_cmd(project: Path, store: Path | None, as_json: bool) -> None:
    """The ontologies loaded in the index (UKO and extensions), their versions and status."""
    with open_index(project, store) as idx:
        rows = idx.ontology.list()
    if as_json:
        echo_json([vars(r) for r in rows])
        return
    for r in rows:
        click.echo(f"{r.name:<12} {r.version or '-':<8} {r.prefix + ':' if r.prefix else '':<8} {r.namespace}  [{r.status}]")


@ontology_group.command("check")
@click.argument("extension")
@click.option("-C", "--project", type=click.Path(path_type=Path), default=".", show_default=True,
              help="Project root (relative extension paths are resolved from it).")
@click.option("--no-reasoner", is_flag=True, help="Skip the owlready2/HermiT consistency check (it needs Java, ~2 s).")
@json_option
@boundary
def check_cmd(extension: str, project: Path, no_reasoner: bool, as_json: bool) -> None:
    """Check EXTENSION (a shipped name or a folder) without loading it anywhere; exit 6 when rejected.

    Checks: it parses; every term has rdfs:label and rdfs:comment; it redefines no UKO (or standard)
    term; all its terms are in its own namespace; shapes.ttl is valid SHACL (SHACL-SHACL) in the subset
    acms compiles; rules parse and only insert; OWL consistency with UKO by HermiT when Java is present.
    """
    ext = Index.check_extension(extension, project, reasoner=not no_reasoner)
    report = ext.report
    if as_json:
        echo_json(report.as_dict())
    else:
        click.echo(f"{ext.name} {ext.version} ({ext.namespace}), checks: {', '.join(report.checks_run)}")
        for f in report.findings:
            click.echo(f"  {f.level.value}: [{f.check}] {f.message}")
        click.echo("ok" if report.ok else f"rejected: {len(report.errors())} error(s)")
    if not report.ok:
        raise ExtensionRejected(f"extension {ext.name} rejected: {len(report.errors())} error(s)")


@ontology_group.command("add")
@click.argument("extension")
@project_options
@click.option("--no-reasoner", is_flag=True, help="Skip the owlready2/HermiT consistency check.")
@json_option
@boundary
def add_cmd(extension: str, project: Path, store: Path | None, no_reasoner: bool, as_json: bool) -> None:
    """Check EXTENSION, register it in the project's config, load it and run its rules over the index.

    The config file is acms.toml (or [tool.acms] in pyproject.toml). The ontology graph and the rules'
    triples are written in one validated transaction; adding an extension again re-runs its rules.
    """
    with open_index(project, store, write=True) as idx:
        change = idx.ontology.add(extension, reasoner=not no_reasoner)
    if as_json:
        data = {k: v for k, v in vars(change).items() if k != "report"}
        data["check"] = change.report.as_dict() if change.report else None
        echo_json(data)
        return
    notes = [f for f in (change.report.findings if change.report else []) if f.level is not Level.ERROR]
    for f in notes:
        click.echo(f"  {f.level.value}: [{f.check}] {f.message}")
    click.echo(f"added {change.extension} {change.version}: {change.ontology_triples} ontology triples, "
               f"{change.added} triples derived by its rules" + (f" ({change.removed} stale removed)" if change.removed else ""))
    click.echo(f"  registered in {change.config}")


@ontology_group.command("remove")
@click.argument("extension")
@project_options
@json_option
@boundary
def remove_cmd(extension: str, project: Path, store: Path | None, as_json: bool) -> None:
    """Unregister EXTENSION and remove its ontology and every triple its rules derived (nothing else)."""
    with open_index(project, store, write=True) as idx:
        change = idx.ontology.remove(extension)
    if as_json:
        echo_json({k: v for k, v in vars(change).items() if k != "report"})
        return
    click.echo(f"removed {change.extension}: {change.ontology_triples} ontology triples, {change.removed} derived triples")
    click.echo(f"  unregistered in {change.config}")


@ontology_group.command("describe")
@click.argument("term")
@project_options
@json_option
@boundary
def describe_cmd(term: str, project: Path, store: Path | None, as_json: bool) -> None:
    """Label, comment, super/sub classes, domain/range and instance count of TERM (api:Endpoint, uko:Function, Function)."""
    with open_index(project, store) as idx:
        d = idx.ontology.describe(term)
    if as_json:
        echo_json(vars(d))
        return
    click.echo(f"{d.curie}  <{d.iri}>")
    click.echo(f"  label:      {d.label}")
    click.echo(f"  comment:    {d.comment}")
    click.echo(f"  type:       {', '.join(d.kinds)}")
    for label, values in (("subclass of", d.superclasses), ("subclasses", d.subclasses), ("domain", d.domain),
                          ("range", d.range)):
        if values:
            click.echo(f"  {label + ':':<11} {', '.join(values)}")
    click.echo(f"  instances:  {d.instances}" + (f" (used in {d.uses} triples)" if d.uses else ""))
