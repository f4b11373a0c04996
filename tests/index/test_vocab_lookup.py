"""A saved keyword index answers a query's terms from its vocabulary's text without parsing it, with
the ids the parsed vocabulary gives, for any terms (quotes, backslashes, separators, other scripts)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from acms.index.keyword import Postings

terms = st.text(alphabet=st.sampled_from(list('ab"\\\\,: {}_1\u00e9\u4e2d\n')), min_size=0, max_size=6)


@settings(max_examples=200, deadline=None)
@given(vocab=st.dictionaries(terms, st.integers(0, 10**6), max_size=12), asked=st.lists(terms, max_size=8),
       added=st.dictionaries(terms, st.integers(0, 10**6), max_size=3), compact=st.booleans())
def test_looked_up_ids_are_the_parsed_vocabularys(vocab: dict[str, int], asked: list[str], added: dict[str, int],
                                                   compact: bool) -> None:
    separators = (",", ":") if compact else (", ", ": ")
    text = json.dumps(vocab, ensure_ascii=False, separators=separators).encode("utf-8")
    saved = Postings({}, None, {}, text, added)
    parsed = {**vocab, **added}
    queried = asked + list(vocab)[:3] + ([] if compact else [str(i) for i in range(30)])  # and a parse
    assert saved.token_ids(queried) == [parsed[t] for t in queried if t in parsed]
    written = Postings({}, None, {}, saved.vocab_json())  # what an update writes: the text, the added terms after it
    assert written.token_ids(queried) == [parsed[t] for t in queried if t in parsed]


def test_a_long_lived_index_parses_the_vocabulary_once_its_lookups_add_up() -> None:
    vocab = {f"term{i}": i for i in range(100)}
    saved = Postings({}, None, {}, json.dumps(vocab).encode("utf-8"))
    for start in range(0, 40, 5):  # queries of five new terms each
        asked = [f"term{i}" for i in range(start, start + 5)] + ["absent"]
        assert saved.token_ids(asked) == list(range(start, start + 5))
    assert saved._vocab is not None  # more than LOOKUP_TERMS terms looked up: parsed, and used from then on
    assert saved.token_ids(["term99", "absent"]) == [99]
