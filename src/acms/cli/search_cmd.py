"""``acms search``, ``acms embeddings status``, ``acms reindex --embeddings``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from acms.cli import relay
from acms.cli.common import (boundary, echo_json, json_option, open_index, project_options, refresh_option, relay_answer,
                             stale_lines)
from acms.errors import UsageError
from acms.results import SearchMode as Mode

if TYPE_CHECKING:  # the engine is imported once the command runs it, not for an answer a watcher gives
    from acms.api import Index

PROVIDERS = ["lsa", "openai", "local"]


@click.command("search")
@click.argument("text")
@click.option("--mode", type=click.Choice([m.value for m in Mode]), default="hybrid", show_default=True,
              help="keyword (BM25), vector (embeddings) or hybrid (both, 50/50).")
@click.option("-k", "k", type=int, default=10, show_default=True, help="How many fragments to return.")
@refresh_option
@project_options
@json_option
@boundary
def search_cmd(text: str, mode: str, k: int, refresh: str | None, project: Path, store: Path | None,
               as_json: bool) -> None:
    """Rank fragments for TEXT and print them with path:start-end, score and why."""
    answer = relay_answer("search", project, store, refresh, {"text": text, "mode": mode, "k": k, "json": as_json})
    if answer is None:
        with open_index(project, store, refresh=refresh) as idx:
            answer = searched(idx, text, mode, k, as_json)
    for line in answer.get("stderr", []):
        click.echo(line, err=True)
    click.echo(answer["stdout"])


def searched(index: Index, text: str, mode: str, k: int, as_json: bool) -> dict[str, Any]:
    """What ``acms search`` prints of a search: the hits on stdout (text or JSON), the note on files it
    answered without and the search's warnings on stderr."""
    result = index.search(text, mode, k)
    stale = index.stale
    notes = stale_lines(stale)
    if as_json:
        return {"stderr": notes, "stdout": json.dumps({
            "hits": [{"fragment": h.fragment, "entity": h.entity, "name": h.name, "kind": h.kind, "lod": h.lod,
                      "source_ref": h.source_ref, "score": round(h.score, 6), "keyword": round(h.keyword, 6),
                      "vector": round(h.vector, 6), "why": h.why, "tier": h.tier} for h in result.hits],
            "warnings": result.warnings,
            "stale_files": list(stale),
            "timings_ms": {k: round(v, 2) for k, v in result.timings_ms.items()},
        }, indent=2, sort_keys=True, default=str)}
    notes += [f"warning: {w}" for w in result.warnings]
    lines = [] if result.hits else ["no matching fragments"]
    for i, h in enumerate(result.hits, 1):
        first = next((ln.strip() for ln in h.text.splitlines() if ln.strip()), "")
        lines += [f"{i:>3}. {h.score:.3f}  {h.source_ref}  {h.name} ({h.kind})  [{h.why}]", f"       {first[:100]}"]
    return {"stderr": notes, "stdout": "\n".join(lines)}


def answer_search(index: Index) -> relay.Handler:
    """``acms search`` as ``acms watch`` answers it for the command (``acms.cli.relay``)."""

    def search(message: dict[str, Any]) -> dict[str, Any]:
        return searched(index, str(message["text"]), str(message["mode"]), int(message["k"]), bool(message["json"]))

    return search


@click.group("embeddings")
def embeddings_group() -> None:
    """Inspect the vectors stored in the index."""


@embeddings_group.command("status")
@project_options
@json_option
@boundary
def embeddings_status(project: Path, store: Path | None, as_json: bool) -> None:
    """Model, dimensions, coverage and staleness of the stored vectors."""
    with open_index(project, store) as idx:
        status = idx.embeddings.status()
    data = status.as_dict()
    total, embedded, configured, problem = status.fragments, status.embedded, status.configured_model, \
        status.provider_problem
    if as_json:
        echo_json(data)
        return
    click.echo(f"model:     {data['model'] or '(none: run acms index)'}  dims {data['dimensions']}")
    click.echo(f"coverage:  {embedded}/{total} searchable fragments ({100 * data['coverage']:.1f}%)"
               + ("  STALE: run acms index" if data["stale"] else ""))
    click.echo(f"provider:  {data['configured_provider']} -> {configured or problem}")
    if data["mismatch"]:
        click.echo("mismatch:  the configured provider differs from the index's model; run `acms reindex --embeddings`")


@click.command("reindex")
@click.option("--embeddings", is_flag=True, help="Recompute every vector (required: the only reindex kind so far).")
@click.option("--provider", type=click.Choice(PROVIDERS), default=None,
              help="Provider to migrate to (default: the configured embedding_provider).")
@click.option("--progress/--quiet", "progress", default=None,
              help="Progress on stderr (the model's fit, then the vectors): a bar on a terminal, a line every "
                   "10 s elsewhere, none with --json; --progress also with --json and a line per phase; --quiet never.")
@project_options
@json_option
@boundary
def reindex_cmd(embeddings: bool, provider: str | None, progress: bool | None, project: Path, store: Path | None,
                as_json: bool) -> None:
    """Recompute derived data; `--embeddings` migrates every vector to a provider, atomically.

    All vectors are computed first and swapped for the old ones in one transaction: an interrupted
    migration leaves the old vectors in place and usable.
    """
    from acms.cli.progress import Phases, reporter

    if not embeddings:
        raise UsageError("say what to reindex: --embeddings")
    with open_index(project, store, write=True, embedding_provider=provider) as idx:
        report = idx.embeddings.migrate(phases=Phases(reporter(progress, as_json)))
    if as_json:
        echo_json(vars(report))
    else:
        click.echo(f"migrated {report.embedded} fragments to {report.model_id} in {report.seconds:.1f}s")
        if provider and provider != "lsa":
            click.echo(f"  set embedding_provider = \"{provider}\" in acms.toml so queries use it too")
