"""``acms eval``: retrieval quality and latency per strategy on a fixture set."""

from __future__ import annotations

from pathlib import Path

import click

from acms.cli.assemble_cmd import strategies_option
from acms.cli.common import boundary, echo_json, json_option, open_index, project_options
from acms.evaluation.harness import BASELINE, RATIO_KEYS, evaluate, load_cases

COLUMNS = ["recall@1", "recall@5", "recall@10", "mrr", "ndcg@10", "p@5", "token_efficiency",
           "latency_p50_ms", "latency_p95_ms"]
OVERLAP_COLUMNS = ["overlap_recall@1", "overlap_recall@5", "overlap_recall@10", "overlap_mrr"]


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

    Prints Recall@1/5/10, MRR, nDCG@10, P@5, token efficiency (gold tokens / used tokens) and latency,
    ranks counted in distinct files (path gold) or entities (name gold); for path::name gold also
    recall and MRR by line overlap. A BM25 baseline over 40-line windows of the same index is scored
    in the same run, with each strategy's ratio to it.
    """
    cases = load_cases(fixtures)
    with open_index(project, store, strategies_dirs=strategies_dir, record_use=False) as index:
        names = list(strategies) or [*index.registry.names(), "auto"]
        for n in names:
            if n != "auto":
                index.registry.get(n)
        result = evaluate(cases, index, names, budget)
    if as_json:
        echo_json({"cases": len(cases), "budget": budget, **result.as_json()})
        return
    table = {**result.strategies, f"{BASELINE} (baseline)": result.baseline}
    columns = COLUMNS + [c for c in OVERLAP_COLUMNS if any(c in row for row in table.values())]
    click.echo(f"{len(cases)} cases, budget {budget} tokens")
    click.echo(f"{'strategy':<24}" + "".join(f"{c:>20}" for c in columns))
    for name, row in table.items():
        click.echo(f"{name:<24}" + "".join(f"{row.get(c, '-'):>20}" for c in columns))
    click.echo("")
    click.echo(f"ratio to {BASELINE}" + "".join(f"{k:>12}" for k in RATIO_KEYS))
    for name, ratios in result.ratio().items():
        click.echo(f"{name:<24}" + "".join(f"{'-' if v is None else f'{v:.2f}x':>12}" for v in ratios.values()))
