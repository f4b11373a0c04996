"""LSA drift: how vector-only retrieval degrades as more of the corpus is folded into a model fitted earlier.

After a first index the LSA model is never refitted (``embed_missing`` folds new fragments into it):
new vocabulary gets no weight and the idf and concepts are those of the corpus at fit time. This
simulates a project that grows after its fit and measures what that costs, to set a refit threshold.

Corpora: the standard library (``Lib/``, copied as ``stdlib_index.py`` does, into the work directory)
and scipy's Python sources (read in place from site-packages; or ``acms``: this repository's src/ and
tests/). Texts, as acms cuts Python: every module-level function and every method of a module-level
class is a document, its source without its docstring; the query of a function is the first paragraph
of its docstring (at least ``--min-words`` words, a paragraph no other function shares), all of them
or ``--queries`` sampled with a fixed seed, each searched among all documents (cosine, vector only).

Growth, in an order a project's history could have: ``folders``, the folders in a random order
(fixed seed; a folder's files in path order; the files directly in the root, or in a folder holding
more than 10 % of the documents, such as ``Lib/test``, count as folders of their own, since a flat
folder of independent modules grows file by file); ``files``, the files shuffled uniformly. For each F
in ``--fractions`` the model is fitted on the first F % of the documents (as acms fits: at most
``FIT_SAMPLE`` of them, those of lowest id hash, with ``embedding_dims`` dimensions), every document is
folded with ``transform`` (the fitted ones too, as acms does), and MRR and Recall@10 are compared with
F = 100 (one fit: it does not depend on the order) on the same queries. ``±`` is twice the standard
error of the paired difference of reciprocal ranks, as a share of the F = 100 MRR (query sampling
only). The MRR is also split by the queries' targets: folded (added after the fit) and fitted.
Controls: full fits that differ only by chance (another SVD seed; no ``FIT_SAMPLE`` cap), for the
spread two equally valid refits show.

Drift signals per run: folded / fit (documents added since the fit over the documents at fit time),
folded / all; ``doc OOV +``: the share of document token occurrences (``code_tokens``) outside the
model's vocabulary, over all documents now, minus the same share over the documents at fit time
(min_df and the 50k cap leave some out even at F = 100); ``query OOV``: the same share over the
queries. Fit seconds: ``LsaModel.fit`` alone; fold seconds: ``transform`` of every document (a refit
pays both).

    python bench/lsa_drift.py [--corpora stdlib,scipy] [--orders folders:3,files:2] [--queries N]
                              [--fractions 100,90,80,70,60,50,40] [--work DIR]

The machine is shared: the load average is printed before and after; compare ratios within one run.
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import shutil
import sysconfig
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from acms.config import Settings
from acms.embeddings.lsa import LsaModel
from acms.index.tokenize import code_tokens
from acms.retrieval.embedding_store import FIT_SAMPLE, fit_sample

ROOT = Path(__file__).resolve().parent.parent
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
BIG_FOLDER = 0.10  # a folder holding more than this share of the documents grows file by file
QUERY_CHUNK = 256


@dataclass
class Doc:
    id: str  # path::Class.name#n
    file: str
    text: str
    query: str | None  # the docstring's first paragraph, when it qualifies


@dataclass
class Corpus:
    name: str
    docs: list[Doc]
    queries: list[int]  # indices into docs
    doc_tokens: list[np.ndarray]  # global token ids per document
    query_tokens: list[np.ndarray]
    vocab: list[str]  # global id -> token


def _segment(lines: list[bytes], node: ast.AST) -> str:
    """The source of ``node`` (ast offsets are UTF-8 bytes)."""
    first, last = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
    if first == last:
        return lines[first][node.col_offset : node.end_col_offset].decode("utf-8", "replace")  # type: ignore[attr-defined]
    parts = [lines[first][node.col_offset :], *lines[first + 1 : last], lines[last][: node.end_col_offset]]  # type: ignore[attr-defined]
    return b"".join(parts).decode("utf-8", "replace")


def _functions(tree: ast.Module):
    for node in tree.body:
        if isinstance(node, FUNCTIONS):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, FUNCTIONS):
                    yield f"{node.name}.{member.name}", member


def read_corpus(name: str, roots: list[Path], min_words: int) -> list[Doc]:
    docs: list[Doc] = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if "__pycache__" in path.parts or "site-packages" in path.relative_to(root).parts:
                continue
            try:
                source = path.read_text(encoding="utf-8")
                tree = ast.parse(source)
            except (SyntaxError, UnicodeDecodeError, ValueError, OSError):
                continue
            lines = source.encode("utf-8").splitlines(keepends=True)
            rel = f"{root.name}/{path.relative_to(root).as_posix()}"
            seen: Counter[str] = Counter()
            for qualname, fn in _functions(tree):
                seen[qualname] += 1
                text = _segment(lines, fn)
                doc = ast.get_docstring(fn)
                query = None
                if doc is not None:
                    text = text.replace(_segment(lines, fn.body[0]), "", 1)
                    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
                    if len(paragraph.split()) >= min_words:
                        query = paragraph
                docs.append(Doc(f"{rel}::{qualname}#{seen[qualname]}", rel, text, query))
    return docs


def tokenize(corpus_name: str, docs: list[Doc], n_queries: int, seed: int) -> Corpus:
    counts = Counter(d.query for d in docs if d.query)
    eligible = [i for i, d in enumerate(docs) if d.query and counts[d.query] == 1]
    if n_queries and n_queries < len(eligible):
        eligible = random.Random(seed).sample(eligible, n_queries)
    queries = sorted(eligible)
    ids: dict[str, int] = {}

    def encode(text: str) -> np.ndarray:
        return np.fromiter((ids.setdefault(t, len(ids)) for t in code_tokens(text)), dtype=np.int64)

    doc_tokens = [encode(d.text) for d in docs]
    query_tokens = [encode(docs[i].query or "") for i in queries]
    return Corpus(corpus_name, docs, queries, doc_tokens, query_tokens, list(ids))


def folder_units(docs: list[Doc]) -> dict[str, str]:
    """file -> the unit it arrives with in a ``folders`` history."""
    per_folder = Counter(d.file.rsplit("/", 1)[0] for d in docs)
    units = {}
    for d in docs:
        folder = d.file.rsplit("/", 1)[0]
        flat = "/" not in folder or per_folder[folder] > BIG_FOLDER * len(docs)
        units[d.file] = d.file if flat else folder
    return units


def order(docs: list[Doc], kind: str, seed: int) -> list[int]:
    """Document indices in the order the simulated history adds them."""
    rng = random.Random(seed)
    files = list(dict.fromkeys(d.file for d in docs))
    if kind == "files":
        rng.shuffle(files)
        rank = {f: i for i, f in enumerate(files)}
    elif kind == "folders":
        units = folder_units(docs)
        names = sorted(set(units.values()))
        rng.shuffle(names)
        unit_rank = {u: i for i, u in enumerate(names)}
        rank = {f: (unit_rank[units[f]], f) for f in files}
    else:
        raise SystemExit(f"unknown order {kind!r}")
    return sorted(range(len(docs)), key=lambda i: (rank[docs[i].file], i))


def reciprocal_ranks(qv: np.ndarray, dv: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Rank of each query's target among all documents: 1 + better + half the ties (a zero vector ties all)."""
    out = np.empty(len(targets))
    for start in range(0, len(targets), QUERY_CHUNK):
        scores = qv[start : start + QUERY_CHUNK] @ dv.T
        t = targets[start : start + QUERY_CHUNK]
        own = scores[np.arange(len(t)), t][:, None]
        better = (scores > own).sum(axis=1)
        ties = (scores == own).sum(axis=1) - 1
        out[start : start + QUERY_CHUNK] = 1.0 / (1.0 + better + 0.5 * ties)
    return out


