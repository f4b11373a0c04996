"""The first stage on a tiny corpus whose right answers are known: file scores, roles, paths, fragments.

The corpus is built the way ``DerivedCaches`` builds it (a ``KeywordIndex`` over fragment texts and a
``RankingIndex`` over the same fragments), without a store: the ranking is a pure function of them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from acms.errors import StoreError, StoreMissing
from acms.index.keyword import KeywordIndex
from acms.ranking.index import FORMAT, NESTING, FragmentRow, RankingIndex
from acms.ranking.rank import (CLASS_OUTLINE_AFTER, LENGTH_PRIOR, MIN_RELATIVE, NESTED_LONG, PATH_WEIGHT, Ranked,
                               file_scores, rank)
from acms.ranking.roles import AUX_FACTOR, NAMED_FACTOR, Role

SRC_SPLIT = '''def split_parts(body: bytes, boundary: bytes) -> list[bytes]:
    """Split a multipart body on its boundary line."""
    marker = b"--" + boundary
    return [part.strip() for part in body.split(marker) if part.strip()]'''
SRC_HEADERS = '''def part_headers(part: bytes) -> dict[str, str]:
    """The headers of one multipart part."""
    head, _, _ = part.partition(b"\\r\\n\\r\\n")
    return dict(line.split(": ", 1) for line in head.decode().splitlines())'''
# The test names the function it tests and repeats the task's words more often than the source does.
TEST = '''def test_split_parts_on_boundary():
    body = b"--boundary\\r\\nA\\r\\n--boundary\\r\\nB\\r\\n--boundary--"
    assert split_parts(body, b"boundary") == [b"A", b"B"]

def test_boundary_split_body_multipart():
    assert split_parts(b"--boundary--", b"boundary") == []'''
DOC = '''# Multipart bodies

A multipart body is split on its boundary: every part sits between two boundary lines.'''
COOKIES = '''def read_cookie_jar(path: str) -> list[str]:
    """Load the cookie jar from disk."""
    with open(path) as handle:
        return handle.read().splitlines()'''

ROWS = [
    FragmentRow("f:split", "pkg/multipart.py", 1, 4, SRC_SPLIT),
    FragmentRow("f:headers", "pkg/multipart.py", 7, 10, SRC_HEADERS),
    FragmentRow("f:test", "tests/test_multipart.py", 1, 6, TEST),
    FragmentRow("f:doc", "docs/multipart.md", 1, 3, DOC),
    FragmentRow("f:cookies", "pkg/cookies.py", 1, 4, COOKIES),
]
SRC, TST, DOCS = "pkg/multipart.py", "tests/test_multipart.py", "docs/multipart.md"
BEHAVIOUR = "split the body on the boundary"


def build(rows: list[FragmentRow]) -> tuple[KeywordIndex, RankingIndex]:
    """Fragment BM25 (ids = fragment IRIs) and the ranking index, from the same fragments."""
    return KeywordIndex.build([r.frag for r in rows], [r.text for r in rows]), RankingIndex.build(rows)


@pytest.fixture(scope="module")
def corpus() -> tuple[KeywordIndex, RankingIndex]:
    """The multipart corpus: source, its test, its doc and an unrelated file."""
    return build(ROWS)


def by_path(task: str, index: RankingIndex, **kw: bool) -> dict[str, float]:
    """File scores keyed by path."""
    fs = file_scores(task, index, **kw)
    return {p: float(s) for p, s in zip(index.files, fs.score)}


def frag_path(rows: list[FragmentRow]) -> dict[str, str]:
    """Fragment id → its file."""
    return {r.frag: r.path for r in rows}


# -- the ranking index -----------------------------------------------------------------------------

def test_build_records_files_windows_roles_and_fragment_places(corpus: tuple[KeywordIndex, RankingIndex]) -> None:
    """Files are sorted paths with their roles; each short file is one window; ``where`` maps fragments to lines."""
    _, index = corpus
    assert index.files == sorted({r.path for r in ROWS})
    assert dict(zip(index.files, index.roles)) == {
        "docs/multipart.md": Role.DOCS, "pkg/cookies.py": Role.SOURCE, SRC: Role.SOURCE, TST: Role.TEST}
    assert index.window_file.tolist() == list(range(len(index.files)))  # one window per (short) file
    src = index.files.index(SRC)
    # the source file's known lines are 1-4 and 7-10: one window spanning 1-10
    assert index.window_lines[src].tolist() == [1, 10]
    assert index.where["f:headers"] == (src, 7, 10, 0)  # (file number, start, end, container)
    assert len(index.windows) == len(index.files) and index.paths.ids == tuple(index.files)


def test_long_file_gets_overlapping_windows() -> None:
    """A 100-line file becomes windows 1-40, 21-60, 41-80, 61-100, all numbered to that file."""
    text = "\n".join(f"value_{i} = {i}" for i in range(100))
    index = RankingIndex.build([FragmentRow("f:a", "pkg/a.py", 1, 100, text)])
    assert index.window_lines.tolist() == [[1, 40], [21, 60], [41, 80], [61, 100]]
    assert index.window_file.tolist() == [0, 0, 0, 0]


def test_aligned_maps_keyword_ids_to_file_and_lines_and_is_memoised(corpus: tuple[KeywordIndex, RankingIndex]) -> None:
    """Rows follow the keyword index's id order; a fragment the ranking index lacks gets file -1."""
    frags, index = corpus
    loc = index.aligned(frags)
    assert loc.shape == (len(frags), 5)
    for i, fid in enumerate(frags.ids):
        assert tuple(loc[i, :4].tolist()) == index.where[fid]
        assert index.frag_id(loc[i, 4]) == fid
    assert index.aligned(frags) is loc  # same keyword index: memoised
    other = KeywordIndex.build(["f:unknown", "f:doc"], ["x y", "z w"])
    loc2 = index.aligned(other)
    doc = index.position("f:doc")
    assert loc2.tolist() == [[-1, 0, 0, 0, -1], [*index.where["f:doc"], doc]]
    assert index.aligned(frags) is not loc  # another index in between: recomputed for this one
    np.testing.assert_array_equal(index.aligned(frags), loc)


