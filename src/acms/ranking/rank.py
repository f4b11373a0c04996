"""The first stage: rank files by their best window and their path, then pick each file's best fragments.

Files, not fragments, are ranked first because a task ("allow str content for multipart upload
files") is about a place in the code; the fragments an agent reads are then chosen inside the best
files. Per task:

1. ``file = norm(best window BM25) + PATH_WEIGHT * norm(path BM25) + NAMES_WEIGHT * norm(names BM25)``
   (names: the symbols the file defines), times the file's role factor
   (tests, docs, examples, data, build scripts, stubs x0.3, x0.5 when the task names them, see
   :mod:`acms.ranking.roles`),
   normalised so the best file scores 1;
2. inside each of the best ``MAX_FILES`` files, fragments by their own BM25 (body plus qualified
   name, times ``lines ** LENGTH_PRIOR``): ``score = file × fragment / best fragment of that file``, at most ``PER_FILE`` of them, so
   a file's best fragment carries the file's score and rank order interleaves files by relevance.
   A class body that encloses a matching method gives way to it; a nested function to the function
   around it (a long Python function whose match lies in a nested one gives way to it as a class
   does, its outline after it); a module header counts ``MODULE_HEADER_FACTOR``; test code inside a source file (Rust's
   ``mod tests``) counts as test files do among files (x0.3, x0.5 when the task names tests). A class that gave way to methods
   shown from it is shown as its outline (signature, doc line, its fields, member signatures) right after the
   best of those methods: the map of the class around the method an agent edits, at a few tokens,
   and the class itself for a task about it. A type whose methods are written outside its body (Go,
   Rust's ``impl`` blocks) comes as its body right after the best of them; a Rust test module (a
   namespace) gives way to its tests as a class does to its methods.
   A file whose fragments score nothing on their own (the words are spread over several) shows the
   fragment that overlaps its best window most.
3. A symbol the task names as code (``Context.Status``, `` `Map` ``, ``make_runserver``: see
   :func:`acms.ranking.task.named_symbols`) in one of those files carries its file's score whatever
   its words score (a class: its outline). The task points at it; BM25 only sees that the name's
   words occur, as they do in every caller.

Words that describe the change rather than the code ("fixed a bug") are dropped first
(:mod:`acms.ranking.task`). Query words count once each (``unique``): a commit body or a long task that repeats a word does not
weight it again. Measured on the dev set, file MRR 0.657 → 0.666.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from acms.index.keyword import KeywordIndex
from acms.index.string_column import taken
from acms.ranking.index import CONTAINER, NESTING, TEST_SCOPE, RankingIndex
from acms.ranking.roles import Role, role_factors
from acms.ranking.task import code_terms, named_symbols

__all__ = ["CLASS_OUTLINE_AFTER", "LENGTH_PRIOR", "MAX_FILES", "NAMES_WEIGHT", "PATH_WEIGHT", "PER_FILE", "Ranked", "file_scores", "rank"]

PATH_WEIGHT = 0.3  # dev set file MRR by weight: 0 → 0.622, 0.2 → 0.647, 0.3 → 0.664, 0.5 → 0.663
# The names a file defines (its ``defines`` edges) as a field of their own: a task that names
# ``EnvironHeaders`` or "the bytecode cache" points at the file that defines them, more than at the
# many files that merely use the words. Dev set file MRR by weight (gin and axios had no symbols yet):
# 0 → httpx 0.759, werkzeug 0.606, jinja 0.573, attrs 0.727; 0.3 → .771 .614 .584 .736;
# 0.5 → .768 .641 .625 .745; 0.8 → .768 .637 .611 .748.
NAMES_WEIGHT = 0.5
MAX_FILES = 30
PER_FILE = 8  # symbol R@10 (httpx, attrs): 4 → 0.60 / 0.48, 8 → 0.64 / 0.62
MIN_RELATIVE = 0.1
# Inside a file, fragment BM25 (b = 0.75) favours short symbols: a two-line ``close`` that says
# "transport" once outscores the 70-line ``__init__`` a task about a transport's arguments needs.
# A change is likelier in a longer symbol (it has more lines to change), so a fragment's score is
# multiplied by ``lines ** LENGTH_PRIOR``. Dev set symbol R@10 (httpx, werkzeug, jinja, attrs):
# 0 → .623 .333 .526 .604; 0.1 → .686 .381 .526 .647; 0.2 → .724 .367 .555 .474. File order is
# unchanged (a file's best fragment carries the file's score).
LENGTH_PRIOR = 0.1
# A module header (imports, the module docstring) introduces a file in the words of its tasks, so it
# often outscores the code that does the work; it still comes, after the symbols that match as well.
MODULE_HEADER_FACTOR = 0.5  # symbol R@10 httpx 0.59 → 0.61, acms-self MRR 0.26 → 0.37; files unchanged
# A class body gives way to its matching methods (it would repeat them at many times the cost), which
# left the class itself out of every context: a task about a class's attributes or its docstring never
# saw it. Its outline comes instead, right after the best of its methods shown (x CLASS_OUTLINE_AFTER):
# an agent that edits a method needs the class around it (its fields, constructor, siblings), and a
# change inside a method is a change to its class where a language's methods are not symbols of their
# own (the held-out miner's TypeScript rule, the dev set's JavaScript rule: the class is the gold).
# Dev set, whole pipeline, symbol R@10 of httpx, werkzeug, jinja, attrs: at half the class body's
# score .752 .518 .542 .610, right after its method .760 .518 .546 .582 (file MRR .725 both, werkzeug
# file R@10 .900 -> .887); with each method's class as the gold (``eval/class_gold.py``: how the
# TypeScript rule scores class code) .436 .509 .412 .628 -> .814 .552 .696 .641.
CLASS_OUTLINE_AFTER = 0.999
# A nested function gives way to the function around it, which shows it whole with the closure it
# needs. A long Python function (``NESTED_LONG`` lines or more) whose match lies in a function nested in
# it (one that scores at least ``NESTED_SHARE`` of it) gives way to that function as a class does to
# its methods, and its outline (signature, doc line, the nested signatures) comes right after: the
# nested function is the unit a change names (a decorator's ``wrap``, ``define.do_it``), and the
# whole function around it would take a long body's share of the budget. Dev set, whole pipeline,
# symbol R@10 of httpx, werkzeug, jinja, attrs .760 .518 .546 .582 -> .806 .518 .546 .638, file MRR
# .725 -> .726; share 0.5 / 0.6 / 0.8 / 0.9: attrs .572 / .638 / .638 / .575, werkzeug .504 / .504 /
# .518 / .518, httpx .806 / .806 / .768 / .768; 30 to 50 lines alike. The nested function shown on its
# own inside functions of 150 lines or more, without the outline after it, had cost attrs .582 -> .516.
NESTED_LONG = 40
NESTED_SHARE = 0.7


@dataclass(frozen=True)
class Ranked:
    fragment: str
    score: float
    reason: str


@dataclass(frozen=True)
class FileScores:
    score: np.ndarray  # per file number, in [0, 1]
    best_window: np.ndarray  # per file number: its best window's number (-1 when none scored)
    path_hit: np.ndarray  # per file number: path BM25 > 0


def _norm(x: np.ndarray) -> np.ndarray:
    top = float(x.max()) if x.size else 0.0
    return x / top if top > 0 else x


def file_scores(task: str, index: RankingIndex, *, equal_roles: bool = False) -> FileScores:
    task = code_terms(task)
    n = len(index.files)
    ws = index.windows.scores(task, unique=True).astype(np.float64)
    best = np.zeros(n)
    best_window = np.full(n, -1, dtype=np.int64)
    if ws.size:
        order = np.lexsort((np.arange(ws.size), -ws))  # best first, ties by window number
        order = order[ws[order] > 0]
        files = np.asarray(index.window_file)[order]
        _, first = np.unique(files, return_index=True)
        best[files[first]] = ws[order[first]]
        best_window[files[first]] = order[first]
    ps = index.paths.scores(task, unique=True).astype(np.float64)
    ns = index.names.scores(task, unique=True).astype(np.float64)
    score = _norm(best) + PATH_WEIGHT * _norm(ps) + NAMES_WEIGHT * _norm(ns)
    score *= index.roles_array(role_factors(task, equal=equal_roles))
    return FileScores(_norm(score), best_window, ps > 0)


Cand = tuple[float, str, int, int, int]  # score, fragment, start, end, container (1 class, 2 module header, 3 TEST_SCOPE)


def _units(cands: list[Cand], keep: int) -> tuple[list[Cand], list[Cand]]:
    """The units worth showing in one file, at most ``keep`` of the best-scored fragments considered,
    and the classes (and long functions) that gave way to matching members inside them.

    A class body that encloses a matching method gives way to the method: the class would repeat it
    at many times the cost. A nested function gives way to the outermost function around it, which
    shows it whole with the closure it needs, and lends it its score (measured: letting the nested
    one win lost the method around it, httpx symbol R@10 0.64 → 0.52), unless that function is a
    long one whose match lies in the nested function (``NESTED_LONG``): then the function gives way
    as a class does. Vectorised per file: the standard library has files of several hundred fragments.
    """
    score = np.fromiter((c[0] for c in cands), dtype=np.float64, count=len(cands))
    if not (score > 0).any():
        return cands, []
    start = np.fromiter((c[2] for c in cands), dtype=np.int64, count=len(cands))
    end = np.fromiter((c[3] for c in cands), dtype=np.int64, count=len(cands))
    container = np.fromiter((c[4] == CONTAINER["Class"] for c in cands), dtype=bool, count=len(cands))
    span = end - start
    scored = score > 0
    for j in (i for i, c in enumerate(cands) if c[4] == NESTING and score[i] > 0 and span[i] + 1 >= NESTED_LONG):
        inside = (start >= start[j]) & (end <= end[j]) & (span < span[j]) & ~container
        if (inside & (score >= NESTED_SHARE * score[j])).any():
            container[j] = True
    units: dict[int, float] = {}
    gave_way: list[Cand] = []
    order = np.lexsort((np.arange(len(cands)), -score))
    for i in order[: max(keep, 1) * 4].tolist():
        if score[i] <= 0:
            break
        inside_i = (start >= start[i]) & (end <= end[i]) & (span < span[i])
        if container[i] and (inside_i & scored).any():
            gave_way.append(cands[i])  # a class around matching methods, a long function around a nested one
            continue
        unit = i
        if not container[i]:
            around = ~container & (start <= start[i]) & (end >= end[i]) & (span > span[i])
            if around.any():
                unit = int(np.flatnonzero(around)[np.argmax(span[around])])
        units[unit] = max(units.get(unit, 0.0), float(score[i]))
    return [(units[u], *cands[u][1:]) for u in units] or cands, gave_way  # type: ignore[misc]


def _body(fid: str, rel: float, file_score: float, why: str) -> Ranked:
    """A fragment chosen for its words, at ``rel`` of its file's best fragment."""
    return Ranked(fid, file_score * rel, f"{why}; fragment bm25 {rel:.2f} of the file's best")