def oov_share(tokens: list[np.ndarray], known: np.ndarray) -> float:
    flat = np.concatenate(tokens) if tokens else np.zeros(0, np.int64)
    return float(1.0 - known[flat].mean()) if flat.size else 0.0


def run(corpus: Corpus, fit_idx: list[int], dims: int, cap: int, seed: int = 0) -> dict:
    docs = corpus.docs
    # as acms's first index: at most ``cap`` texts, those of lowest id hash, in id order
    sample = fit_sample(((docs[i].id, docs[i].text) for i in fit_idx), cap) if cap else \
        [docs[i].text for i in sorted(fit_idx, key=lambda i: docs[i].id)]
    t = time.perf_counter()
    model = LsaModel.fit(sample, dimensions=dims, seed=seed)
    fit_s = time.perf_counter() - t
    t = time.perf_counter()
    dv = model.transform([d.text for d in docs])
    fold_s = time.perf_counter() - t
    qv = model.transform([docs[i].query or "" for i in corpus.queries])
    rr = reciprocal_ranks(qv, dv, np.array(corpus.queries))
    vocabulary = set(model.vocabulary)
    known = np.fromiter((t in vocabulary for t in corpus.vocab), dtype=bool, count=len(corpus.vocab))
    fitted = set(fit_idx)
    return {
        "fitted": len(sample), "fit_s": fit_s, "fold_s": fold_s, "rr": rr,
        "doc_oov": oov_share(corpus.doc_tokens, known),
        "doc_oov_fit": oov_share([corpus.doc_tokens[i] for i in fit_idx], known),
        "query_oov": oov_share(corpus.query_tokens, known),
        "target_folded": np.array([i not in fitted for i in corpus.queries]),
        "dims": model.dimensions,
    }