def test_save_load_round_trip(tmp_path: Path, corpus: tuple[KeywordIndex, RankingIndex]) -> None:
    """A loaded index has the same files, roles, windows, places and key, and ranks identically."""
    frags, index = corpus
    index.save(tmp_path / "ranking", key="state-1")
    loaded = RankingIndex.load(tmp_path / "ranking")
    assert loaded.key == index.key == "state-1"
    assert loaded.files == index.files and loaded.roles == index.roles and loaded.where == index.where
    np.testing.assert_array_equal(loaded.window_file, index.window_file)
    np.testing.assert_array_equal(loaded.window_lines, index.window_lines)
    for task in (BEHAVIOUR, "multipart headers", "cookie jar test"):
        np.testing.assert_array_equal(loaded.windows.scores(task), index.windows.scores(task))
        np.testing.assert_array_equal(loaded.paths.scores(task), index.paths.scores(task))
        assert rank(task, frags, loaded) == rank(task, frags, index)


def test_load_errors(tmp_path: Path, corpus: tuple[KeywordIndex, RankingIndex]) -> None:
    """No cache is StoreMissing; another format or a broken file is StoreError (both mean: rebuild)."""
    with pytest.raises(StoreMissing):
        RankingIndex.load(tmp_path / "nothing")
    _, index = corpus
    target = tmp_path / "ranking"
    index.save(target, key="k")
    meta = (target / "meta.json").read_text(encoding="utf-8")
    assert FORMAT in meta
    (target / "meta.json").write_text(meta.replace(FORMAT, "acms.ranking-index/0"), encoding="utf-8")
    with pytest.raises(StoreError, match="another format"):
        RankingIndex.load(target)
    (target / "meta.json").write_text(meta[:20], encoding="utf-8")
    with pytest.raises(StoreError, match="unreadable"):
        RankingIndex.load(target)


# -- file scores and roles -------------------------------------------------------------------------

def test_source_ranks_above_test_and_docs_for_a_behaviour_task(corpus: tuple[KeywordIndex, RankingIndex]) -> None:
    """The test file shares (and repeats) the task's words, yet the source that implements it comes first."""
    frags, index = corpus
    scores = by_path(BEHAVIOUR, index)
    assert scores[SRC] == 1.0
    assert 0 < scores[TST] < scores[SRC] and 0 < scores[DOCS] < scores[SRC]
    assert scores["pkg/cookies.py"] == 0.0
    result = rank(BEHAVIOUR, frags, index)
    assert result[0].fragment == "f:split" and result[0].score == 1.0
    order = [frag_path(ROWS)[r.fragment] for r in result]
    assert order.index(SRC) < order.index(TST) and order.index(SRC) < order.index(DOCS)
    assert "f:cookies" not in {r.fragment for r in result}


def test_a_minified_file_counts_as_vendored_whatever_its_path(tmp_path: Path) -> None:
    """A file whose lines are dense with terms was built, not written (a minified library committed as
    ``static/jquery.js``): it is demoted like vendored code (x AUX_FACTOR) and stays so after a save and load."""
    minified = ";".join(f"function q{i}(e,t){{return e.ajax(t).cache(e)}}" for i in range(60))
    rows = [FragmentRow("f:min", "static/jquery.js", 1, 1, minified),
            FragmentRow("f:src", "app/cache.js", 1, 3,
                        "function cacheAjax(request) {\n  // ajax responses are cached\n  return store(request)\n}")]
    frags, index = build(rows)
    assert dict(zip(index.files, index.roles)) == {"app/cache.js": Role.SOURCE, "static/jquery.js": Role.VENDORED}
    assert [r.fragment for r in rank("ajax cache", frags, index)][0] == "f:src"
    equal, default = by_path("ajax cache", index, equal_roles=True), by_path("ajax cache", index)
    assert 0 < default["static/jquery.js"] / default["app/cache.js"] == pytest.approx(
        AUX_FACTOR * equal["static/jquery.js"] / equal["app/cache.js"])
    index.save(tmp_path / "ranking", key="k")
    assert RankingIndex.load(tmp_path / "ranking").roles == index.roles


def test_equal_roles_rank_on_equal_terms(corpus: tuple[KeywordIndex, RankingIndex]) -> None:
    """Without role factors the test (more of the task's words) outranks the source; with them, each non-source
    score is exactly AUX_FACTOR times its share of the source's."""
    frags, index = corpus
    equal = by_path(BEHAVIOUR, index, equal_roles=True)
    default = by_path(BEHAVIOUR, index)
    assert equal[TST] == 1.0 and equal[SRC] < 1.0
    assert rank(BEHAVIOUR, frags, index, equal_roles=True)[0].fragment == "f:test"
    for path in (TST, DOCS):
        assert default[path] / default[SRC] == pytest.approx(AUX_FACTOR * equal[path] / equal[SRC])


