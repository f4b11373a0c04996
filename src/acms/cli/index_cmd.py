"""``acms index``, ``acms stats``, ``acms validate``."""

from __future__ import annotations

from pathlib import Path

import click

from acms.api import Index
from acms.cli.common import (
    STORE,
    boundary,
    echo_json,
    json_option,
    open_index,
    project_argument,
    project_options,
    settings_for,
    wait_option,
    wait_seconds,
)
from acms.cli.progress import reporter
from acms.errors import Unsatisfied
from acms.paths import project_root
from acms.results import IndexReport


def _summary(report: IndexReport, store: Path | str, verbose: bool) -> None:
    if report.up_to_date:
        click.echo(f"index is up to date: {report.files_unchanged} files unchanged ({report.seconds:.2f}s)")
    else:
        click.echo(
            f"indexed {report.files_indexed} files ({report.files_unchanged} unchanged, "
            f"{report.files_removed} removed): {report.entities} entities, {report.fragments} fragments, "
            f"{report.triples_written} triples in {report.seconds:.2f}s"
        )
        phases = ", ".join(f"{k} {v:.2f}s" for k, v in report.timings.items())
        click.echo(f"  phases: {phases}")
    if report.embedded:
        click.echo(f"  vectors: {report.embedded} fragments embedded with {report.embedding_model}"
                   + (" (the model fitted again: the project drifted from its fit)" if report.refitted else ""))
    if report.versions_archived:
        click.echo(f"  history: {report.versions_archived} superseded versions moved to the cold tier")
    if report.history is not None:
        h = report.history
        if not h.available or h.commits_ingested == 0:
            click.echo(f"  git history: {h.note}")
        else:
            click.echo(f"  git history: {h.commits_ingested} commits ingested ({h.commits_known} already known), "
                       f"{h.touches} touches, {h.versions} earlier versions of symbols")
    click.echo(f"  tiers: {report.hot_entities} hot entities")
    if report.copies:
        click.echo(f"  copies: {report.copies} files are near-identical copies of another (uko:copyOf); contexts show the originals")
    for note in report.ontology:
        click.echo(f"  ontology: {note}")
    for note in report.notes:
        click.echo(f"  note: {note}")
    if report.derived:
        click.echo(f"  extension rules: {report.derived} triples derived")
    for warning in report.warnings:
        click.echo(f"  warning: {warning}")
    counts = report.skipped_counts()
    if counts:
        click.echo("  skipped: " + ", ".join(f"{n} {reason}" for reason, n in counts.items()))
    for path, err in sorted(report.parse_errors.items()):
        click.echo(f"  indexed as text (parse error): {path}: {err}")
    if verbose:
        for reason, paths in sorted(report.skipped.items()):
            for p in paths:
                click.echo(f"  skip {reason}: {p}")
        for path, message in sorted(report.quarantined.items()):
            click.echo(f"  quarantined: {path}: {message}")
    click.echo(f"  store: {store}")


@click.command("index")
@click.argument("path", type=click.Path(path_type=Path), default=".")
@click.option("--store", type=STORE, default=None,
              help="Index directory, or the http(s):// URL of a SPARQL 1.1 engine (default: PATH/.acms, or the "
                   "`store` setting).")
@click.option("--max-file-bytes", type=int, default=None, help="Skip files larger than this (default 262144).")
@click.option("--exclude", multiple=True, help="Extra gitignore-style pattern to skip (repeatable).")
@click.option("--history", type=click.IntRange(min=0), default=0, metavar="N",
              help="Also ingest the last N git commits (Change nodes, touched files and symbols, the "
                   "versions they ended, into the cold tier). Commits already ingested are skipped.")
@click.option("--verbose", "-v", is_flag=True,
              help="List every skipped file with its reason and every quarantined file with its violation.")
@click.option("--rehash", is_flag=True,
              help="Read and hash every file, not only those whose size or mtime moved since the last run "
                   "(for a filesystem whose mtimes cannot be trusted).")
@click.option("--force", is_flag=True,
              help="In a shared remote store: replace the project's graphs even when another project root (a "
                   "folder of the same name elsewhere) indexed them; refused otherwise, naming that root.")
