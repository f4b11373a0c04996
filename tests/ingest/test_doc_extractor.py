from __future__ import annotations

from acms.ingest.doc_extractor import extract_markdown, extract_rst, slug
from acms.ingest.model import DocSection, Extraction

MARKDOWN = """\
Preamble, not a section.

# Project

Intro.

## Install

```bash
# not a heading
pip install acms
```

### From source

~~~
## also not a heading
~~~

## Usage
text

Options
-------

## Usage

Appendix
========
last line
"""


def table(ext: Extraction) -> list[tuple[str, str, int, int, int, str | None]]:
    return [(s.title, s.anchor, s.level, s.start_line, s.end_line, s.parent) for s in ext.sections]


def test_markdown_nested_sections_with_exact_ranges() -> None:
    ext = extract_markdown("README.md", MARKDOWN)
    assert ext.language == "markdown"
    assert ext.module is None and ext.symbols == [] and ext.parse_error is None
    assert table(ext) == [
        ("Project", "project", 1, 3, 27, None),
        ("Install", "project/install", 2, 7, 19, "project"),
        ("From source", "project/install/from-source", 3, 14, 19, "project/install"),
        ("Usage", "project/usage", 2, 20, 22, "project"),
        ("Options", "project/options", 2, 23, 25, "project"),  # setext "---"
        ("Usage", "project/usage-2", 2, 26, 27, "project"),  # duplicate heading, unique anchor
        ("Appendix", "appendix", 1, 28, 30, None),  # setext "===", runs to the last line
    ]


def test_markdown_sections_are_dataclasses() -> None:
    first = extract_markdown("a.md", "# A\ntext\n").sections[0]
    assert first == DocSection(title="A", anchor="a", level=1, start_line=1, end_line=2, parent=None)


def test_markdown_headings_in_fences_are_ignored() -> None:
    text = "````md\n```\n# inside\n```\n````\n# After\n~~~python\n# unclosed fence runs to the end\n"
    assert table(extract_markdown("a.md", text)) == [("After", "after", 1, 6, 8, None)]


def test_markdown_backtick_info_string_with_backtick_is_not_a_fence() -> None:
    text = "``` not `a` fence\n# Real\n"
    assert [s.title for s in extract_markdown("a.md", text).sections] == ["Real"]


def test_markdown_duplicate_headings_get_numbered_anchors() -> None:
    text = "# A\n## B\n## B\n# A\n## B\n# A\n"
    assert [s.anchor for s in extract_markdown("a.md", text).sections] == ["a", "a/b", "a/b-2", "a-2", "a-2/b", "a-3"]


def test_markdown_atx_variants() -> None:
    text = "#hashtag\n   ### Closed ###\n    # indented code\n#\n## Hello, World! (v2) ##\n## C# ##\n"
    assert [(s.title, s.anchor, s.level) for s in extract_markdown("a.md", text).sections] == [
        ("Closed", "closed", 3),
        ("", "section", 1),
        ("Hello, World! (v2)", "section/hello-world-v2", 2),
        ("C#", "section/c", 2),
    ]


def test_markdown_skipped_levels_nest_under_the_nearest_higher_heading() -> None:
    text = "# A\n### C\n## B\ntext\n"
    assert table(extract_markdown("a.md", text)) == [
        ("A", "a", 1, 1, 4, None),
        ("C", "a/c", 3, 2, 2, "a"),
        ("B", "a/b", 2, 3, 4, "a"),
    ]


def test_markdown_setext_needs_a_paragraph() -> None:
    text = "Multi\nline title\n===\n\ntext\n\n---\n\n- item\n---\n\n> quote\n---\n\n===\n"
    assert table(extract_markdown("a.md", text)) == [("Multi line title", "multi-line-title", 1, 1, 15, None)]


def test_markdown_front_matter_and_html_comments_are_not_headings() -> None:
    text = "---\ntitle: Doc\n---\n<!--\n# commented out\n-->\n# Real\n"
    assert table(extract_markdown("a.md", text)) == [("Real", "real", 1, 7, 7, None)]


def test_markdown_without_headings_has_no_sections() -> None:
    assert extract_markdown("a.md", "just text\n\nmore\n").sections == []
    assert extract_markdown("a.md", "").sections == []


def test_slug() -> None:
    assert slug("From Source") == "from-source"
    assert slug("  API: `load()` & friends ") == "api-load-friends"
    assert slug("Über uns") == "über-uns"
    assert slug("snake_case") == "snake-case"
    assert slug("!!!") == "section"


RST = """\
=======
 Title
=======

Intro.

Section One
===========

Sub A
-----

text

Section Two
===========

Sub B
-----

Deep
~~~~
end
"""


def test_rst_levels_follow_first_appearance_of_each_style() -> None:
    ext = extract_rst("index.rst", RST)
    assert ext.language == "rst"
    assert table(ext) == [
        ("Title", "title", 1, 1, 23, None),  # overlined "=" is a style of its own
        ("Section One", "title/section-one", 2, 7, 14, "title"),
        ("Sub A", "title/section-one/sub-a", 3, 10, 14, "title/section-one"),
        ("Section Two", "title/section-two", 2, 15, 23, "title"),
        ("Sub B", "title/section-two/sub-b", 3, 18, 23, "title/section-two"),
        ("Deep", "title/section-two/sub-b/deep", 4, 21, 23, "title/section-two/sub-b"),
    ]


def test_rst_non_titles() -> None:
    text = (
        "Para line one\n"
        "continues here\n"
        "==============\n"  # inside a paragraph: not a title
        "\n"
        "----------\n"  # a transition
        "\n"
        "Example::\n"
        "\n"
        "    Indented\n"
        "    ========\n"  # literal block
        "\n"
        "Too long a title\n"
        "==\n"  # underline of 2 under a longer title: text
        "\n"
        "Real title\n"
        "^^^^\n"  # shorter, but 4+ characters: a title (docutils only warns)
    )
    assert table(extract_rst("a.rst", text)) == [("Real title", "real-title", 1, 15, 16, None)]


def test_rst_title_after_explicit_markup_and_duplicates() -> None:
    text = ".. _install:\nInstall\n-------\n\nInstall\n-------\n\nNotes\n*****\n"
    assert table(extract_rst("a.rst", text)) == [
        ("Install", "install", 1, 2, 4, None),
        ("Install", "install-2", 1, 5, 9, None),
        ("Notes", "install-2/notes", 2, 8, 9, "install-2"),
    ]


def test_rst_overline_and_underline_styles_differ() -> None:
    text = "Part\n====\n\n=====\nOther\n=====\n\nAgain\n=====\n"
    assert [(s.title, s.level) for s in extract_rst("a.rst", text).sections] == [
        ("Part", 1),
        ("Other", 2),
        ("Again", 1),
    ]