def test_a_task_naming_tests_raises_the_test_files_factor(corpus: tuple[KeywordIndex, RankingIndex]) -> None:
    """"pytest" is in no file, so it changes no BM25 score: only the test role's factor, AUX → NAMED."""
    frags, index = corpus
    plain = by_path(BEHAVIOUR, index)
    named = by_path(BEHAVIOUR + " pytest", index)
    assert named[SRC] == plain[SRC] == 1.0
    assert named[TST] == pytest.approx(plain[TST] * NAMED_FACTOR / AUX_FACTOR)
    assert named[DOCS] == pytest.approx(plain[DOCS])  # docs are not named: unchanged


def test_add_a_test_keeps_the_test_file_in_the_result(corpus: tuple[KeywordIndex, RankingIndex]) -> None:
    """"… and add a test": the test file scores higher than for the bare task, and its fragment is shown."""
    frags, index = corpus
    task = BEHAVIOUR + " and add a test"
    assert by_path(task, index)[TST] > by_path(BEHAVIOUR, index)[TST]
    result = rank(task, frags, index)
    assert "f:test" in {r.fragment for r in result}
    assert "f:split" in {r.fragment for r in result}


# -- paths -----------------------------------------------------------------------------------------

PATH_ROWS = [
    # identical bodies: only the path tells these two files apart
    FragmentRow("f:mp", "pkg/multipart.py", 1, 4, SRC_SPLIT),
    FragmentRow("f:helpers", "pkg/helpers.py", 1, 4, SRC_SPLIT),
    # a file whose path matches the task but whose text does not
    FragmentRow("f:cache1", "pkg/multipart_cache.py", 1, 2, "class LruStore:\n    size = 10"),
    FragmentRow("f:cache2", "pkg/multipart_cache.py", 4, 5, "def evict(store):\n    store.clear()"),
]


def test_a_path_match_lifts_a_file() -> None:
    """Same text, but one path names the task's word: it scores 1 and the other 1 / (1 + PATH_WEIGHT)."""
    frags, index = build(PATH_ROWS)
    task = "split multipart boundary"
    scores = by_path(task, index)
    assert scores["pkg/multipart.py"] == 1.0
    assert scores["pkg/helpers.py"] == pytest.approx(1 / (1 + PATH_WEIGHT))
    result = rank(task, frags, index)
    assert [r.fragment for r in result][:2] == ["f:mp", "f:helpers"]
    assert "(path matches)" in result[0].reason and "(path matches)" not in result[1].reason


def test_a_file_found_by_its_path_alone_still_shows_a_fragment() -> None:
    """No fragment of multipart_cache.py matches a word, but its path does: it shows one fragment (the one
    overlapping its best window, which does not exist, so the one at line 1), after the files that match."""
    frags, index = build(PATH_ROWS)
    result = rank("split multipart boundary", frags, index)
    cache = [r for r in result if r.fragment.startswith("f:cache")]
    assert len(cache) == 1 and cache[0].fragment == "f:cache1"
    assert "(path matches)" in cache[0].reason and "overlaps the file's best window 1-1" in cache[0].reason
    assert cache[0].score < min(r.score for r in result if not r.fragment.startswith("f:cache"))


# The same words in two files' text, but only one defines the symbol the task names.
NAME_ROWS = [
    FragmentRow("f:def", "pkg/store.py", 1, 3, "class BytecodeCache:\n    def load(self, key):\n        return None",
                name="BytecodeCache"),
    FragmentRow("f:use", "pkg/env.py", 1, 3, "def get_template(name):\n    cache = BytecodeCache()\n    return cache.load(name)",
                name="get_template"),
    FragmentRow("f:hdr", "pkg/env.py", 1, 1, "import bytecode cache", container=2, name="pkg.env"),
]


def test_the_file_defining_a_named_symbol_outranks_files_that_use_it() -> None:
    """A task naming ``BytecodeCache`` finds the file that defines it (the ``names`` field: the symbols a
    file defines, module headers excluded) above a file that uses it as often."""
    frags, index = build(NAME_ROWS)
    assert index.names.ids == tuple(index.files)
    scores = by_path("fix the BytecodeCache", index)
    assert scores["pkg/store.py"] == 1.0 and scores["pkg/env.py"] < 1.0
    assert rank("fix the BytecodeCache", frags, index)[0].fragment == "f:def"


# -- fragments inside files ------------------------------------------------------------------------

def test_best_fragment_carries_the_file_score(corpus: tuple[KeywordIndex, RankingIndex]) -> None:
    """score = file × fragment / the file's best fragment: each file's best fragment scores exactly its file."""
    frags, index = corpus
    result = rank(BEHAVIOUR, frags, index)
    assert all(isinstance(r, Ranked) and 0 < r.score <= 1 for r in result)
    assert [r.score for r in result] == sorted((r.score for r in result), reverse=True)
    fscore = dict(zip(index.files, file_scores(BEHAVIOUR, index).score.tolist()))
    raw = dict(zip(frags.ids, frags.scores(BEHAVIOUR, unique=True).tolist()))
    paths = frag_path(ROWS)
    best_raw: dict[str, float] = {}
    for fid, s in raw.items():
        best_raw[paths[fid]] = max(best_raw.get(paths[fid], 0.0), s)
    for r in result:
        path = paths[r.fragment]
        assert r.score == pytest.approx(fscore[path] * raw[r.fragment] / best_raw[path])
    for path in {paths[r.fragment] for r in result}:
        assert max(r.score for r in result if paths[r.fragment] == path) == pytest.approx(fscore[path])


