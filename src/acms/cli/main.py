"""The ``acms`` command group. Each command group lives in its own module, imported only when run.

Why lazy: the command modules pull in the engine (numpy, pyoxigraph, the ingest stack), so importing
them all made every command, ``--help`` included, pay 1.5-2.8 s before doing anything.
``COMMANDS`` names where each command lives and its one-line help for the listing;
``tests/test_startup.py`` checks that the lines agree with the commands' own help and that the read
path imports no scipy, pyshacl or owlready2.
"""

from __future__ import annotations

import gc
import importlib

import click

from acms import __version__
from acms.cli.common import leave, set_option
from acms.memory import RARE_THRESHOLDS

EXIT_CODES = """\b
Exit codes: 0 ok, 1 error / store does not conform, 2 bad input, 3 query error,
4 store error (locked, missing), 5 batch failed validation, 6 bad configuration,
7 embedding provider error or model mismatch."""

# name -> (module, attribute, short help shown by ``acms --help``)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "index": ("acms.cli.index_cmd", "index_cmd",
              "Index the project at PATH (default: the current directory) into its on-disk graph."),
    "config": ("acms.cli.config_cmd", "config_cmd",
               "Show the effective settings (defaults < acms.toml / [tool.acms] < ACMS_* < flags and --set), "
               "each with its type and source."),
    "stats": ("acms.cli.index_cmd", "stats_cmd",
              "Counts per class, named graph and language; store size; the last index run."),
    "validate": ("acms.cli.index_cmd", "validate_cmd",
                 "Re-validate the whole store against the SHACL shapes with pyshacl (slow: ~70 µs per triple)."),
    "sparql": ("acms.cli.sparql_cmd", "sparql_cmd",
               "Run a SPARQL query against the index: SELECT, ASK, CONSTRUCT or DESCRIBE."),
    "search": ("acms.cli.search_cmd", "search_cmd",
               "Rank fragments for TEXT and print them with path:start-end, score and why."),
    "embeddings": ("acms.cli.search_cmd", "embeddings_group", "Inspect the vectors stored in the index."),
    "reindex": ("acms.cli.search_cmd", "reindex_cmd",
                "Recompute derived data; `--embeddings` migrates every vector to a provider, atomically."),
    "assemble": ("acms.cli.assemble_cmd", "assemble_cmd",
                 "Assemble the context for TASK within --budget tokens, with path:line provenance."),
    "render": ("acms.cli.assemble_cmd", "render_cmd",
               "Answer a render_request.v0 (a JSON file, or - for stdin) with a render_context_reply.v0."),
    "strategies": ("acms.cli.assemble_cmd", "strategies_cmd",
                   "List the strategies with their quality, what they need, and their budget split."),
    "eval": ("acms.cli.eval_cmd", "eval_cmd",
             'Score strategies on FIXTURES.jsonl (one {"query": ..., "gold": [paths or symbols]} per line).'),
    "export": ("acms.cli.export_cmd", "export_cmd",
               "Export the whole graph (default), a tier, the module graph, a neighbourhood or a CONSTRUCT result."),
    "serve": ("acms.cli.serve_cmd", "serve_cmd",
              "Serve the index over HTTP: /sparql, /store, the render API and the /v0 reads."),
    "mcp": ("acms.cli.mcp_cmd", "mcp_cmd",
            "Serve this project's index to a coding agent over MCP (stdio by default)."),
    "tiers": ("acms.cli.temporal_cmd", "tiers_group",
              "Triples and entities per tier (hot, warm, cold) and the policy that assigns them."),
    "describe": ("acms.cli.describe_cmd", "describe_cmd",
                 "Kind, location, signature, docstring, callers, callees and members of one ENTITY."),
    "watch": ("acms.cli.watch_cmd", "watch_cmd",
              "Follow the project: refresh the index shortly after files are saved, a line per refresh."),
    "history": ("acms.cli.temporal_cmd", "history_cmd",
                "Versions and commits of one ENTITY (qualified name or its end, Class.method; name, path, path::Qualified.name or IRI)."),
    "plan": ("acms.cli.plan_cmd", "plan_group",
             "Plans: named units of work (with sub-plans) that decisions are recorded in."),
    "decision": ("acms.cli.plan_cmd", "decision_group",
                 "Decisions: record them in a plan, about entities of the project, superseding older ones."),
    "ontology": ("acms.cli.ontology_cmd", "ontology_group",
                 "Ontology extensions: teach acms a domain's classes, shapes and rules (e.g. web-api endpoints)."),
}


def load_command(name: str) -> click.Command:
    """Import the module that defines command ``name`` (KeyError for an unknown name)."""
    module, attribute, _ = COMMANDS[name]
    command = getattr(importlib.import_module(module), attribute)
    assert isinstance(command, click.Command)
    return command


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use; the listing comes from ``COMMANDS``."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name not in COMMANDS:
            return None
        return self.commands.setdefault(cmd_name, load_command(cmd_name))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The listing without importing any command: the short help lines of ``COMMANDS``."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            if name in COMMANDS:
                rows.append((name, click.utils.make_default_short_help(COMMANDS[name][2], limit)))
            else:
                rows.append((name, self.commands[name].get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             epilog=EXIT_CODES)
@click.version_option(__version__, prog_name="acms")
@set_option
def cli(set_values: dict[str, str]) -> None:
    """acms: index a project into a knowledge graph and assemble LLM context from it."""


def main() -> None:
    """The ``acms`` console script: the command, then ``common.leave`` with its exit status. The cyclic
    collector runs at an index run's rare thresholds from the start (``memory.RARE_THRESHOLDS``): a
    command's objects are freed by reference counting, and at the default ones its imports alone set
    off ~110 young collections (~20 ms of a one-file ``acms index``)."""
    gc.set_threshold(*RARE_THRESHOLDS)
    code: object = 0
    try:
        cli(prog_name="acms")
    except SystemExit as exc:
        code = exc.code
    leave(code)
