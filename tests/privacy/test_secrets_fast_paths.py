"""The scrubber's shortcuts find exactly what their plain definitions find.

Each shortcut (a trigger matched from rare anchor characters, chains of literals searched only
near junctions, prefilters in front of slow rules, tighter gates in front of detect-secrets'
plugins) must not change a single finding: these tests put each next to what it replaces, on
text made of the pieces that decide it (quotes, joiners, line breaks, Unicode case-folding
look-alikes such as the long s and the Kelvin sign).
"""

from __future__ import annotations

import re
from types import SimpleNamespace

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from acms.privacy import adapter, literals, rules, scrubber, trigger

# the package's modules' names in one namespace: each shortcut is tested beside its definition
s = SimpleNamespace(**{k: v for m in (trigger, literals, rules, adapter, scrubber) for k, v in vars(m).items()})

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

CHAIN_PIECES = ['"', "'", " ", "\t", "+", ".", "..", "\\", "\n", "\r\n", "a", "b", '""', "''",
                '"""', "x" * 299, "y" * 301, 'it\'s "', "= (", "TOKEN = "]
TRIGGER_PIECES = [*s._TRIGGER_WORDS, *s._TRIGGER_KEYWORDS, "password is", " was ", "=", ": ",
                  "(", ",", "=>", '"', "'", "`", "]", " ", "\n", "\t", "a", "Z", "0", "-", ".",
                  "abcdefghijklmnop", "\u212a", "\u0130", "\u017f", "\xe9", "API_KEY", "Secret"]
RULE_PIECES = ["password", "PASSWORD", "api_key", "secret", "token", "salt", "db_pass", " = ",
               "=", ": ", ":", "=>", " := ", '"', "'", "`", "r'", "b\"", ", ", "(", ")", " ",
               "\xa0", "\u2003", "\t", "hunter2!", "Xk9mP2vL7qRt4Wz8Nc", "Xk9mP2vL7qRt4Wz8",
               "aB3xY9zQ" * 3, "\\\"",
               "-", ".", "[", "]", "<", ">", "</password>", "\u017f", "\u212a", "x-api-key",
               "MNOabcdefghijklmnopqrstuvw.abcdef.", "abcdefghijklmnopqrstuvwxyz0123456789"]


def _text(pieces: list[str], max_size: int = 16) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(pieces), max_size=max_size).map("".join)


@FAST
@given(_text(CHAIN_PIECES, 14))
def test_chains_are_the_chain_regex_matches(text: str) -> None:
    assert [m.span() for m in s._chains(text)] == [m.span() for m in s._CHAIN.finditer(text)]


def test_chains_whose_junction_overlaps_another() -> None:
    # the junction after "it' " (a quote in a literal) hides the one that joins the literals
    for text in ['x = "it\' "\n"b"\n', '    """Docstring."""\n', "'a' '' \"\n\"b\"",
                 '"a"\n"" "b"', 'k = ("ab"\n     "cd")', 'k = "ab" \\\n    "cd"\n']:
        assert [m.span() for m in s._chains(text)] == [m.span() for m in s._CHAIN.finditer(text)]


def _plain_candidate_lines(text: str, low: str) -> list[tuple[int, int]]:
    """The trigger as it was defined: a plain trie of the words on the lower-cased text, and the
    quoted-string trigger on the text itself."""
    plain = re.compile(s._trie(s._TRIGGER_ITEMS))
    spans: dict[int, int] = {}
    for pattern, subject in ((plain, low), (s._TRIGGER_QUOTED, text)):
        for t in pattern.finditer(subject):
            start = text.rfind("\n", 0, t.start()) + 1
            end = text.find("\n", t.end())
            spans[start] = len(text) if end < 0 else end
    return sorted(spans.items())


@FAST
@given(_text(TRIGGER_PIECES, 20))
def test_anchored_trigger_fires_on_the_lines_of_the_plain_one(text: str) -> None:
    low = text.lower()
    if len(low) != len(text):
        low = text.translate(s._ASCII_LOWER)
    assert s._candidate_lines(text, low) == _plain_candidate_lines(text, low)


def test_kelvin_sign_is_lower_cased_into_the_quoted_trigger() -> None:
    # "\u212a".lower() == "k": on a non-ASCII text the quoted trigger must read the text itself
    text = 'x = "\u212a' + "a" * 15 + '"\n'
    assert s._candidate_lines(text, text.lower()) == _plain_candidate_lines(text, text.lower())


@FAST
@given(_text(RULE_PIECES, 12))
@example('api_key = "Xk9mP2vL7qRt4Wz8"')  # the shortest value the entropy rule takes
@example('DB_PASSWORD = "hunter2!"')
@example("https://x.io/?password=hunter2&x=1")
@example('("DB_PASSWORD", "s3cr3t!")')
@example("X-Api-Key: Zq8xP2mK9vL4nR7tW3")
def test_prefilters_pass_every_line_a_rule_accepts(line: str) -> None:
    for rule in s._line_rules():
        if rule.prefilter is None or rule.prefilter.search(line):
            continue
        for m in rule.pattern.finditer(line):
            a, b = m.span(rule.group)
            assert b <= a or rule.accept is not None and not rule.accept(m, line), rule


@FAST
@given(_text(RULE_PIECES + ["pwd", "auth_key", "privatekey", "contrasena", "key"], 12))
@example('pwd = "hunter2!"')
@example('db_key: "Zq8xP2mK9vL4nR7tW3"')
@example('"hunter2!" == my_contrasena')
def test_keyword_gate_passes_every_ascii_line_the_plugin_reports_on(line: str) -> None:
    (keyword,) = [ds for ds in s._ds_plugins() if ds.secret_type == "Secret Keyword"]
    assert keyword.ascii_gate is not None
    if line.isascii() and keyword.plugin.analyze_line(filename="a.py", line=line):
        assert keyword.ascii_gate.search(line.lower())


def test_keyword_gate_is_not_used_on_unicode_lines() -> None:
    # detect-secrets matches "password" in "pa\u017f\u017fword" (the long s folds to s), which the
    # lower-cased line does not spell: such a line is left to the needles
    line = 'monkey = 1; pa\u017f\u017fword = "Xk9-mP2.vL7q_Rt4!"'
    (keyword,) = [ds for ds in s._ds_plugins() if ds.secret_type == "Secret Keyword"]
    assert keyword.plugin.analyze_line(filename="a.py", line=line)
    assert keyword.ascii_gate is not None and not keyword.ascii_gate.search(line.lower())
    _, plugins = s._line_plan("code", s._needles_in(line.lower()))
    assert any(h.end - h.start == len("Xk9-mP2.vL7q_Rt4!")
               for h in s._ds_hits(line, line.lower(), plugins, 0, "a.py", False, True))


@FAST
@example("xsl_key = 1")
@example("SL_API_KEY")
@example("12345678:")
@given(_text(["s", "S", "\u017f", "l", "L", "_", "-", "api", "key", "pass", "pw", "softlayer",
              "x", " ", "\u0131", "\u212a", "1234", "5678", ":", "9"], 10))
def test_rewritten_gates_are_the_old_ones(text: str) -> None:
    gates = {ds.secret_type: ds.gate for ds in s._ds_plugins()}
    softlayer = re.compile(r"(?i)softlayer|(?<![a-z])sl[_\-]?(?:api)?[_\-]?(?:key|pass|pw)")
    assert bool(gates["SoftLayer Credentials"].search(text)) == bool(softlayer.search(text))
    assert bool(gates["Telegram Bot Token"].search(text)) == bool(re.search(r"\d{8}:", text))