def test_fragments_are_interleaved_by_score_not_grouped_by_file() -> None:
    """The best file's weak second fragment comes after the second file's best one."""
    weak = "def note(text):\n    return text.split()"  # one common query word: a weak match
    rows = [*PATH_ROWS[:2], FragmentRow("f:mp-weak", "pkg/multipart.py", 10, 11, weak),
            FragmentRow("f:cookies", "pkg/cookies.py", 1, 4, COOKIES)]
    frags, index = build(rows)
    result = rank("split multipart boundary", frags, index)
    assert [r.fragment for r in result] == ["f:mp", "f:helpers", "f:mp-weak"]
    assert [r.score for r in result] == sorted((r.score for r in result), reverse=True)


def test_per_file_and_min_relative_limit_a_files_fragments() -> None:
    """At most ``per_file`` fragments per file, best first, and none under MIN_RELATIVE of the file's best."""
    rows = [FragmentRow(f"f:{i}", "pkg/multipart.py", 10 * i + 1, 10 * i + 2, f"def f{i}():\n    " + "boundary " * (6 - i))
            for i in range(6)]
    rows.append(FragmentRow("f:weak", "pkg/multipart.py", 100, 101, "def weak():\n    boundary = 1\n" + "other " * 3000))
    rows += [FragmentRow(f"f:x{i}", f"pkg/x{i}.py", 1, 2, f"def g{i}():\n    return {i}") for i in range(8)]
    frags, index = build(rows)
    raw = dict(zip(frags.ids, frags.scores("boundary", unique=True).tolist()))
    assert 0 < raw["f:weak"] < MIN_RELATIVE * raw["f:0"]  # it matches, but barely
    assert [r.fragment for r in rank("boundary", frags, index, per_file=3)] == ["f:0", "f:1", "f:2"]
    assert [r.fragment for r in rank("boundary", frags, index, per_file=10)] == [f"f:{i}" for i in range(6)]


def test_max_files_limits_the_files_ranked(corpus: tuple[KeywordIndex, RankingIndex]) -> None:
    """``max_files=1`` keeps only the best file's fragments."""
    frags, index = corpus
    result = rank(BEHAVIOUR, frags, index, max_files=1)
    assert {frag_path(ROWS)[r.fragment] for r in result} == {SRC}


METHOD = "    def split_parts(self, body, boundary):\n        return body.split(boundary)"


def test_a_class_body_gives_way_to_the_matching_method_inside_it() -> None:
    """A class (container) around a matching method is not shown: the method is, at the file's score."""
    klass = f'class MultipartReader:\n    """Reads bodies."""\n{METHOD}'
    rows = [FragmentRow("f:class", "pkg/reader.py", 1, 4, klass, container=True),
            FragmentRow("f:method", "pkg/reader.py", 3, 4, METHOD)]
    frags, index = build(rows)
    assert index.where["f:class"][3] == 1 and index.where["f:method"][3] == 0
    raw = dict(zip(frags.ids, frags.scores("split boundary", unique=True).tolist()))
    assert raw["f:class"] > 0 and raw["f:method"] > 0  # both match on their own
    assert [(r.fragment, r.score) for r in rank("split boundary", frags, index)] == [("f:method", 1.0)]


def test_a_class_that_gave_way_is_shown_as_its_outline_right_after_its_best_method() -> None:
    """The class's outline (a few tokens: the map around the method an agent edits, and the class for
    a task about it) comes right after the best of its methods shown, before weaker fragments of the
    file, never above the method."""
    weak = "    def close(self):\n        self.boundary = None"
    klass = f'class MultipartReader:\n    """Reads bodies."""\n{METHOD}\n{weak}'
    rows = [FragmentRow("f:class", "pkg/reader.py", 1, 6, klass, container=True, outline="f:class-outline"),
            FragmentRow("f:method", "pkg/reader.py", 3, 4, METHOD),
            FragmentRow("f:weak", "pkg/reader.py", 5, 6, weak),
            FragmentRow("f:helper", "pkg/reader.py", 8, 9, "def split_lines(text):\n    return text.split()")]
    frags, index = build(rows)
    assert index.outline_of("f:class") == "f:class-outline" and index.outline_of("f:method") == ""
    ranked = rank("split boundary", frags, index)
    assert [r.fragment for r in ranked] == ["f:method", "f:class-outline", "f:helper", "f:weak"]
    assert ranked[1].score == pytest.approx(CLASS_OUTLINE_AFTER * ranked[0].score)
    assert "outline of the class" in ranked[1].reason


GO_TYPE = "type Context struct {\n\twriter Writer\n\tcode int\n}"
GO_METHOD = "func (c *Context) Status(code int) {\n\tc.code = code\n\tc.writer.WriteHeader(code)\n}"


def _go_rows(type_text: str = GO_TYPE) -> list[FragmentRow]:
    return [FragmentRow("f:type", "ctx/context.go", 1, 4, type_text, container=True, outline="f:type-outline",
                        qualified="ctx.context.Context"),
            FragmentRow("f:status", "ctx/context.go", 6, 9, GO_METHOD, qualified="ctx.context.Context.Status"),
            FragmentRow("f:other", "ctx/context.go", 11, 13, "func statusText(code int) string {\n\treturn text[code]\n}",
                        qualified="ctx.context.statusText")]


