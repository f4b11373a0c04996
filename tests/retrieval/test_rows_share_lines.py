"""The caches' build tokenises a text once when later rows are runs of its lines (issue 14)."""

from __future__ import annotations

from acms.index.token_table import TokenizedLines, TokenTable
from acms.index.tokenize import search_terms
from acms.retrieval.segment_rows import SegmentRows
from acms.retrieval.corpus_read import CorpusRow

CLASS = "class Parser:\n    def parse_header(self, line):\n        return line.split(':')\n\n    def close(self):\n        pass"
METHOD = "    def parse_header(self, line):\n        return line.split(':')"


def _terms(rows: SegmentRows, lines: TokenizedLines, i: int) -> list[str]:
    ends = [0, *lines.line_ends.tolist()]
    first, count = rows.firsts[i], rows.counts[i]
    return [lines.tokens[t] for t in lines.ids[ends[first] : ends[first + count]].tolist()]


def test_a_row_inside_the_last_text_takes_its_lines_and_any_other_is_tokenised() -> None:
    table, rows = TokenTable(), SegmentRows()
    cases = [
        CorpusRow("f1", CLASS, "Parser", "m.Parser", 10, 15, "file:a"),
        CorpusRow("f2", METHOD, "parse_header", "m.Parser.parse_header", 11, 12, "file:a"),  # its lines
        CorpusRow("f3", "    def close(self):\n        return None", "close", "m.Parser.close", 14, 15, "file:a"),  # other text
        CorpusRow("f4", METHOD, "parse_header", "n.Parser.parse_header", 11, 12, "file:b"),  # another file
        CorpusRow("f5", "x = 1", None, None, None, None, None),  # no place
        CorpusRow("f6", "class Parser:", "Parser", "m.Parser", 10, 10, "file:a"),  # inside the last text again
    ]
    for row in cases:
        rows.add(row, table)
    assert rows.firsts[1] == rows.firsts[0] + 1 and rows.counts[1] == 2  # shared, not tokenised again
    assert rows.firsts[2] >= rows.firsts[0] + rows.counts[0]  # its own lines
    lines = table.lines()
    for i, row in enumerate(cases):
        assert _terms(rows, lines, i) == search_terms(row.text), row.frag
