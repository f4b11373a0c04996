"""Are the first stage's fusion weights fitted to the dev set? Leave one repository out and see.

The first stage scores a file ``(norm(best window) + PATH_WEIGHT * norm(path) + NAMES_WEIGHT *
norm(names)) * role factor`` (:mod:`acms.ranking.rank`). This script takes the indexes a dev-set run
built (``DEVSET_WORK`` of ``run.sh``), and for each repository picks the weights that maximise file
MRR on the *other* repositories (a grid), then scores the held-out one with them. It prints, per
repository: the shipped weights, the weights fitted without it and their MRR on it, and reciprocal
rank fusion (RRF, k = 60) of the three rankings, which has no weight at all. If the fitted-elsewhere
column is close to the shipped one, the weights carry over; if RRF were as good, weights would not
be worth having.

    python eval/fusion_cv.py --work $DEVSET_WORK --devset path/to/devset [--names httpx,gin]

File MRR here is the first stage's file order alone (what ``acms eval`` sees before packing), so
it is close to, not equal to, ``run.sh``'s figures.
"""

from __future__ import annotations

import argparse
import itertools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from acms import Index
from acms.ranking import rank as first_stage
from acms.ranking.roles import AUX_FACTOR, role_factors

GRID_PATH = (0.0, 0.1, 0.2, 0.3, 0.5, 0.8)
GRID_NAMES = (0.0, 0.2, 0.3, 0.5, 0.8, 1.2)
GRID_AUX = (0.2, 0.3, 0.5)
RRF_K = 60


@dataclass
class Query:
    window: np.ndarray  # per file: best window score, normalised to the best file
    path: np.ndarray
    names: np.ndarray
    roles: dict[str, np.ndarray]  # aux factor → role factor per file
    gold: np.ndarray  # file numbers


def _norm(x: np.ndarray) -> np.ndarray:
    top = float(x.max()) if x.size else 0.0
    return x / top if top > 0 else x


def load(work: Path, devset: Path, name: str) -> list[Query]:
    corpus = next((work / "corpora").glob(f"{name}-*"))
    out = []
    with Index.open(corpus, store=work / "stores" / name) as idx:
        index = idx.searcher.caches.ranking()
        number = {p: i for i, p in enumerate(index.files)}
        for line in (devset / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            task = case["query"]
            ws = index.windows.scores(task, unique=True).astype(np.float64)
            best = np.zeros(len(index.files))
            np.maximum.at(best, np.asarray(index.window_file), ws)
            roles = {}
            for aux in GRID_AUX:
                factors = {r: (f if f == 1.0 else f * aux / AUX_FACTOR) for r, f in role_factors(task).items()}
                roles[str(aux)] = index.roles_array(factors)
            gold = np.asarray([number[g] for g in case["gold"] if g in number], dtype=np.int64)
            out.append(Query(_norm(best), _norm(index.paths.scores(task, unique=True).astype(np.float64)),
                             _norm(index.names.scores(task, unique=True).astype(np.float64)), roles, gold))
    return out


def rr(score: np.ndarray, gold: np.ndarray) -> float:
    if not gold.size or score[gold].max() <= 0:
        return 0.0
    order = np.lexsort((np.arange(score.size), -score))
    ranks = np.flatnonzero(np.isin(order, gold))
    return 1.0 / (ranks[0] + 1)


def mrr(queries: list[Query], a: float, b: float, aux: float) -> float:
    return float(np.mean([rr((q.window + a * q.path + b * q.names) * q.roles[str(aux)], q.gold) for q in queries]))


def rrf(queries: list[Query]) -> float:
    def ranks(x: np.ndarray) -> np.ndarray:
        r = np.empty(x.size)
        r[np.lexsort((np.arange(x.size), -x))] = np.arange(1, x.size + 1)
        return np.where(x > 0, 1.0 / (RRF_K + r), 0.0)
    return float(np.mean([rr((ranks(q.window) + ranks(q.path) + ranks(q.names)) * q.roles[str(AUX_FACTOR)], q.gold)
                          for q in queries]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="a dev-set run's DEVSET_WORK (corpora/, stores/)")
    parser.add_argument("--devset", type=Path, required=True, help="the dev set folder (NAME.jsonl fixtures)")
    parser.add_argument("--names", default="httpx,werkzeug,jinja,attrs,gin,axios")
    args = parser.parse_args()
    names = args.names.split(",")
    data = {n: load(args.work, args.devset, n) for n in names}
    shipped = (first_stage.PATH_WEIGHT, first_stage.NAMES_WEIGHT, AUX_FACTOR)
    grid = list(itertools.product(GRID_PATH, GRID_NAMES, GRID_AUX))
    table = {n: {g: mrr(data[n], *g) for g in grid} for n in names}
    print(f"{'repository':<10} | {'shipped':>7} | {'fitted on the others (path, names, aux)':>40} | {'held out':>8} | {'RRF':>6}")
    print("-" * 84)
    total = {"shipped": [], "cv": [], "rrf": []}
    for n in names:
        others = [m for m in names if m != n]
        weight = {m: len(data[m]) for m in others}
        best = max(grid, key=lambda g: (sum(table[m][g] * weight[m] for m in others), -abs(g[0] - shipped[0])))
        row = (table[n][shipped], table[n][best], rrf(data[n]))
        for key, v in zip(total, row):
            total[key].append((v, len(data[n])))
        print(f"{n:<10} | {row[0]:7.3f} | {str(best):>40} | {row[1]:8.3f} | {row[2]:6.3f}")
    avg = {k: sum(v * c for v, c in xs) / sum(c for _, c in xs) for k, xs in total.items()}
    print("-" * 84)
    print(f"{'all':<10} | {avg['shipped']:7.3f} | {'':>40} | {avg['cv']:8.3f} | {avg['rrf']:6.3f}")


if __name__ == "__main__":
    main()