def test_a_type_whose_methods_are_written_apart_comes_right_after_its_best_method() -> None:
    """Go's methods (and Rust's in ``impl`` blocks) are outside their type's body: the type (its
    fields, what the method works on) still comes right after the best of its methods shown."""
    frags, index = build(_go_rows())
    ranked = rank("write the status code header", frags, index)
    assert [r.fragment for r in ranked] == ["f:status", "f:type", "f:other"]
    assert ranked[1].score == pytest.approx(CLASS_OUTLINE_AFTER * ranked[0].score)
    assert "the type of the methods shown" in ranked[1].reason


def test_a_type_chosen_for_its_own_words_is_moved_up_and_shown_once() -> None:
    frags, index = build(_go_rows("type Context struct {\n\twriter Writer // writes the header\n\tcode int\n}"))
    ranked = rank("write the status code header", frags, index)
    assert [r.fragment for r in ranked][:2] == ["f:status", "f:type"] and len(ranked) == len({r.fragment for r in ranked})


def test_a_class_outline_needs_a_method_shown_from_it() -> None:
    """A class that gave way only to methods cut from the result adds no outline."""
    klass = f'class MultipartReader:\n    """Reads bodies."""\n{METHOD}'
    rows = [FragmentRow("f:class", "pkg/reader.py", 1, 4, klass, container=True, outline="f:class-outline"),
            FragmentRow("f:method", "pkg/reader.py", 3, 4, METHOD),
            FragmentRow("f:top", "pkg/reader.py", 6, 7, "def split_boundary_parts(boundary):\n    return split(boundary, boundary)")]
    frags, index = build(rows)
    assert [r.fragment for r in rank("split boundary", frags, index, per_file=1)] == ["f:top"]


def test_outlines_survive_a_save_and_load(tmp_path: Path) -> None:
    rows = [FragmentRow("f:class", "pkg/reader.py", 1, 4, "class A:\n    pass", container=True, outline="f:o"),
            FragmentRow("f:other", "pkg/reader.py", 6, 7, "def b():\n    pass")]
    _, index = build(rows)
    index.save(tmp_path / "r", key="k")
    loaded = RankingIndex.load(tmp_path / "r")
    assert loaded.outline_of("f:class") == "f:o" and loaded.outline_of("f:other") == "" and loaded.outline_of("f:zzz") == ""


def test_a_nested_function_gives_way_to_the_function_around_it_and_lends_it_its_score() -> None:
    """A function around a matching nested function is shown instead of it, whole (with the closure it
    needs), and scores as well as the nested one would; other fragments are relative to that score."""
    outer = "def make_reader():\n    registry = {}\n    cache = {}\n    limit = 10\n" + METHOD
    rows = [FragmentRow("f:outer", "pkg/reader.py", 1, 6, outer),
            FragmentRow("f:inner", "pkg/reader.py", 5, 6, METHOD),
            FragmentRow("f:other", "pkg/reader.py", 10, 11, "def other(text):\n    return text.split()")]
    frags, index = build(rows)
    raw = dict(zip(frags.ids, frags.scores("split boundary", unique=True).tolist()))
    assert raw["f:inner"] > raw["f:outer"] > 0  # the nested function matches better on its own
    result = {r.fragment: r.score for r in rank("split boundary", frags, index)}
    assert set(result) == {"f:outer", "f:other"}
    assert result["f:outer"] == 1.0
    assert result["f:other"] == pytest.approx(raw["f:other"] / raw["f:inner"])


def _long_outer(own: str = "    value = compute()") -> list[FragmentRow]:
    """A Python function of ``NESTED_LONG`` lines that defines ``split_parts`` (lines 3-4) and another
    nested function; its outline is its own macro fragment."""
    filler = "".join(f"    {own.strip()}  # step {n}\n" for n in range(NESTED_LONG - 7))
    weak = "    def close(handle):\n        handle.release()"
    outer = f'def make_reader(registry):\n    """Make a reader."""\n{METHOD}\n{weak}\n{filler}    return split_parts\n'
    end = outer.count("\n")
    assert end == NESTED_LONG
    return [FragmentRow("f:outer", "pkg/reader.py", 1, end, outer, container=NESTING, outline="f:outer-outline"),
            FragmentRow("f:inner", "pkg/reader.py", 3, 4, METHOD),
            FragmentRow("f:close", "pkg/reader.py", 5, 6, weak),
            FragmentRow("f:other", "pkg/other.py", 1, 2, "def other(text):\n    return text.split()")]


def test_a_long_function_gives_way_to_the_nested_function_that_matches_with_its_outline_after() -> None:
    """The nested function is the unit a change names; the long function around it comes as its outline
    (signature, doc line, nested signatures) right after it, not as a body that repeats it."""
    frags, index = build(_long_outer())
    ranked = rank("split boundary", frags, index)
    assert [r.fragment for r in ranked][:2] == ["f:inner", "f:outer-outline"]
    assert "f:outer" not in {r.fragment for r in ranked}
    assert ranked[1].score == pytest.approx(CLASS_OUTLINE_AFTER * ranked[0].score)
    assert "outline of the function around the nested functions shown" in ranked[1].reason


def test_a_long_function_whose_own_lines_match_is_shown_whole() -> None:
    """The nested function holds a small part of the match (the function's own lines say "boundary" many
    times): the function is the unit, whole, and its outline is not added."""
    frags, index = build(_long_outer(own="    boundary = split(boundary)"))
    raw = dict(zip(frags.ids, frags.scores("split boundary", unique=True).tolist()))
    assert raw["f:inner"] > 0
    ranked = [r.fragment for r in rank("split boundary", frags, index)]
    assert ranked[0] == "f:outer" and "f:inner" not in ranked and "f:outer-outline" not in ranked