def _outlines(gave_way: list[Cand], chosen: list[Cand], best: float, file_score: float, why: str,
              index: RankingIndex) -> list[Ranked]:
    """The outlines of the classes (and long functions) that gave way to members shown from them, each
    right after the best of those members. A function none of whose nested functions is shown comes
    as its body, at its own score, as it would have without them."""
    out = []
    for s, fid, start, end, container in gave_way:
        shown = [c[0] for c in chosen if start <= c[2] and c[3] <= end]
        if container == NESTING and not shown:
            out.append(_body(fid, min(1.0, s / best), file_score, why))
            continue
        outline = index.outline_of(fid)
        if outline and shown:
            rel = CLASS_OUTLINE_AFTER * max(shown) / best
            around = "function around the nested functions" if container == NESTING else "class around the methods"
            out.append(Ranked(outline, file_score * rel, f"{why}; outline of the {around} shown"))
    return out


def _declared_apart(cands: list[Cand], chosen: list[Cand], best: float, file_score: float, why: str,
                    qualified: dict[str, str], index: RankingIndex) -> list[Ranked]:
    """The types whose methods are written outside their body (a Go struct and its methods with a
    receiver, a Rust struct and its ``impl`` blocks), right after the best of their methods shown: the
    type's fields are what those methods work on, as a class's outline is for its methods. The body
    (the declaration and its fields), not the outline: it holds no methods to give way to, and the
    outline's list of every method cost gin's symbol R@10 at a 3,000-token budget (.712 → .694; the
    body: file R@10 .917 → .929). A type that is an ``impl`` block here (a Rust type defined in another
    file) holds methods: its outline, not the whole block."""
    types = {qualified[c[1]]: c for c in cands if c[4] == CONTAINER["Class"] and c[1] in qualified}
    if not types:
        return []
    after: dict[str, float] = {}
    for s, fid, start, end, _ in chosen:
        owner = qualified.get(fid, "").rpartition(".")[0]
        for _ in range(2):  # the type, or past the impl block around a Rust trait's method (Type.Trait.method)
            t = types.get(owner) if owner else None
            if t is not None and not (t[2] <= start and end <= t[3]):
                after[owner] = max(after.get(owner, 0.0), s)
                break
            owner = owner.rpartition(".")[0]
    out = []
    for owner, s in after.items():
        _, fid, start, end, _ = types[owner]
        if any(start <= c[2] and c[3] <= end and c[1] != fid for c in cands):
            fid = index.outline_of(fid)
        if fid:
            out.append(Ranked(fid, file_score * CLASS_OUTLINE_AFTER * s / best, f"{why}; the type of the methods shown"))
    return out


