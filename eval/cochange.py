"""Does co-change help the first stage find the files a change needs? Simulated, before building it.

Co-change (files changed in the same commits) is the graph signal the literature reports as the
strongest for this task, but the dev set's snapshots carry no history. This script takes a project
indexed with ``acms index --history N`` at a past commit, and queries mined from the commits after
it (``eval/acms-history.jsonl``: acms's own history, mined with the dev set's ``mine_queries.py`` at
``--lo 0.5 --windows 1 -n 80 --skip-newest 3 --hi 1.0`` and its limits relaxed to at most 40 files,
6 source files, 3,000 changed lines and 60 % file drift, since acms's commits are large; snapshot
ecc4827abe, 127 commits of history before it). It ranks files by the first stage (:func:`file_scores`)
and then by that score plus ``γ ×`` what the ``K`` best files lend the files they changed with:

    s'(j) = s(j) + γ Σ_{i in top K} s(i) · P(j | i),   P(j | i) = Σ_{commits touching i and j} 1/(n - 1) / commits(i)

over commits of 2 to ``MAX_FILES`` files (n: the commit's files). It prints file MRR, R@1 and R@5 per
setting beside the first stage alone.

    git worktree add --detach /tmp/snap ecc4827abe && acms index /tmp/snap --history 1000
    python eval/cochange.py /tmp/snap eval/acms-history.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from acms import Index
from acms.ranking.rank import _norm, file_scores
from acms.sparql import catalog


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("project", type=Path)
    ap.add_argument("queries", type=Path)
    args = ap.parse_args()
    cases = [json.loads(line) for line in args.queries.read_text(encoding="utf-8").splitlines() if line.strip()]
    with Index.open(args.project, mode="read") as idx:
        ranking = idx.searcher.caches.ranking()
        number = {p: i for i, p in enumerate(ranking.files)}
        commits: dict[str, set[int]] = {}
        for r in idx.searcher.store.select(catalog.text("evaluation/commit-files")):
            if r["path"].value in number:
                commits.setdefault(r["change"].value, set()).add(number[r["path"].value])
        base = [file_scores(c["query"], ranking).score for c in cases]
    n = len(ranking.files)

    def scores(ranked: list[np.ndarray]) -> str:
        rr, r1, r5 = [], [], []
        for s, case in zip(ranked, cases, strict=True):
            order = np.lexsort((np.arange(s.size), -s))
            order = order[s[order] > 0].tolist()
            gold = {number[g] for g in case["gold_files"] if g in number}
            ranks = [k for k, f in enumerate(order, 1) if f in gold]
            rr.append(1 / ranks[0] if ranks else 0.0)
            r1.append(sum(r <= 1 for r in ranks) / len(gold))
            r5.append(sum(r <= 5 for r in ranks) / len(gold))
        return f"| {np.mean(rr):.3f} | {np.mean(r1):.3f} | {np.mean(r5):.3f} |"

    print(f"{len(cases)} queries, {len(commits)} commits, {n} files\n")
    print("| setting | file MRR | R@1 | R@5 |\n| --- | --- | --- | --- |")
    print("| first stage alone " + scores(base))
    for max_files in (10, 40):
        together, touched = np.zeros((n, n)), np.zeros(n)
        for files in commits.values():
            if 2 <= len(files) <= max_files:
                at = np.fromiter(files, dtype=np.int64)
                touched[at] += 1
                together[np.ix_(at, at)] += 1.0 / (len(files) - 1)
        np.fill_diagonal(together, 0)
        given = together / np.maximum(touched, 1)[:, None]
        for k in (3, 10):
            for gamma in (0.1, 0.2, 0.4):
                out = []
                for s in base:
                    top = np.lexsort((np.arange(s.size), -s))[:k]
                    out.append(_norm(s + gamma * (s[top][:, None] * given[top]).sum(0)))
                print(f"| co-change, commits of ≤ {max_files} files, K {k}, γ {gamma} " + scores(out))


if __name__ == "__main__":
    main()