def test_a_short_function_around_a_nested_match_is_shown_whole_even_with_an_outline() -> None:
    outer = "def make_reader():\n    registry = {}\n" + METHOD
    rows = [FragmentRow("f:outer", "pkg/reader.py", 1, 4, outer, container=NESTING, outline="f:outer-outline"),
            FragmentRow("f:inner", "pkg/reader.py", 3, 4, METHOD)]
    frags, index = build(rows)
    assert [r.fragment for r in rank("split boundary", frags, index)] == ["f:outer"]


def test_a_long_function_whose_nested_match_is_cut_comes_as_its_body() -> None:
    """Nothing nested is shown (a stronger fragment took the file's one place): the function comes as
    its body, at its own score, as it would without the nested one."""
    rows = [*_long_outer(), FragmentRow("f:top", "pkg/reader.py", 60, 61,
                                        "def split_boundary(boundary):\n    return split(boundary, boundary)")]
    frags, index = build(rows)
    raw = dict(zip(frags.ids, frags.scores("split boundary", unique=True).tolist()))
    ranked = {r.fragment: r for r in rank("split boundary", frags, index, per_file=1)}
    assert set(ranked) == {"f:top", "f:outer", "f:other"}
    outer_rel = raw["f:outer"] * NESTED_LONG ** LENGTH_PRIOR / (raw["f:top"] * 2 ** LENGTH_PRIOR)
    assert ranked["f:outer"].score == pytest.approx(min(1.0, outer_rel))


def test_a_class_without_a_matching_member_is_shown() -> None:
    """A class whose enclosed fragments do not match stays: there is nothing smaller to show."""
    close = "    def close(self):\n        pass"
    klass = f'class SplitBoundary:\n    """Reads bodies."""\n{close}'
    rows = [FragmentRow("f:class", "pkg/reader.py", 1, 4, klass, container=True),
            FragmentRow("f:close", "pkg/reader.py", 3, 4, close)]
    frags, index = build(rows)
    assert [r.fragment for r in rank("split boundary", frags, index)] == ["f:class"]


# -- the query -------------------------------------------------------------------------------------

def test_repeated_query_words_do_not_change_the_ranking(corpus: tuple[KeywordIndex, RankingIndex]) -> None:
    """Words count once: repeating "boundary" would change raw BM25 (checked), but not the ranking."""
    frags, index = corpus
    once, repeated = "split body boundary headers", "split body boundary boundary boundary headers headers"
    assert not np.allclose(frags.scores(once), frags.scores(repeated))  # the repetition matters to plain BM25
    assert not np.allclose(index.windows.scores(once), index.windows.scores(repeated))
    assert rank(repeated, frags, index) == rank(once, frags, index)
    np.testing.assert_array_equal(file_scores(repeated, index).score, file_scores(once, index).score)


@pytest.mark.parametrize("task", ["", "   ", "zebra quokka", "the of and"])
def test_a_task_without_known_words_ranks_nothing(corpus: tuple[KeywordIndex, RankingIndex], task: str) -> None:
    """No known word: every file scores 0 and the result is empty."""
    frags, index = corpus
    assert rank(task, frags, index) == []
    assert not file_scores(task, index).score.any()


def test_an_empty_corpus_ranks_nothing() -> None:
    """No fragments at all: nothing to rank, no error."""
    frags, index = build([])
    assert index.files == [] and rank(BEHAVIOUR, frags, index) == []


def test_a_longer_symbol_wins_a_near_tie_with_a_short_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """BM25 favours a two-line ``close`` that mentions ``socket_options`` once over the 33-line
    ``__init__`` that takes it; the length prior (``lines ** LENGTH_PRIOR``) turns the near tie."""
    import acms.ranking.rank as first_stage

    init = ("def __init__(self, retries, socket_options=None):\n"
            + "\n".join(f"    self.setting_{i} = {i}" for i in range(30))
            + "\n    self.pool = make_pool(socket_options)\n    self.socket_options = socket_options")
    rows = [FragmentRow("f:init", "pkg/transport.py", 1, 33, init, name="__init__"),
            FragmentRow("f:close", "pkg/transport.py", 35, 36, "def close(self):\n    self.pool.close(socket_options)",
                        name="close")]
    frags, index = build(rows)
    task = "add socket_options argument"
    assert [r.fragment for r in rank(task, frags, index)] == ["f:init", "f:close"]
    monkeypatch.setattr(first_stage, "LENGTH_PRIOR", 0.0)
    assert [r.fragment for r in rank(task, frags, index)] == ["f:close", "f:init"]


def test_the_file_defining_a_named_symbol_wins_however_many_names_it_defines() -> None:
    """A utilities module defining forty helpers and the named one outranks a small file whose few names
    share words with it: the names field is not damped by its length (``NAMES_B``)."""
    helpers = [f"helper_number_{i}" for i in range(40)]
    cookies = ["function standardBrowserEnv() { return 1; }", "function write() {}", "function read() {}"]
    rows = [FragmentRow(f"f:u{i}", "lib/utils.js", 3 * i + 1, 3 * i + 1, f"function {n}() {{ return {i}; }}", name=n)
            for i, n in enumerate([*helpers, "isStandardBrowserEnv"])]
    rows += [FragmentRow(f"f:c{i}", "lib/helpers/cookies.js", 3 * i + 1, 3 * i + 1, line, name=n)
             for i, (n, line) in enumerate(zip(["standardBrowserEnv", "write", "read"], cookies))]
    _, index = build(rows)
    scores = by_path("make isStandardBrowserEnv work in web workers", index)
    assert scores["lib/utils.js"] > scores["lib/helpers/cookies.js"]