@click.option("--progress/--quiet", "progress", default=None,
              help="Progress on stderr for every long phase: by default a bar with counts and ETA on a terminal, "
                   "a line every 10 s elsewhere, none with --json; --progress also with --json and a line per "
                   "phase off a terminal; --quiet never.")
@wait_option
@json_option
@boundary
def index_cmd(path: Path, store: Path | None, max_file_bytes: int | None, exclude: tuple[str, ...],
              history: int, verbose: bool, rehash: bool, force: bool, progress: bool | None, as_json: bool) -> None:
    """Index the project at PATH (default: the current directory) into its on-disk graph.

    Lists files with git (or a .gitignore-aware walk), extracts Python symbols and document sections,
    cuts fragments with token counts, validates the batch against the SHACL shapes and writes it in one
    transaction; a file whose triples violate a shape is quarantined (left out, with a warning) and the
    rest is written. The whole run (files, history, tiers, vectors) lands whole or not at all: a failure
    or a kill in any phase leaves the previous index. Re-running on an unchanged project writes nothing;
    after a first run, only files whose size or mtime moved are read (--rehash: every file). File names that are not valid
    UTF-8 or hold control characters are stored escaped (\\xHH, \\n, \\t, \\\\). A changed or deleted file's previous
    entities go to the cold tier as versions; the tier policy (`acms tiers`) is applied at the end.
    """
    root = project_root(path)
    settings = settings_for(root, max_file_bytes=max_file_bytes)
    if exclude:
        settings = settings.merged({"exclude": tuple(settings.exclude) + exclude})
    with Index.open(root, store=store, settings=settings, mode="write", wait=wait_seconds(settings),
                    command=f"acms index {root}", create=True) as index:
        target = index.location
        report = index.index(history=history, progress=reporter(progress, as_json), rehash=rehash, force=force)
    if as_json:
        data = dict(vars(report))
        data["skipped_counts"] = report.skipped_counts()
        data["store"] = str(target)
        data["history"] = report.history.as_dict() if report.history else None
        echo_json(data)
    else:
        _summary(report, target, verbose)


@click.command("stats")
@project_options
@project_argument
@json_option
@boundary
def stats_cmd(project: Path, store: Path | None, as_json: bool) -> None:
    """Counts per class, named graph and language; store size; the last index run."""
    with open_index(project, store) as idx:
        data = idx.stats().as_dict()
    if as_json:
        echo_json(data)
        return
    click.echo(f"store {data['store']}: {data['quads']:,} quads, {data['store_bytes'] / 1e6:.1f} MB")
    click.echo("classes:")
    for name, n in data["classes"].items():
        click.echo(f"  {name:<16} {n:>9,}")
    click.echo("graphs:")
    for name, n in data["graphs"].items():
        click.echo(f"  {name:<44} {n:>9,}")
    click.echo("languages:")
    for name, v in data["languages"].items():
        kinds = ", ".join(f"{n:,} {k}" for k, n in v["symbols"].items())
        click.echo(f"  {name:<16} {v['files']:>6,} files {v['lines']:>9,} lines" + (f"  symbols: {kinds}" if kinds else ""))
    run = data["last_run"]
    if run:
        click.echo(
            f"last run: {run['started']} acms {run['version']}, {run['indexed']} indexed, "
            f"{run['unchanged']} unchanged, {run['removed']} removed, {run['skipped']} skipped"
            + (f", git {run['head'][:12]}" if run.get("head") else "")
        )


@click.command("validate")
@project_options
@project_argument
@json_option
@boundary
def validate_cmd(project: Path, store: Path | None, as_json: bool) -> None:
    """Re-validate the whole store against the SHACL shapes with pyshacl (slow: ~70 µs per triple).

    Exits 1 with one line per violation when the store does not conform.
    """
    with open_index(project, store) as idx:
        result = idx.validate()
    violations = result.violations
    if as_json:
        echo_json(result.as_dict())
    elif not violations:
        click.echo("the store conforms to the shapes")
    else:
        click.echo(f"{len(violations)} violation(s):")
        for v in violations[:200]:
            click.echo(f"  {v}")
    if violations:
        raise Unsatisfied(f"{len(violations)} violation(s) of the shapes")