def rank(task: str, fragments: KeywordIndex, index: RankingIndex, *, equal_roles: bool = False,
         max_files: int = MAX_FILES, per_file: int = PER_FILE) -> list[Ranked]:
    """Fragments to show for ``task``, best first (scores in (0, 1])."""
    named = named_symbols(task)
    task = code_terms(task)
    fs = file_scores(task, index, equal_roles=equal_roles)
    top = [int(i) for i in np.lexsort((np.arange(fs.score.size), -fs.score))[:max_files] if fs.score[i] > 0]
    if not top:
        return []
    loc = index.aligned(fragments)  # per fragment of the keyword index: file number, start, end
    frag_scores = fragments.scores(task, unique=True)
    rows = np.flatnonzero(np.isin(loc[:, 0], top))
    by_file: dict[int, list[Cand]] = {f: [] for f in top}
    named_in: dict[int, list[tuple[str, str]]] = {}  # file number -> (fragment, its outline) the task names
    factor = {CONTAINER["Module"]: MODULE_HEADER_FACTOR, TEST_SCOPE: role_factors(task, equal=equal_roles)[Role.TEST]}
    qualified: dict[str, str] = {}  # fragment -> its symbol's qualified name, for the types declared apart
    # the rows' ids and qualified names decoded together: one by one from the memory-mapped columns, the
    # thousands of fragments of the top files cost ~40 ms of a ranking
    ids = taken(fragments.ids, rows)
    placed = loc[rows, 4]
    names: list[str] = [""] * rows.size
    for k, name in zip(np.flatnonzero(placed >= 0).tolist(), taken(index.qualified, placed[placed >= 0])):
        names[k] = name or ""
    scores = frag_scores[rows].tolist()
    for k, (f, start, end, container, at) in enumerate(loc[rows].tolist()):
        fid, name = ids[k], names[k]
        if at >= 0 and container in (0, CONTAINER["Class"], NESTING) and name:
            qualified[fid] = name
        s = float(scores[k]) * factor.get(container, 1.0) * (end - start + 1) ** LENGTH_PRIOR
        by_file[f].append((s, fid, start, end, container))
        if named and at >= 0 and _names(name, named):
            outline = index.outline_of(fid) if container == CONTAINER["Class"] else ""
            named_in.setdefault(f, []).append((fid, outline))
    out: list[Ranked] = []
    for rank_no, f in enumerate(top, 1):
        cands = by_file[f]
        if not cands:
            continue
        why = f"file #{rank_no} {fs.score[f]:.2f}" + (" (path matches)" if fs.path_hit[f] else "")
        cands, classes = _units(cands, per_file)
        best = max(s for s, *_ in cands)
        chosen: list[Cand] = []
        if best > 0:
            chosen = sorted((c for c in cands if c[0] >= MIN_RELATIVE * best), key=lambda c: (-c[0], c[1]))[:per_file]
            out.extend(_body(fid, s / best, float(fs.score[f]), why) for s, fid, *_ in chosen)
            out.extend(_outlines(classes, chosen, best, float(fs.score[f]), why, index))
            out.extend(_declared_apart(by_file[f], chosen, best, float(fs.score[f]), why, qualified, index))
        else:
            w = int(fs.best_window[f])
            lo, hi = (int(x) for x in index.window_lines[w]) if w >= 0 else (1, 1)
            overlap = lambda c: min(hi, c[3]) - max(lo, c[2])  # noqa: E731
            s, fid, *_ = max(cands, key=lambda c: (overlap(c), -(c[3] - c[2]), c[1]))
            out.append(Ranked(fid, float(fs.score[f]), f"{why}; overlaps the file's best window {lo}-{hi}"))
        shown = {c[1] for c in chosen}  # a named class whose body is shown for its words: the body
        out.extend(Ranked(outline if outline and fid not in shown else fid, float(fs.score[f]), f"{why}; named in the task")
                   for fid, outline in named_in.get(f, ()))
    best_of: dict[str, Ranked] = {}
    for r in out:  # a fragment chosen for its words and named too keeps its best score
        if r.fragment not in best_of or r.score > best_of[r.fragment].score:
            best_of[r.fragment] = r
    return sorted(best_of.values(), key=lambda r: (-r.score, r.fragment))


def _names(qualified: str, named: frozenset[str]) -> bool:
    """Whether a symbol of this qualified name is one the task names (its name, or a dotted tail of it)."""
    if not qualified:
        return False
    parts = qualified.split(".")
    return any(".".join(parts[k:]) in named for k in range(len(parts)))