def test_change_words_are_not_matched_as_code() -> None:
    """'Fixed a bug in …' names the kind of change: code that says "fixed" and "bug" must not outrank
    the file the task is about; an identifier made of those words is still code."""
    from acms.ranking.task import code_terms

    assert code_terms("Fixed a bug in EnvironHeaders. Fixes issue 12") .split() == ["a", "in", "EnvironHeaders.", "12"]
    assert code_terms("call fix_headers, fixHeaders, fix() and bug.id") == "call fix_headers, fixHeaders, fix() and bug.id"
    rows = [
        FragmentRow("f:fixer", "pkg/fixers.py", 1, 4,
                    "def run_fixed(environ):\n    # fixed: a bug in old servers, see issue\n    return fixed(environ)"),
        FragmentRow("f:headers", "pkg/headers.py", 1, 4,
                    "class EnvironHeaders:\n    def __len__(self):\n        return sum(1 for _ in self)"),
    ]
    kw, index = build(rows)
    assert [r.fragment for r in rank("Fixed a bug in EnvironHeaders length, fixed issue", kw, index)][0] == "f:headers"
    assert rank("why does run_fixed return early", kw, index)[0].fragment == "f:fixer"  # identifiers stay


@pytest.mark.parametrize(("qn", "path", "inside"), [
    ("src.lib.tests.parse_header_trims", "src/lib.rs", True),       # Rust's #[cfg(test)] mod tests
    ("src.lib.Parser.parse_header", "src/lib.rs", False),
    ("tests.test_parser.test_header", "tests/test_parser.py", False),  # a test file: its role demotes it
    ("pkg.testing.helpers.make", "pkg/testing/helpers.py", False),
    ("crate.net.test.Mock.send", "crate/net.rs", True),
])
def test_in_test_scope(qn: str, path: str, inside: bool) -> None:
    from acms.ranking.roles import in_test_scope

    assert in_test_scope(qn, path) is inside


def test_test_code_inside_a_source_file_is_demoted_not_dropped(tmp_path: Path) -> None:
    """A Rust test names the function it tests and repeats the task's words; the function comes first, the
    test still comes, and a task about the tests gets it on near-equal terms (the real index and caches)."""
    names = _assembled_rust(tmp_path, "trim the header line in parse_header",
        "pub struct Parser { pos: usize }\n\nimpl Parser {\n"
        "    pub fn parse_header(&mut self, line: &str) -> Option<String> {\n        Some(line.trim().to_string())\n    }\n}\n\n"
        "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn parse_header_trims_the_header_line() {\n"
        "        let mut p = Parser { pos: 0 };\n        let header = p.parse_header(\" header line \");\n"
        "        assert_eq!(header, Some(\"header line\".to_string()));\n    }\n}\n")
    # the struct's outline right after its method (written apart, in an impl block); the test
    # module (a namespace) as its outline right after its test shown
    assert names == ["src.lib.Parser.parse_header", "src.lib.Parser",
                     "src.lib.tests.parse_header_trims_the_header_line", "src.lib.tests"]


def _assembled_rust(tmp_path: Path, task: str, lib_rs: str) -> list[str]:
    """The entities of ``task``'s context over a project of one ``src/lib.rs`` (the real index and caches)."""
    from acms.api import Index

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text(lib_rs, encoding="utf-8")
    with Index.open(tmp_path) as idx:
        idx.index()
        return [i.candidate.name for i in idx.assemble(task, budget=2000).assembled.items]


def test_a_rust_trait_method_brings_its_type_after_it(tmp_path: Path) -> None:
    """A method of ``impl Display for Parser`` (``Parser.Display.fmt``) is a method of ``Parser`` as one of
    ``impl Parser`` is: the struct's body comes right after it, past the impl block around the method."""
    names = _assembled_rust(tmp_path, "show the position when displayed",
        "use std::fmt;\n\npub struct Parser { pos: usize }\n\n"
        "impl fmt::Display for Parser {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n"
        "        write!(f, \"parser at position {}\", self.pos)\n    }\n}\n\n"
        "pub fn unrelated() -> usize {\n    1\n}\n")
    assert names[0] == "src.lib.Parser.Display.fmt"
    # the struct and the impl block around the method (its outline: where a new method of the trait
    # goes, and the unit a change to the block is), each right after it
    assert set(names[1:3]) == {"src.lib.Parser", "src.lib.Parser.Display"}


