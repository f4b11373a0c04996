"""Files rebuilt from fragment slices, and the overlapping 40/20 line windows cut from them."""

from __future__ import annotations

import pytest

from acms.ranking.windows import STRIDE, WINDOW, Window, file_lines, windows


def numbered(n: int, first: int = 1) -> dict[int, str]:
    """``n`` known lines numbered from ``first``."""
    return {i: f"line {i}" for i in range(first, first + n)}


def test_file_lines_places_each_slice_at_its_start_line() -> None:
    """Slices of several files land on their own line numbers, per file."""
    out = file_lines([("a.py", 3, "x = 1\ny = 2"), ("b.md", 1, "# Title"), ("a.py", 10, "def f():\n    pass")])
    assert out == {"a.py": {3: "x = 1", 4: "y = 2", 10: "def f():", 11: "    pass"}, "b.md": {1: "# Title"}}


def test_file_lines_first_slice_wins_an_overlapping_line() -> None:
    """A class body and its method overlap; the line is kept once, from the slice seen first."""
    out = file_lines([("a.py", 1, "class A:\n    def m(self):\n        return 1"), ("a.py", 2, "    def m(SELF):\n        return 2\n# after")])
    assert out["a.py"] == {1: "class A:", 2: "    def m(self):", 3: "        return 1", 4: "# after"}


def test_file_lines_keeps_empty_lines_and_trailing_newline() -> None:
    """Lines are split on '\\n' only: blank lines keep their numbers, a trailing newline gives one empty line."""
    out = file_lines([("a.py", 5, "a\n\nb\n")])
    assert out["a.py"] == {5: "a", 6: "", 7: "b", 8: ""}


def test_no_lines_no_windows() -> None:
    """A file without known lines yields no window at all."""
    assert list(windows("a.py", {})) == []


@pytest.mark.parametrize("n", [1, 7, WINDOW])
def test_a_short_file_is_one_window(n: int) -> None:
    """Up to WINDOW lines, the whole file is one window."""
    lines = numbered(n)
    assert list(windows("a.py", lines)) == [Window("a.py", 1, n, "\n".join(lines.values()))]


def test_windows_of_forty_lines_every_twenty() -> None:
    """100 lines → 1-40, 21-60, 41-80, 61-100: the last window ends at the last line, no tail window after it."""
    ws = list(windows("a.py", numbered(100)))
    assert [(w.start, w.end) for w in ws] == [(1, 40), (21, 60), (41, 80), (61, 100)]
    assert all(w.path == "a.py" for w in ws)
    assert ws[1].text == "\n".join(f"line {i}" for i in range(21, 61))
    assert (WINDOW, STRIDE) == (40, 20)


def test_one_line_past_a_window_adds_a_second_window() -> None:
    """41 lines: the second window (21-41) covers the line the first one missed."""
    assert [(w.start, w.end) for w in windows("a.py", numbered(41))] == [(1, 40), (21, 41)]


@pytest.mark.parametrize("n", [1, 19, 20, 21, 39, 40, 41, 59, 60, 61, 99, 100, 101, 250])
def test_every_line_is_in_a_window_and_windows_are_full_but_the_last(n: int) -> None:
    """Coverage and shape for any length: each known line in some window, windows start every STRIDE lines."""
    ws = list(windows("a.py", numbered(n)))
    covered = {i for w in ws for i in range(w.start, w.end + 1)}
    assert covered == set(range(1, n + 1))
    assert [w.start for w in ws] == list(range(1, 1 + STRIDE * len(ws), STRIDE))
    assert all(w.end - w.start + 1 == WINDOW for w in ws[:-1])
    assert ws[-1].end == n
    # no window is a suffix of the one before it (no redundant tail window)
    assert len(ws) == 1 or ws[-2].end < n


def test_windows_count_known_lines_and_skip_gaps() -> None:
    """Lines no fragment covers are left out: a window spans 40 *known* lines, and its text has no filler."""
    lines = {**numbered(30, first=1), **numbered(30, first=101)}  # 1-30 and 101-130
    ws = list(windows("a.py", lines))
    assert [(w.start, w.end) for w in ws] == [(1, 110), (21, 130)]
    assert ws[0].text.split("\n") == [f"line {i}" for i in [*range(1, 31), *range(101, 111)]]


def test_windows_follow_line_order_not_insertion_order() -> None:
    """Lines are sorted by number whatever order the dictionary holds them in."""
    lines = {3: "c", 1: "a", 2: "b"}
    assert list(windows("a.py", lines)) == [Window("a.py", 1, 3, "a\nb\nc")]


def test_custom_window_and_stride() -> None:
    """The window and stride are parameters (as measured on the dev set: 30/15, 60/30)."""
    ws = list(windows("a.py", numbered(10), window=4, stride=3))
    assert [(w.start, w.end) for w in ws] == [(1, 4), (4, 7), (7, 10)]
