"""A symbol fixture re-scored the way the held-out miner scores class code in TypeScript (and the dev
set's in JavaScript): there a method is not a symbol of its own, so a change inside a method has its
class as the gold. This writes ``NAME.symbols.jsonl`` with each method's gold (``path::Class.method``)
replaced by its class (``path::Class``), classes told from functions by the project's index (a class
body in the ranking cache), so ``acms eval`` on it shows how acms serves class-level gold on code
whose classes it knows.

    python eval/class_gold.py PROJECT FIXTURE > class.symbols.jsonl
    acms eval class.symbols.jsonl -C PROJECT --budget 8000
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from acms import Index
from acms.ranking.index import CONTAINER


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("project", type=Path)
    ap.add_argument("fixture", type=Path)
    ap.add_argument("--store", type=Path, default=None)
    args = ap.parse_args()
    with Index.open(args.project, store=args.store, mode="read") as idx:
        ranking = idx.searcher.caches.ranking()
        classes = {(ranking.files[int(file)], ranking.qualified[i])
                   for i, (file, _, _, container) in enumerate(ranking.locations.tolist())
                   if container == CONTAINER["Class"]}
    for line in args.fixture.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        gold = []
        for g in case["gold"]:
            path, _, qual = g.partition("::")
            owner = qual.rpartition(".")[0]
            is_method = owner and any(p == path and (q == owner or q.endswith("." + owner)) for p, q in classes)
            gold.append(f"{path}::{owner}" if is_method else g)
        sys.stdout.write(json.dumps(case | {"gold": list(dict.fromkeys(gold))}) + "\n")


if __name__ == "__main__":
    main()
