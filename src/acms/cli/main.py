"""The ``acms`` command group. Each command group lives in its own module."""

from __future__ import annotations

import click

from acms import __version__
from acms.cli.common import set_option
from acms.cli.config_cmd import config_cmd
from acms.cli.assemble_cmd import assemble_cmd, render_cmd, strategies_cmd
from acms.cli.eval_cmd import eval_cmd
from acms.cli.export_cmd import export_cmd
from acms.cli.mcp_cmd import mcp_cmd
from acms.cli.index_cmd import index_cmd, stats_cmd, validate_cmd
from acms.cli.plan_cmd import decision_group, plan_group
from acms.cli.ontology_cmd import ontology_group
from acms.cli.search_cmd import embeddings_group, reindex_cmd, search_cmd
from acms.cli.serve_cmd import serve_cmd
from acms.cli.sparql_cmd import sparql_cmd
from acms.cli.temporal_cmd import history_cmd, tiers_group

EXIT_CODES = """\b
Exit codes: 0 ok, 1 error / store does not conform, 2 bad input, 3 query error,
4 store error (locked, missing), 5 batch failed validation, 6 bad configuration,
7 embedding provider error or model mismatch."""


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}, epilog=EXIT_CODES)
@click.version_option(__version__, prog_name="acms")
@set_option
def cli(set_values: dict[str, str]) -> None:
    """acms: index a project into a knowledge graph and assemble LLM context from it."""


cli.add_command(index_cmd)
cli.add_command(config_cmd)
cli.add_command(stats_cmd)
cli.add_command(validate_cmd)
cli.add_command(sparql_cmd)
cli.add_command(search_cmd)
cli.add_command(embeddings_group)
cli.add_command(reindex_cmd)
cli.add_command(assemble_cmd)
cli.add_command(render_cmd)
cli.add_command(strategies_cmd)
cli.add_command(eval_cmd)
cli.add_command(export_cmd)
cli.add_command(serve_cmd)
cli.add_command(mcp_cmd)
cli.add_command(tiers_group)
cli.add_command(history_cmd)
cli.add_command(plan_group)
cli.add_command(decision_group)
cli.add_command(ontology_group)


def main() -> None:
    cli(prog_name="acms")
