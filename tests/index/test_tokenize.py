from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acms.index.tokenize import STOP_WORDS, code_tokens, s_stem, search_terms


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("parseHttpHeader", ["parse", "http", "header", "parsehttpheader"]),
        ("parse_http_header", ["parse", "http", "header", "parse_http_header"]),
        ("PARSE_HTTP_HEADER", ["parse", "http", "header", "parse_http_header"]),
        ("HTTPServer", ["http", "server", "httpserver"]),
        ("XMLHttpRequest", ["xml", "http", "request", "xmlhttprequest"]),
        ("IOError", ["io", "error", "ioerror"]),
        ("getURL", ["get", "url", "geturl"]),
        ("URLs", ["urls"]),
        ("getIDsFor", ["get", "ids", "getidsfor"]),
        ("utf8", ["utf", "utf8"]),  # the 1-character digit part is dropped, the whole kept
        ("sha256sum", ["sha", "256", "sum", "sha256sum"]),
        ("int32 base64", ["int", "32", "int32", "base", "64", "base64"]),
        ("__init__", ["init"]),  # one part: no whole
        ("_private_fn", ["private", "fn", "private_fn"]),
        ("is_valid", ["valid", "is_valid"]),  # stop-word part dropped, whole kept
        ("getX", ["get", "getx"]),
        ("The car is in the garage.", ["car", "garage"]),
        ("self.assertEqual(x, 1)", ["self", "assert", "equal", "assertequal"]),
        ("os.path.join", ["os", "path", "join"]),
        ("kebab-case", ["kebab", "case"]),
        ("Café Éclair naïveMode", ["café", "éclair", "naïve", "mode", "naïvemode"]),
        ("", []),
        ("a b c 1 2 _ __", []),
    ],
)
def test_cases(text: str, expected: list[str]) -> None:
    assert code_tokens(text) == expected


def test_camel_identifier_found_by_words_and_snake_by_itself() -> None:
    doc = set(code_tokens("def parseHttpHeader(raw): ..."))
    assert set(code_tokens("parse http header")) <= doc
    assert "parse_http_header" in code_tokens("parse_http_header")
    assert set(code_tokens("parse http header")) <= set(code_tokens("parse_http_header"))


def test_no_stop_words_or_short_tokens() -> None:
    tokens = code_tokens("It is what it is: a_b, x, the_thing and THE END of i")
    assert not any(t in STOP_WORDS for t in tokens)
    assert all(len(t) > 1 for t in tokens)


# A direct, slow restatement of the rules, to check the fast path against.
def _reference(text: str) -> list[str]:
    out = []
    for run in re.findall(r"\w+", text):
        parts = []
        for piece in run.split("_"):
            parts += re.findall(
                r"[A-Z]{2,}s(?![^\W\d_A-Z])|[A-Z]+(?=[A-Z][^\W\d_A-Z])|[A-Z]?[^\W\d_A-Z]+|[A-Z]+|\d+",
                piece,
            )
        out += [p.lower() for p in parts if len(p) > 1 and p.lower() not in STOP_WORDS]
        if len(parts) > 1:
            out.append(run.strip("_").lower())
    return out


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aAbBzZ09_ .é-É", max_size=30))
def test_matches_reference(text: str) -> None:
    assert code_tokens(text) == _reference(text)


def test_deterministic_and_pure() -> None:
    text = "class HTTPServer(BaseServer): def handle_request(self): return self.rfile"
    first = code_tokens(text)
    assert [code_tokens(text) for _ in range(3)] == [first] * 3
    assert Counter(first)["http"] == 1


@pytest.mark.parametrize(("word", "stem"), [
    ("headers", "header"), ("proxies", "proxy"), ("iris", "iri"), ("matches", "matche"), ("loaders", "loader"),
    ("status", "status"), ("class", "class"), ("address", "address"), ("has", "has"), ("utf8", "utf8"),
    ("header", "header"), ("trees", "tree"), ("series", "sery"),  # Harman's rules as written, both sides alike
])
def test_s_stemmer(word: str, stem: str) -> None:
    assert s_stem(word) == stem


def test_search_terms_stem_word_parts_and_keep_whole_identifiers() -> None:
    """A task's plural meets the code's singular (and back); a whole identifier of several parts stays exact."""
    assert search_terms("parse_headers EnvironHeaders") == ["parse", "header", "parse_headers", "environ", "header",
                                                            "environheaders"]
    assert search_terms("Added support for IRIs and proxies") == ["added", "support", "iri", "proxy"]
    assert set(search_terms("the headers")) <= set(search_terms("def get_header(): pass"))
    assert code_tokens("parse_headers") == ["parse", "headers", "parse_headers"]  # the LSA vocabulary is unstemmed
