"""``acms eval``: retrieval quality and latency per strategy on a fixture set."""

from __future__ import annotations

from pathlib import Path

import click

from acms.cli.assemble_cmd import open_searcher, strategies_option
from acms.cli.common import boundary, echo_json, json_option, project_options
from acms.evaluation.harness import evaluate, load_cases
from acms.strategies.registry import StrategyRegistry

COLUMNS = ["recall@1", "recall@5", "recall@10", "mrr", "ndcg@10", "p@5", "token_efficiency",
           "latency_p50_ms", "latency_p95_ms"]


@click.command("eval")
@click.argument("fixtures", type=click.Path(path_type=Path))
@click.option("--strategy", "strategies", multiple=True, help="Strategy to evaluate (repeatable; default: all + auto).")
@click.option("--budget", type=int, default=4000, show_default=True, help="Token budget per query.")
@strategies_option
@project_options
@json_option
@boundary
def eval_cmd(fixtures: Path, strategies: tuple[str, ...], budget: int, strategies_dir: tuple[Path, ...],
             project: Path, store: Path | None, as_json: bool) -> None:
    """Score strategies on FIXTURES.jsonl (one {"query": ..., "gold": [paths or symbols]} per line).

    Prints Recall@1/5/10, MRR, nDCG@10, P@5, token efficiency (gold tokens / used tokens) and latency.
    """
    cases = load_cases(fixtures)
    registry = StrategyRegistry.default(strategies_dir)
    names = list(strategies) or [*registry.names(), "auto"]
    for n in names:
        if n != "auto":
            registry.get(n)
    graph, searcher = open_searcher(project, store)
    try:
        table = evaluate(cases, searcher, registry, names, budget)
    finally:
        graph.close()
    if as_json:
        echo_json({"cases": len(cases), "budget": budget, "strategies": table})
        return
    click.echo(f"{len(cases)} cases, budget {budget} tokens")
    click.echo(f"{'strategy':<24}" + "".join(f"{c:>18}" for c in COLUMNS))
    for name, row in table.items():
        click.echo(f"{name:<24}" + "".join(f"{row[c]:>18}" for c in COLUMNS))
