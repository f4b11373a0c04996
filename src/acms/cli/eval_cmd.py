"""``acms eval``: retrieval quality and latency per strategy on a fixture set; needed context (edit sites,
deps, callees) when the fixtures carry that gold."""

from __future__ import annotations

from pathlib import Path

import click

from acms.cli.assemble_cmd import strategies_option
from acms.cli.common import boundary, echo_json, json_option, open_index, project_options
from acms.evaluation.context import BASELINE as CONTEXT_BASELINE
from acms.evaluation.context import MODES, ContextEvaluation, evaluate_context, is_context_fixture, load_context_cases
from acms.evaluation.harness import BASELINE, RATIO_KEYS, evaluate, load_cases

COLUMNS = ["recall@1", "recall@5", "recall@10", "mrr", "ndcg@10", "p@5", "token_efficiency",
           "latency_p50_ms", "latency_p95_ms"]
OVERLAP_COLUMNS = ["overlap_recall@1", "overlap_recall@5", "overlap_recall@10", "overlap_mrr"]
CONTEXT_COLUMNS = ["edit_recall", "dep_recall", "dep_shown", "callee_recall", "callee_shown", "complete", "tokens",
                   "budget_used"]


@click.command("eval")
@click.argument("fixtures", type=click.Path(path_type=Path))
@click.option("--strategy", "strategies", multiple=True, help="Strategy to evaluate (repeatable; default: all + auto).")
@click.option("--budget", type=int, default=4000, show_default=True, help="Token budget per query.")
@click.option("--mode", "modes", multiple=True, type=click.Choice(MODES),
              help="Needed-context fixtures: task text only, or with the first edit site as focus (repeatable; default: both).")
@strategies_option
@project_options
@json_option
@boundary
def eval_cmd(fixtures: Path, strategies: tuple[str, ...], budget: int, modes: tuple[str, ...],
             strategies_dir: tuple[Path, ...], project: Path, store: Path | None, as_json: bool) -> None:
    """Score strategies on FIXTURES.jsonl (one {"query": ..., "gold": [paths or symbols]} per line).

    Prints Recall@1/5/10, MRR, nDCG@10, P@5, token efficiency (gold tokens / used tokens) and latency,
    ranks counted in distinct files (path gold) or entities (name gold); for path::name gold also
    recall and MRR by line overlap. A BM25 baseline over 40-line windows of the same index is scored
    in the same run, with each strategy's ratio to it.

    Needed-context fixtures (each line with "edit_sites", "deps" and "callees": docs/evaluation.md) are
    scored instead by edit-site, dependency and callee recall, complete contexts and tokens used, in
    task and focus modes, beside bm25-dedup (BM25 over 40-line windows packed to the same budget, an
    overlap paid once).
    """
    if is_context_fixture(fixtures):
        _context(fixtures, strategies, budget, modes or MODES, strategies_dir, project, store, as_json)
        return
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


def _context(fixtures: Path, strategies: tuple[str, ...], budget: int, modes: tuple[str, ...],
             strategies_dir: tuple[Path, ...], project: Path, store: Path | None, as_json: bool) -> None:
    cases = load_context_cases(fixtures)
    with open_index(project, store, strategies_dirs=strategies_dir, record_use=False) as index:
        names = list(strategies) or ["auto"]
        for n in names:
            if n != "auto":
                index.registry.get(n)
        result = evaluate_context(cases, index, names, budget, tuple(modes))
    if as_json:
        echo_json({"cases": len(cases), **result.as_json()})
        return
    _context_table(result)


def _cell(value: float | None, column: str) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}" if column == "tokens" else f"{100 * value:.1f}"


def _context_table(result: ContextEvaluation) -> None:
    g = result.gold
    click.echo(f"{g['cases']} cases ({g['with_edit_sites']} with edit sites: {g['edit_sites']}, {g['with_deps']} with "
               f"deps: {g['deps']}, {g['with_callees']} with callees: {g['callees']}), budget {result.budget} tokens; "
               "figures in %, tokens as counted")
    rows = [(name, mode, metrics) for name, by_mode in result.strategies.items() for mode, metrics in by_mode.items()]
    rows += [(f"{CONTEXT_BASELINE} (baseline)", mode, metrics) for mode, metrics in result.baseline.items()]
    click.echo(f"{'system':<24}{'mode':<7}" + "".join(f"{c:>14}" for c in CONTEXT_COLUMNS))
    for name, mode, metrics in rows:
        click.echo(f"{name:<24}{mode:<7}" + "".join(f"{_cell(metrics.get(c), c):>14}" for c in CONTEXT_COLUMNS))
