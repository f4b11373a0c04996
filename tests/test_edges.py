"""Every edge validates its input: arbitrary text gives an answer or a one-line error, never a traceback,
and never changes the store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from acms.assembly.notes import near_matches
from acms.assembly.protocol import RANKING_MAX_CHARS, parse_request, ranking_note, ranking_text, request_id_of
from acms.cli.main import cli
from acms.errors import InvalidRequest, QueryRejected
from acms.sparql.guard import is_update, refuse_update
from acms.store.oxigraph import OxigraphStore
from acms.text_checks import InputProblem, clip, strict_json, strict_toml

BASE: dict[str, Any] = {"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "intent": "parse header",
                        "budgets": {"tokens_max": 1000, "time_ms": 2000}, "request_id": "r1"}
HOSTILE = ["http://x> } ; DROP ALL ; <http://y", "\x00", "a\x01b", "\udcff", "x" * 20_000, "<>", "urn:", "../../etc"]
TEXT = st.one_of(st.text(max_size=200), st.sampled_from(HOSTILE))


@pytest.mark.parametrize("field", ["intent", "request_id", "strategy", "plan", "focus", "lod", "filters.paths"])
@given(value=TEXT)
@settings(max_examples=40, deadline=None)
def test_any_text_in_any_field_parses_or_names_the_field(field: str, value: str) -> None:
    data = json.loads(json.dumps(BASE))
    head, _, tail = field.partition(".")
    if tail:
        data[head] = {tail: [value]}
    elif field in {"focus", "lod"}:
        data[field] = [value]
    else:
        data[field] = value
    try:
        parse_request(data)
    except InvalidRequest as exc:
        assert exc.message.startswith("invalid render_request.v0: ") and "\n" not in exc.message
        assert head in exc.message


@pytest.mark.parametrize("value", HOSTILE[:5])
def test_hostile_focus_and_intent_are_refused_in_one_line(value: str) -> None:
    with pytest.raises(InvalidRequest) as err:
        parse_request({**BASE, "focus": [value], "intent": "x" + value})
    assert "focus[0]" in err.value.message or "intent" in err.value.message


def _quads(root: Path) -> int:
    store = OxigraphStore(root / ".acms" / "graph", read_only=True, wait=5)
    try:
        return len(store.raw)
    finally:
        store.close()


@given(task=TEXT, focus=TEXT, strategy=st.sampled_from(["auto", "arce", "../x", "a\nb", "\x00"]))
@example(task="0", focus="<>", strategy="auto")  # an empty bracketed IRI once reached the store
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_cli_assemble_never_tracebacks_and_never_writes(indexed_sample: Path, task: str, focus: str,
                                                        strategy: str) -> None:
    before = _quads(indexed_sample)
    out = CliRunner().invoke(cli, ["assemble", task, "--focus", focus, "--strategy", strategy,
                                   "-C", str(indexed_sample), "--budget", "400"])
    assert out.exit_code in (0, 2), (out.exit_code, out.output, repr(out.exception))
    assert not isinstance(out.exception, Exception) or isinstance(out.exception, SystemExit)
    if out.exit_code == 2:
        assert out.stderr.startswith(("acms: error: ", "Usage:")) and "Traceback" not in out.stderr
    assert _quads(indexed_sample) == before


# -- strict parsing of every JSON and TOML input (text_checks) ------------------------------------
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30)


@given(value=JSON_VALUES)
@settings(max_examples=200, deadline=None)
def test_strict_json_reads_what_json_reads(value: Any) -> None:
    """Differential: on JSON with no key twice and no deep nesting, the strict parser is json.loads."""
    text = json.dumps(value, ensure_ascii=False)
    assert strict_json(text) == json.loads(text)
    assert strict_json(text.encode("utf-8")) == json.loads(text)


@pytest.mark.parametrize(("data", "why"), [
    (b'{"a": 1, "a": 2}', "has the key 'a' twice in one object"),
    (b'[{"x": {"k": 1, "k": 1}}]', "has the key 'k' twice"),
    (b"[" * 65 + b"]" * 65, "more than 64 levels deep"),
    (b"[" * 100_000, "more than 64 levels deep"),
    (b'{"a": NaN}', "NaN is not a JSON number"),
    (b"\xff\xfe{}", "is not UTF-8 text (byte 0xff at offset 0)"),
    (b'{"a": ', "is not valid JSON"),
])
def test_strict_json_refuses_in_one_line(data: bytes, why: str) -> None:
    with pytest.raises(InputProblem) as err:
        strict_json(data)
    assert why in str(err.value) and "\n" not in str(err.value)


def test_strict_json_counts_depth_outside_strings_only() -> None:
    assert strict_json(json.dumps({"a": "[" * 1000 + '"\\' + "{" * 1000})) == {"a": "[" * 1000 + '"\\' + "{" * 1000}
    nested: list[Any] = []
    for _ in range(63):
        nested = [nested]
    assert strict_json("[" * 64 + "]" * 64) == nested  # the limit itself is allowed


@pytest.mark.parametrize(("text", "why"), [
    ("a = 1\na = 2\n", "Cannot overwrite a value"),
    ("[t]\nx = 1\n[t]\ny = 2\n", "Cannot declare"),
    ("x = " + "[" * 100_000 + "]" * 100_000, "more than 64 levels deep"),
    ("x = " + "[" * 70 + "]" * 70, "more than 64 levels deep"),
])
def test_strict_toml_refuses_in_one_line(text: str, why: str) -> None:
    with pytest.raises(InputProblem) as err:
        strict_toml(text)
    assert why in str(err.value) and "\n" not in str(err.value)


def test_a_request_with_a_key_twice_is_refused_not_last_wins() -> None:
    raw = json.dumps(BASE)[:-1] + ', "privacy_mode": "block", "privacy_mode": "allow"}'
    with pytest.raises(InvalidRequest) as err:
        parse_request(raw)
    assert err.value.message == "invalid render_request.v0: (request): has the key 'privacy_mode' twice in one object"
    assert request_id_of(raw) == "unknown"


def test_long_values_are_clipped_in_errors() -> None:
    with pytest.raises(InvalidRequest) as err:
        parse_request({**BASE, "intent": "y" * (1 << 20) + "z"})
    assert err.value.message == "invalid render_request.v0: intent: is 1,048,577 characters; the limit is 1,048,576"
    with pytest.raises(InvalidRequest) as err:
        parse_request({**BASE, "strategy": "A" * 5000})
    assert len(err.value.message) < 300 and "(5,000 characters)" in err.value.message
    assert parse_request({**BASE, "intent": "y" * (1 << 20)}).intent == "y" * (1 << 20)
    assert clip("a\nb  c") == "a b c"


def test_ranking_reads_the_head_and_tail_of_a_long_task() -> None:
    task = "H" * 30_000 + "M" * 100_000 + "T" * 10_000
    read = ranking_text(task)
    assert len(read) <= RANKING_MAX_CHARS + 1 and read.startswith("H" * 24_000) and read.endswith("T" * 8_000)
    assert ranking_text("short task") == "short task" and ranking_note("short task") is None
    assert "140,000 characters" in (ranking_note(task) or "")


@pytest.mark.parametrize(("text", "update"), [
    ("INSERT DATA { <urn:a> <urn:b> <urn:c> }", True),
    ("PREFIX x: <http://x/>\nBASE <http://b/>\ndelete where { ?s ?p ?o }", True),
    ("# INSERT\nWITH <urn:g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }", True),
    ("LOAD <http://x/>", True), ("CLEAR ALL", True), ("DROP GRAPH <urn:g>", True), ("COPY <a> TO <b>", True),
    ('SELECT * WHERE { ?s ?p "INSERT DATA" }', False), ("# DROP ALL\nASK { ?s ?p ?o }", False),
    ("PREFIX insert: <http://x/> SELECT * WHERE { ?s insert:p ?o }", False), ("DESCRIBE <urn:drop>", False),
])
def test_an_update_is_told_from_a_query(text: str, update: bool) -> None:
    assert is_update(text) is update
    if update:
        with pytest.raises(QueryRejected, match="^read-only: updates are not allowed here$"):
            refuse_update(text)


def test_near_matches_find_misspelt_and_short_names() -> None:
    labels = ["pkg.mod.Parser.parse_header", "pkg.mod.Parser", "pkg/mod.py", "pkg.util.normalize"]
    assert near_matches("parse_headr", labels)[0] == "pkg.mod.Parser.parse_header"
    assert near_matches("pkg.mod.Parsr", labels)[0] == "pkg.mod.Parser"
    assert near_matches("pkg/mdo.py", labels)[0] == "pkg/mod.py"
    assert near_matches("zzzzzz", labels) == []