def corpus_roots(name: str, work: Path) -> list[Path]:
    if name == "stdlib":
        lib = work / "Lib"
        if not lib.exists():
            shutil.copytree(sysconfig.get_paths()["stdlib"], lib, symlinks=True,
                            ignore=shutil.ignore_patterns("site-packages", "__pycache__"))
        return [lib]
    if name == "acms":
        return [ROOT / "src", ROOT / "tests"]
    path = Path(sysconfig.get_paths()["purelib"]) / name  # a package of the venv, read in place
    if not path.is_dir():
        raise SystemExit(f"no corpus {name!r}: stdlib, acms or a package in {path.parent}")
    return [path]


SIGNALS = [("folded / fit", "{:.0%}"), ("folded / all", "{:.0%}"), ("doc OOV +", "{:+.2%}"), ("query OOV +", "{:+.2%}")]


@dataclass
class Row:
    corpus: str
    label: str
    f: int | None  # None: a control (a full fit)
    fitted: int
    signals: tuple[float, ...]  # as SIGNALS
    mrr: float
    ratio: float
    pm: float
    r10_ratio: float
    folded_ratio: float  # MRR ratio of the queries whose target was folded, not fitted
    folded_targets: int
    fitted_ratio: float  # ... whose target was in the documents at fit time
    fit_s: float
    fold_s: float

    def line(self) -> str:
        a, b, c, d = self.signals
        f = "100" if self.f is None else str(self.f)
        folded = f"{self.folded_ratio:.3f} ({self.folded_targets})" if self.folded_targets else "–"
        fitted = "–" if self.f is None else f"{self.fitted_ratio:.3f}"
        return (f"| {self.label} | {f} | {self.fitted:,} | {a:.0%} | {b:.0%} | {c:+.2%} | {d:+.2%} | {self.mrr:.4f} | "
                f"{self.ratio:.3f} (±{self.pm:.3f}) | {self.r10_ratio:.3f} | {folded} | {fitted} | {self.fit_s:.1f} |")