def test_an_impl_block_standing_for_a_type_defined_elsewhere_comes_as_its_outline(tmp_path: Path) -> None:
    """In a file of ``impl Chain`` and ``impl Iterator for Chain`` (the struct in another file), a trait
    method brings its impl block and the type's inherent block after it, each as its outline: the map of
    the type here, not every method's body again."""
    from acms.api import Index

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "chain.rs").write_text(
        "use crate::Chain;\n\nimpl Chain {\n    pub fn new() -> Self {\n        Chain { rest: Vec::new() }\n    }\n}\n\n"
        "impl Iterator for Chain {\n    type Item = u8;\n\n    fn next(&mut self) -> Option<u8> {\n        self.rest.pop()\n    }\n\n"
        "    fn size_hint(&self) -> (usize, Option<usize>) {\n        (self.rest.len(), Some(self.rest.len()))\n    }\n}\n",
        encoding="utf-8")
    with Index.open(tmp_path) as idx:
        idx.index()
        items = idx.assemble("the size hint of the chain iterator", budget=2000).assembled.items
    names = [i.candidate.name for i in items]
    assert names[0] == "src.chain.Chain.Iterator.size_hint"
    assert set(names[1:3]) == {"src.chain.Chain.Iterator", "src.chain.Chain"}
    inherent = next(i for i in items if i.candidate.name == "src.chain.Chain")
    assert "pub fn new() -> Self" in inherent.text and "Vec::new()" not in inherent.text


@pytest.mark.parametrize(("task", "named"), [
    ("Use Writer in Context.Status", {"Context.Status"}),
    ("the :class:`Map` now has a class attribute", {"Map"}),  # quoted: a name however plain
    ("fixed :attr:`~werkzeug.BaseResponse.is_streamed`", {"werkzeug.BaseResponse.is_streamed", "BaseResponse.is_streamed"}),
    ("Fix the variable in Template.from_file()", {"Template.from_file"}),
    ("Added optional SSL support for make_runserver", {"make_runserver"}),
    ("improve getPostData and __len__", {"getPostData", "__len__"}),
    ("the map now caches the routing table. Next time", set()),  # plain words, a sentence's full stop
    ("support for io.x", set()),  # too short to name one symbol: "io" alone, "io.x" is kept below
])
def test_named_symbols_are_the_names_written_as_code(task: str, named: set[str]) -> None:
    from acms.ranking.task import named_symbols

    assert named_symbols(task) >= named and not (named_symbols(task) - named - {"io.x"})


NAMED_ROWS = [
    # The method the task names says little of the task's words; its callers and a busy helper say more.
    FragmentRow("f:status", "pkg/context.py", 1, 3, "    def status(self, code):\n        self.writer.code = code",
                qualified="pkg.context.Context.status"),
    FragmentRow("f:abort", "pkg/context.py", 5, 8,
                "    def abort_with_status(self, code):\n        # the writer writes the status now\n"
                "        self.status(code)\n        self.writer.write_status(code)",
                qualified="pkg.context.Context.abort_with_status"),
    FragmentRow("f:writer", "pkg/context.py", 10, 12,
                "    def write_status(self, code):\n        # writer: status line, writer flush\n        self.writer.flush()",
                qualified="pkg.context.Context.write_status"),
]
FILLER = "\n".join(f"    field_{i} = {i}" for i in range(400))  # the class's own lines: its body says little
NAMED_ROWS.append(FragmentRow("f:class", "pkg/context.py", 1, 412, "class Context:\n" + FILLER,
                              container=True, outline="f:class-outline", qualified="pkg.context.Context"))


def test_a_symbol_the_task_names_carries_its_files_score() -> None:
    """``Context.status`` is what the task points at, though its body says "writer" and "status" less
    often than the methods around it: it comes first, at the file's score; BM25 alone put it last."""
    kw, index = build(NAMED_ROWS)
    plain = [r.fragment for r in rank("use the writer in the context status", kw, index)]
    assert plain.index("f:status") > 0
    ranked = rank("Use the writer in Context.status", kw, index)
    named = next(r for r in ranked if r.fragment == "f:status")
    assert named.score == pytest.approx(ranked[0].score) and "named in the task" in named.reason
    assert [r.fragment for r in ranked].count("f:status") == 1  # chosen for its words and named: once


def test_a_class_the_task_names_comes_as_its_outline(tmp_path: Path) -> None:
    """A named class is shown as its outline (the map of it, a few tokens), at its file's score; names
    survive a save and load of the index."""
    kw, index = build(NAMED_ROWS)
    index.save(tmp_path / "r", key="k")
    loaded = RankingIndex.load(tmp_path / "r")
    unnamed = {r.fragment: r.score for r in rank("the status code of the context is written twice", kw, loaded)}
    assert unnamed["f:class-outline"] < max(unnamed.values())  # the class gave way to its methods
    ranked = rank("the status code of `Context` is written twice", kw, loaded)
    outline = next(r for r in ranked if r.fragment == "f:class-outline")
    assert outline.score == pytest.approx(ranked[0].score) and "f:class" not in [r.fragment for r in ranked]


def test_version_control_metadata_is_not_part_of_the_task() -> None:
    """hg-git's "--HG--" block and git-svn's id line are the tool's, not the change's: "branch",
    "trunk" and a rebase hash must not match code."""
    from acms.ranking.task import code_terms, named_symbols

    assert code_terms("removed a useless newline call\n--HG--\nbranch : trunk").split() == ["removed", "a", "useless", "newline", "call"]
    assert code_terms("a\ngit-svn-id: svn://host/trunk@12 0f3c\nb").split() == ["a", "b"]
    assert named_symbols("close run_wsgi_app\n--HG--\nextra : rebase_source : 2b0f") == {"run_wsgi_app"}
    rows = [FragmentRow("f:branch", "pkg/branches.py", 1, 2, "def trunk_branch():\n    return branch(trunk)"),
            FragmentRow("f:newline", "pkg/writer.py", 1, 2, "def newline(self):\n    self.write(newline_call)")]
    kw, index = build(rows)
    assert [r.fragment for r in rank("removed a useless newline call\n--HG--\nbranch : trunk", kw, index)] == ["f:newline"]
