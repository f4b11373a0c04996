"""The four keyword indexes updated for one edited file: merged whole (every score made again and every
file written, ``index.splice.spliced_whole``) against layered (the base linked, a delta written,
``index.splice.spliced``), and the query latency of a layered index against a full one.

    python bench/keyword_update.py PROJECT [--file json/decoder.py] [--repeat 5] [--queries 200]

PROJECT is an indexed project whose caches hold a token segment of this acms (``acms index`` after an
edit leaves one). Its caches are copied to a temporary directory first and nothing is written into
PROJECT. The edited file's fragments are read again from the segment (the same texts: what an update
costs does not depend on what changed in them), as ``DerivedCaches`` does: the fragments' index is
spliced with the rows of the file replaced, and the ranking index (``ranking.splice.spliced_ranking``)
splices its windows, paths and names. Each index is then saved (``KeywordIndex.save``) and loaded
again; "written" counts the bytes of files that are not links to the base. The updated indexes must
answer the same queries with the same bits (checked). Latency: ``scores()`` of the fragments' and the
windows' index for 3-word and 60-word queries of words drawn from the index's terms, on the layered
index and on the merged one (a full build's layout), both loaded from disk; the first query of a
loaded layered index also makes its per-document arrays (reported apart). Times are medians of
``--repeat`` runs; the machine is shared, so the load average is printed.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import acms.ranking.splice as ranking_splice
from acms.index.keyword import KeywordIndex
from acms.index.splice import spliced, spliced_whole
from acms.ranking.index import RankingIndex
from acms.retrieval.segment import Segment

NAMES = ("keyword", "windows", "paths", "names")


def written_bytes(directory: Path) -> int:
    """Bytes of the files under ``directory`` that are not hard links shared with another directory."""
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file() and p.stat().st_nlink == 1)


def inputs(cache: Path, path: str) -> tuple[Segment, dict[str, Any], dict[str, Any]]:
    """The segment, and the arguments of the fragments' splice and of the ranking splice for ``path``'s
    fragments read again."""
    segment = Segment.load(cache / "tokens")
    file_number = [i for i, p in enumerate(segment.paths) if p == path]
    if not file_number:
        raise SystemExit(f"{path} is not a file of the index")
    file_of = np.asarray(segment.file_of, dtype=np.int64)
    rows = np.flatnonzero(file_of == file_number[0])
    source = np.arange(len(segment), dtype=np.int64)
    source[rows] = -1
    flat, lengths = segment.documents_of(rows)
    keyword = {"ids": segment.frags, "source": source, "flat": flat, "lengths": lengths,
               "tokens": segment.text.tokens, "numbering": segment.numbering}
    placed = np.flatnonzero(segment.placed())
    place_source = np.arange(placed.size, dtype=np.int64)
    place_source[np.isin(placed, rows)] = -1
    redone = segment.places(placed[place_source < 0].tolist())
    ranking = {"frags": [segment.frags[i] for i in placed.tolist()], "source": place_source, "redone": redone,
               "changed": {path}, "text": segment.text, "numbering": segment.numbering}
    return segment, keyword, ranking


def update(cache: Path, out: Path, keyword_args: dict[str, Any], ranking_args: dict[str, Any],
           splice: Callable[..., KeywordIndex | None]) -> dict[str, dict[str, float]]:
    """One update of the four indexes with ``splice``: per index its splice, save and load ms, bytes written."""
    row: dict[str, dict[str, float]] = {}
    made: dict[str, KeywordIndex] = {}
    old = KeywordIndex.load(cache / "keyword")
    t = time.perf_counter()
    made["keyword"] = _checked(splice(old, *keyword_args.values()))
    row["keyword"] = {"splice": 1000 * (time.perf_counter() - t)}
    ranking = RankingIndex.load(cache / "ranking")
    order = iter(NAMES[1:])

    def timed(*args: Any) -> KeywordIndex | None:
        start = time.perf_counter()
        got = splice(*args)
        name = next(order)
        row[name] = {"splice": 1000 * (time.perf_counter() - start)}
        made[name] = _checked(got)
        return got

    real = ranking_splice.spliced
    ranking_splice.spliced = timed  # type: ignore[assignment]
    try:
        if ranking_splice.spliced_ranking(ranking, *ranking_args.values()) is None:
            raise SystemExit("the ranking index could not be spliced")
    finally:
        ranking_splice.spliced = real  # type: ignore[assignment]
    for name, index in made.items():
        target = out / name
        shutil.rmtree(target, ignore_errors=True)
        t = time.perf_counter()
        index.save(target, key="bench")
        row[name]["save"] = 1000 * (time.perf_counter() - t)
        t = time.perf_counter()
        KeywordIndex.load(target)
        row[name]["load"] = 1000 * (time.perf_counter() - t)
        row[name]["written"] = written_bytes(target)
        row[name]["layered"] = float(index.layered is not None)
    return row


def _checked(index: KeywordIndex | None) -> KeywordIndex:
    if index is None:
        raise SystemExit("an index could not be spliced")
    return index


def same_answers(a: KeywordIndex, b: KeywordIndex, queries: list[str]) -> bool:
    return a.ids == b.ids and all(a.scores(q).tobytes() == b.scores(q).tobytes() for q in queries)


def latency(index_dir: Path, queries: list[str]) -> tuple[float, float, float]:
    """(first query's ms on a freshly loaded index, p50, p95 of the rest) of ``scores(q, unique=True)``."""
    index = KeywordIndex.load(index_dir)
    t = time.perf_counter()
    index.scores(queries[0], unique=True)
    first = 1000 * (time.perf_counter() - t)
    times = []
    for q in queries[1:]:
        t = time.perf_counter()
        index.scores(q, unique=True)
        times.append(1000 * (time.perf_counter() - t))
    times.sort()
    return first, statistics.median(times), times[int(0.95 * (len(times) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--file", default="json/decoder.py", help="the edited file (a path in PROJECT)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="keyword-update-"))
    try:
        cache = work / "cache"
        for name in ("keyword", "ranking", "tokens"):
            shutil.copytree(args.project / ".acms" / "cache" / name, cache / name)
        _, keyword_args, ranking_args = inputs(cache, args.file)
        runs: dict[str, list[dict[str, dict[str, float]]]] = {"before": [], "after": []}
        for _ in range(args.repeat):
            for label, splice in (("before", spliced_whole), ("after", spliced)):
                runs[label].append(update(cache, work / label, keyword_args, ranking_args, splice))
        print(f"one edited file ({args.file}: {int((keyword_args['source'] < 0).sum())} fragments) of "
              f"{args.project}; median of {args.repeat}; load average {os.getloadavg()[0]:.1f}")
        print(f"{'index':<8} | {'documents':>9} | {'before: splice + save + load ms':>31} | {'written MB':>10} | "
              f"{'after: splice + save + load ms':>30} | {'written MB':>10} | {'after / before':>14}")
        totals = {"before": 0.0, "after": 0.0}
        for name in NAMES:
            cells = []
            for label in ("before", "after"):
                parts = {k: statistics.median(r[name][k] for r in runs[label]) for k in ("splice", "save", "load")}
                total = sum(parts.values())
                totals[label] += total
                mb = statistics.median(r[name]["written"] for r in runs[label]) / 1e6
                cells.append((f"{parts['splice']:.0f} + {parts['save']:.0f} + {parts['load']:.0f} = {total:.0f}", mb,
                              total))
            documents = len(KeywordIndex.load(work / "after" / name).ids)
            print(f"{name:<8} | {documents:>9} | {cells[0][0]:>31} | {cells[0][1]:>10.2f} | {cells[1][0]:>30} | "
                  f"{cells[1][1]:>10.2f} | {cells[1][2] / cells[0][2]:>14.2f}")
        print(f"{'all four':<8} | {'':>9} | {totals['before']:>31.0f} | {'':>10} | {totals['after']:>30.0f} | "
              f"{'':>10} | {totals['after'] / totals['before']:>14.2f}")
        print("layered:", ", ".join(f"{n} {'yes' if runs['after'][0][n]['layered'] else 'no (merged)'}" for n in NAMES))
        rng = random.Random(7)
        print()
        print(f"query latency, scores(q, unique=True), {args.queries} queries each: first query after load / p50 / p95 ms")
        print(f"{'index':<8} | {'words':>5} | {'full (merged)':>22} | {'layered':>22} | {'p95 layered / full':>18}")
        for name in ("keyword", "windows"):
            terms = KeywordIndex.load(work / "before" / name).terms()
            for words in (3, 60):
                queries = [" ".join(rng.choices(terms, k=words)) for _ in range(args.queries)]
                full = KeywordIndex.load(work / "before" / name)
                layered = KeywordIndex.load(work / "after" / name)
                if not same_answers(full, layered, queries[:50]):
                    raise SystemExit(f"{name}: the layered index answers otherwise than the merged one")
                a, b = latency(work / "before" / name, queries), latency(work / "after" / name, queries)
                print(f"{name:<8} | {words:>5} | {a[0]:>6.1f} / {a[1]:>5.2f} / {a[2]:>6.2f} | "
                      f"{b[0]:>6.1f} / {b[1]:>5.2f} / {b[2]:>6.2f} | {b[2] / a[2]:>18.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