def compare(corpus: Corpus, label: str, f: int | None, r: dict, base: dict, n_fit: int) -> Row:
    n = len(corpus.docs)
    rr, base_rr = r["rr"], base["rr"]
    base_mrr = base_rr.mean()
    diff = rr - base_rr
    mask = r["target_folded"]
    folded = n - n_fit
    return Row(corpus.name, label, f, r["fitted"],
               (folded / n_fit, folded / n, r["doc_oov"] - r["doc_oov_fit"], r["query_oov"] - base["query_oov"]),
               rr.mean(), rr.mean() / base_mrr, 2 * diff.std(ddof=1) / np.sqrt(len(diff)) / base_mrr,
               (rr >= 0.1).mean() / (base_rr >= 0.1).mean(),  # rank <= 10 (a half-tie rank of 10.5 is out)
               rr[mask].mean() / base_rr[mask].mean() if mask.any() else float("nan"), int(mask.sum()),
               rr[~mask].mean() / base_rr[~mask].mean(),
               r["fit_s"], r["fold_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default="stdlib,scipy")
    parser.add_argument("--orders", default="folders:3,files:2", help="kind:seeds, comma-separated")
    parser.add_argument("--fractions", default="100,90,80,70,60,50,40")
    parser.add_argument("--controls", type=int, default=2, help="full refits with another SVD seed, per corpus")
    parser.add_argument("--queries", type=int, default=0, help="0: every eligible docstring")
    parser.add_argument("--min-words", type=int, default=5)
    parser.add_argument("--fit-sample", type=int, default=FIT_SAMPLE, help="0: fit on every document")
    parser.add_argument("--dims", type=int, default=Settings().embedding_dims)
    parser.add_argument("--work", type=Path, default=None, help="where the standard library is copied")
    args = parser.parse_args()
    fractions = sorted({int(f) for f in args.fractions.split(",")} - {100}, reverse=True)
    orders = [(kind, seed) for spec in args.orders.split(",")
              for kind, n in [spec.split(":")] for seed in range(1, int(n) + 1)]
    work = args.work or Path(tempfile.mkdtemp(prefix="acms-lsa-drift-"))
    load_before = os.getloadavg()
    start = time.perf_counter()
    rows: list[Row] = []
    out: list[str] = []
    header = [("| order | F % | fitted | folded / fit | folded / all | doc OOV + | query OOV + | MRR | MRR ratio (±) "
               "| R@10 ratio | MRR ratio, folded targets (n) | MRR ratio, fitted targets | fit s |"),
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    try:
        for name in args.corpora.split(","):
            t = time.perf_counter()
            docs = read_corpus(name, corpus_roots(name, work), args.min_words)
            corpus = tokenize(name, docs, args.queries, seed=0)
            prep = time.perf_counter() - t
            n = len(docs)
            everything = list(range(n))
            base = run(corpus, everything, args.dims, args.fit_sample)
            rows.append(compare(corpus, "full fit", None, base, base, n))
            units = len(set(folder_units(docs).values()))
            out.append(f"\n### {name}: {n:,} documents in {len({d.file for d in docs}):,} files ({units} folder units), "
                       f"{len(corpus.queries):,} queries, {base['dims']} dimensions (read and tokenised in {prep:.0f} s)\n")
            out.append(f"F = 100: fitted on {base['fitted']:,} documents; MRR {base['rr'].mean():.4f}, Recall@10 "
                       f"{(base['rr'] >= 0.1).mean():.4f}; token occurrences out of the vocabulary: documents "
                       f"{base['doc_oov']:.2%}, queries {base['query_oov']:.2%}\n")
            out.extend(header)
            out.append(rows[-1].line())
            controls = [(f"control: SVD seed {s}", {"seed": s}) for s in range(1, args.controls + 1)]
            if args.fit_sample and n > args.fit_sample:
                controls.append(("control: no fit sample", {"cap": 0}))
            for label, how in controls:
                r = run(corpus, everything, args.dims, how.get("cap", args.fit_sample), how.get("seed", 0))
                rows.append(compare(corpus, label, None, r, base, n))
                out.append(rows[-1].line())
                print(out[-1], flush=True)  # progress, in case the run is cut short
            for kind, seed in orders:
                ranked = order(docs, kind, seed)
                for f in fractions:
                    k = round(n * f / 100)
                    rows.append(compare(corpus, f"{kind} {seed}", f, run(corpus, ranked[:k], args.dims, args.fit_sample),
                                        base, k))
                    out.append(rows[-1].line())
                    print(out[-1], flush=True)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()
    print(f"\n## LSA drift — vector-only retrieval after folding, vs a full fit (load average "
          f"{load_before[0]:.2f} before, {load_after[0]:.2f} after, {os.cpu_count()} cores; "
          f"{time.perf_counter() - start:.0f} s in all)")
    print("\n".join(out))
    corpora = list(dict.fromkeys(r.corpus for r in rows))
    drift = [r for r in rows if r.f is not None]

    print("\n### Per F, over the orders (MRR ratio: mean ± standard deviation over the orders, lowest; "
          "mean MRR ratio of the queries whose target was folded, and of those whose target was fitted)\n")
    print("| corpus | F % | folded / fit | folded / all | MRR ratio | lowest | folded targets | fitted targets |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for c in corpora:
        for f in fractions:
            sel = [r for r in drift if r.corpus == c and r.f == f]
            ratios = [r.ratio for r in sel]
            print(f"| {c} | {f} | {(100 - f) / f:.0%} | {(100 - f) / 100:.0%} | {np.mean(ratios):.3f} ± "
                  f"{np.std(ratios, ddof=1) if len(sel) > 1 else 0:.3f} | {min(ratios):.3f} | "
                  f"{np.mean([r.folded_ratio for r in sel]):.3f} | {np.mean([r.fitted_ratio for r in sel]):.3f} |")
    for c in corpora:
        ctl = [r.ratio for r in rows if r.corpus == c and r.label.startswith("control")]
        if ctl:
            print(f"\n{c}: full refits that differ only by chance (controls) moved MRR by "
                  + ", ".join(f"{x - 1:+.1%}" for x in ctl))

    print("\n### Fit cost (what a refit pays: the fit, then every document folded again)\n")
    print("| corpus | fitted documents | fits | fit s (median) | fold s, all documents (median) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for c in corpora:
        for fitted in sorted({r.fitted for r in rows if r.corpus == c}):
            sel = [r for r in rows if r.corpus == c and r.fitted == fitted]
            print(f"| {c} | {fitted:,} | {len(sel)} | {np.median([r.fit_s for r in sel]):.1f} | "
                  f"{np.median([r.fold_s for r in sel]):.1f} |")

    print("\n### Which signal predicts the loss (runs with F < 100)\n")
    print("Least squares through (0, 1): MRR ratio = 1 + b · signal, per corpus and pooled; the signal's value where "
          "the line reaches 0.98; the RMS of the residuals (the lower, the better the signal explains the loss); "
          "Spearman ρ between signal and MRR ratio.\n")
    print("| signal | " + " | ".join(f"{c}: at 0.98 | {c}: RMS | {c}: ρ" for c in [*corpora, "pooled"]) + " |")
    print("| --- |" + " ---: | ---: | ---: |" * (len(corpora) + 1))
    for j, (label, fmt) in enumerate(SIGNALS):
        cells = []
        for c in [*corpora, "pooled"]:
            sel = [r for r in drift if c == "pooled" or r.corpus == c]
            x = np.array([r.signals[j] for r in sel])
            y = np.array([r.ratio for r in sel]) - 1
            b = float(x @ y / (x @ x))
            rms = float(np.sqrt(np.mean((y - b * x) ** 2)))
            rho = float(spearmanr(x, y).statistic)
            cells += [fmt.format(-0.02 / b) if b < 0 else "never", f"{rms:.3f}", f"{rho:+.2f}"]
        print(f"| {label} | " + " | ".join(cells) + " |")



if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "lsa_drift")  # --write-docs: this run's tables onto docs/benchmarks.md
