"""A segment's lists of strings come back as they were saved, whatever the strings hold."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from acms.retrieval.segment import _joined, _strings_at

TEXT = st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs", "Cc")), max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.none() | TEXT, max_size=20))
def test_any_list_of_optional_strings_round_trips(tmp_path_factory: object, strings: list[str | None]) -> None:
    folder: Path = tmp_path_factory.mktemp("strings")  # type: ignore[attr-defined]
    joined = _joined(strings)
    if joined is None:  # a string holds a separator: saved as JSON, as Segment.save does
        import json

        (folder / "names.json").write_text(json.dumps(strings), encoding="utf-8")
        assert any(s is not None and ("\x1e" in s or "\x1f" in s) for s in strings)
    else:
        (folder / "names.txt").write_text(joined, encoding="utf-8", newline="")
    assert _strings_at(folder, "names", len(strings)) == strings


def test_the_empty_string_and_none_are_told_apart(tmp_path: Path) -> None:
    for strings in ([""], [None], ["", None, ""], [], ["a\r\nb", "\r"]):
        joined = _joined(strings)
        assert joined is not None
        (tmp_path / "x.txt").write_text(joined, encoding="utf-8", newline="")
        assert _strings_at(tmp_path, "x", len(strings)) == strings
