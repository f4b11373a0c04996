"""RankingIndex built from texts tokenised once, line by line (issue 14), is the index the text-based
build made: every saved file byte for byte, on fragments that overlap, disagree on a line, skip lines,
hold odd text and make files longer than a window."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from acms.index.keyword import KeywordIndex
from acms.index.tokenize import code_tokens
from acms.ranking.index import CONTAINER, NAMES_B, FragmentRow, RankingIndex, StringColumn, ids_array
from acms.ranking.windows import file_lines, windows


def _reference(rows: list[FragmentRow]) -> RankingIndex:
    """The text-based build as it was before issue 14's one pass (windows' texts joined and tokenised)."""
    lines = file_lines((r.path, r.start, r.text) for r in rows)
    files = sorted(lines)
    number = {p: i for i, p in enumerate(files)}
    wfile, wlines, texts = [], [], []
    for path in files:
        for w in windows(path, lines[path]):
            wfile.append(number[path])
            wlines.append((w.start, w.end))
            texts.append(w.text)
    windows_index = KeywordIndex.build([str(i) for i in range(len(texts))], texts)
    paths_index = KeywordIndex.build(files, files)
    defined: dict[str, list[str]] = {}
    for r in rows:
        if r.name and r.container != CONTAINER["Module"]:
            defined.setdefault(r.path, []).append(r.name)
    names_index = KeywordIndex.build(files, [" ".join(defined.get(p, ())) for p in files], b=NAMES_B)
    where = {r.frag: (number[r.path], r.start, r.end, int(r.container)) for r in rows}
    outline = {r.frag: r.outline for r in rows}
    ids = sorted(where)
    return RankingIndex(files, np.asarray(wfile, dtype=np.int64), np.asarray(wlines, dtype=np.int64).reshape(-1, 2),
                        windows_index, paths_index, names_index, ids_array(ids),
                        np.asarray([where[f] for f in ids], dtype=np.int64).reshape(-1, 4),
                        StringColumn.of(outline[f] for f in ids))


WORDS = ["parse", "HTTPServer", "headers", "Proxies", "get_value", "x", "the", "utf8", "é_name", "return", "self", "a1b2", "", "# note",
         "déjà", "__init__", "XMLHttpRequest", "  ", '"quoted"', "\\", "\t", "\r"]


def _rows(seed: int) -> list[FragmentRow]:
    rnd = random.Random(seed)
    rows = []
    for f in range(6):
        path = f"pkg/m{f}.py" if f % 3 else f"docs/r{f}.md"
        for k in range(rnd.randint(1, 12)):
            start = rnd.randint(1, 150)
            n = rnd.randint(1, 70)
            text = "\n".join(" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 6))) for _ in range(n))
            container = rnd.choice([0, 0, 1, 2])
            rows.append(FragmentRow(f"f:{f}:{k}:{start}", path, start, start + n - 1, text, container,
                                    rnd.choice(["", "run", "HTTPServer"]), rnd.choice(["", "class A: ..."])))
    rows.sort(key=lambda r: r.frag)
    return rows


def _files(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_the_one_pass_build_is_the_text_build(tmp_path: Path) -> None:
    for seed in range(8):
        rows = _rows(seed)
        new, old = RankingIndex.build(rows), _reference(rows)
        new.save(tmp_path / f"new{seed}", key="k")
        old.save(tmp_path / f"old{seed}", key="k")
        assert _files(tmp_path / f"new{seed}") == _files(tmp_path / f"old{seed}"), seed
        query = "parse http server value"
        assert np.array_equal(new.windows.scores(query), old.windows.scores(query))


def test_a_line_two_fragments_disagree_on_comes_from_the_first() -> None:
    rows = [FragmentRow("f:1", "a.py", 1, 2, "alpha\nbeta"), FragmentRow("f:2", "a.py", 2, 3, "gamma\ndelta")]
    index = RankingIndex.build(rows)
    assert index.windows.top("beta", 1) and not index.windows.top("gamma", 1)
    assert code_tokens("alpha beta delta") == ["alpha", "beta", "delta"]


def test_no_fragments_make_an_empty_index() -> None:
    index = RankingIndex.build([])
    assert index.files == [] and index.window_file.size == 0 and len(index.windows) == 0
