"""The wire contract: request validation that names fields, a golden reply, error envelopes."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from acms.assembly.budget import dumps

from acms.assembly.model import Candidate
from acms.assembly.privacy import PrivacyMode
from acms.assembly.protocol import (
    ReplyMetrics, envelope_bound, envelope_for, error_envelope, fragment_key, parse_request, reply_for,
    request_schema,
)
from acms.assembly.render import Format
from acms.errors import CODES, BudgetTooSmall, ErrorCode, InvalidRequest, StoreLocked, UsageError
from acms.tokens import count

REQUEST: dict[str, Any] = {
    "version": "v0",
    "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60",
    "intent": "fix header parsing of chunked responses",
    "budgets": {"tokens_max": 250, "time_ms": 800},
    "risk_profile": {"level": "medium"},
    "privacy_mode": "redact",
    "request_id": "req-golden-001",
    "focus": ["urn:acms:e:pkg.http.Parser.parse_header"],
    "strategy": "arce",
}


def _c(n: str, name: str, kind: str, lod: str, text: str, path: str, start: int, score: float,
       strategy: str = "arce", reason: str = "keyword + graph") -> Candidate:
    lines = text.rstrip("\n").count("\n") + 1
    return Candidate(f"urn:acms:f:{n}", f"urn:acms:e:{name}", name, kind, lod, text, path, start,
                     start + lines - 1, score, strategy, reason)


DOC = "".join(f"Chunked transfer note {i}: each chunk starts with its size in hex.\n" for i in range(40))
CANDIDATES = [
    _c("1", "pkg.http.Parser.parse_header", "Method", "micro",
       'def parse_header(self, line: str) -> tuple[str, str]:\n'
       '    token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"\n'
       '    name, _, value = line.partition(":")\n    return name.strip().lower(), value.strip()\n',
       "pkg/http.py", 20, 0.812),
    _c("1b", "pkg.http.Parser.parse_header", "Method", "atomic",
       '    name, _, value = line.partition(":")\n', "pkg/http.py", 22, 0.41, "keyword-first",
       "keyword hit"),
    _c("2", "pkg.http.ChunkReader", "Class", "macro",
       "class ChunkReader:\n    def read(self) -> bytes: ...\n    def size(self) -> int: ...\n",
       "pkg/chunks.py", 1, 0.5, reason="called by parse_header"),
    _c("3", "docs/http.md#chunked", "DocSection", "micro", DOC, "docs/http.md", 1, 0.55,
       reason="mentions chunked"),
    _c("4", "pkg.util.hexint", "Function", "micro",
       "def hexint(s: str) -> int:\n    return int(s, 16)\n", "pkg/util.py", 5, 0.6),
    _c("5", "pkg.legacy.OldParser", "Class", "micro", "class OldParser:\n    pass\n" * 60,
       "pkg/legacy.py", 1, 0.2, "temporal-archaeology", "cold history"),
]
METRICS = ReplyMetrics(planner_ms=12, strategy="arce", strategy_reason="explicit in request",
                       timings_ms={"candidates": 9, "dedupe": 0})

# the reply and envelope shapes of the render_context_reply.v0 contract, as checks for the tests
FRAGMENT = {"type": "object", "required": ["id", "lod", "text", "entities", "cost_tokens"],
            "properties": {"lod": {"enum": ["macro", "micro", "atomic"]},
                           "entities": {"type": "array", "items": {"type": "string"}},
                           "cost_tokens": {"type": "integer", "minimum": 0}}}
REPLY_SCHEMA = {
    "type": "object", "required": ["request_id", "fragments", "kv_policy", "metrics"],
    "properties": {
        "fragments": {"type": "array", "items": FRAGMENT},
        "kv_policy": {"type": "object", "required": ["pin", "compress", "evict"],
                      "additionalProperties": {"type": "array", "items": {"type": "string"}}},
        "metrics": {"type": "object", "required": ["used_tokens", "planner_ms", "coverage_entities"]},
    },
}
ENVELOPE_SCHEMA = {
    "type": "object", "required": ["request_id", "error"], "additionalProperties": False,
    "properties": {"request_id": {"type": "string"}, "error": {
        "type": "object", "additionalProperties": False,
        "required": ["code", "message", "retriable", "attempt", "max_attempts", "options"],
        "properties": {
            "code": {"enum": [c.value for c in ErrorCode]}, "message": {"type": "string"},
            "retriable": {"type": "boolean"}, "attempt": {"type": "integer", "minimum": 1},
            "max_attempts": {"type": "integer", "minimum": 1},
            "options": {"type": "array", "minItems": 1, "items": {
                "type": "object", "required": ["action", "hint"], "additionalProperties": False,
                "properties": {"action": {"type": "string"}, "hint": {"type": "string"}}}},
        }}},
}


def test_golden_reply(golden: Callable[[str, Any], None]) -> None:
    result = reply_for(parse_request(REQUEST), CANDIDATES, METRICS)
    reply = result.reply
    assert reply is not None
    Draft202012Validator(REPLY_SCHEMA).validate(reply)
    used = sum(count(f["text"]) for f in reply["fragments"])
    assert reply["metrics"]["used_tokens"] == used <= REQUEST["budgets"]["tokens_max"]
    assert reply["metrics"]["reply_tokens"] == count(dumps(reply)) <= used + envelope_bound(reply)
    assert "ghp_" not in result.rendered and "urn:acms" not in result.rendered  # no IRIs in the envelope
    golden("reply_basic.json", reply)


def test_a_small_json_budget_buys_context_not_identifiers() -> None:
    """300 tokens of budget are 300 tokens of fragment text: the envelope does not eat into it."""
    request = parse_request({**REQUEST, "budgets": {"tokens_max": 300, "time_ms": 800}})
    reply = reply_for(request, CANDIDATES, METRICS).reply
    assert reply is not None and reply["fragments"]
    assert 250 <= reply["metrics"]["used_tokens"] <= 300 < reply["metrics"]["reply_tokens"]
    ids = [f["id"] for f in reply["fragments"]]
    assert all(len(i) == 12 for i in ids) and len(set(ids)) == len(ids)


def test_golden_reply_exercises_the_kv_policy() -> None:
    reply = reply_for(parse_request(REQUEST), CANDIDATES, METRICS).reply
    assert reply is not None
    kv = reply["kv_policy"]
    ids = [f["id"] for f in reply["fragments"]]
    assert set(kv["pin"]) | set(kv["compress"]) <= set(ids)
    assert not set(kv["pin"]) & set(kv["compress"]) and not set(kv["evict"]) & set(ids)
    assert fragment_key("urn:acms:f:1") in kv["pin"]       # best score, and micro of a focus entity
    assert fragment_key("urn:acms:f:2") in kv["compress"]  # macro outline
    assert any(f["truncated"] for f in reply["fragments"])
    assert kv["evict"] == [fragment_key("urn:acms:f:5")]    # dropped for budget
    assert reply["metrics"]["dropped"] == 1


def test_reply_for_raises_budget_too_small_with_a_working_minimum() -> None:
    request = parse_request({**REQUEST, "budgets": {"tokens_max": 10, "time_ms": 800}})
    with pytest.raises(BudgetTooSmall) as info:
        reply_for(request, CANDIDATES, METRICS)
    ok = parse_request({**REQUEST, "budgets": {"tokens_max": info.value.minimum, "time_ms": 800}})
    assert reply_for(ok, CANDIDATES, METRICS).reply is not None


def test_block_mode_reply_has_no_raw_text() -> None:
    request = parse_request({**REQUEST, "privacy_mode": "block"})
    reply = reply_for(request, CANDIDATES, METRICS).reply
    assert reply is not None
    assert all(f["text"].startswith("[BLOCKED] ") for f in reply["fragments"])
    assert "partition" not in dumps(reply)


def test_parse_request_defaults_and_extensions() -> None:
    minimal = {k: REQUEST[k] for k in ("version", "id", "intent", "budgets", "request_id")}
    r = parse_request(json.dumps(minimal))
    assert (r.privacy_mode, r.format, r.strategy, r.focus, r.risk_level) == (
        PrivacyMode.ALLOW, Format.MARKDOWN, "auto", (), None)
    full = parse_request({**REQUEST, "breadth": 2, "lod": ["micro", "macro"], "format": "text",
                          "filters": {"paths": ["src/**/*.py"], "languages": ["python"],
                                      "classes": ["Function"], "tiers": ["hot", "warm"],
                                      "min_score": 0.2, "k": 20}})
    assert full.tokens_max == 250 and full.breadth == 2 and full.lod == ("micro", "macro")
    assert full.filters.tiers == ("hot", "warm") and full.filters.k == 20 and full.format is Format.TEXT


def test_the_examples_of_the_contract_parse() -> None:
    parse_request({"version": "v0", "id": "b5c6a2fe-5e3b-41a1-b8ec-c7f8b91a7fb2",
                   "intent": "debug_memory_leak_in_embedding_computation",
                   "budgets": {"tokens_max": 3000, "time_ms": 500}, "risk_profile": {"level": "high"},
                   "privacy_mode": "allow", "request_id": "req-debug-002"})


def test_the_schema_ships_in_the_package_and_is_valid() -> None:
    schema = request_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def _with(path: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(REQUEST)
    *parents, leaf = path.split(".")
    node = data
    for p in parents:
        node = node.setdefault(p, {})
    if value is _DELETE:
        del node[leaf]
    else:
        node[leaf] = value
    return data


_DELETE = object()
BAD = [
    ("budgets.tokens_max", -5, "budgets.tokens_max: -5 is less than the minimum of 1"),
    ("budgets.tokens_max", _DELETE, "budgets.tokens_max: is required"),
    ("budgets.time_ms", "fast", "budgets.time_ms: 'fast' is not of type 'number'"),
    ("intent", _DELETE, "intent: is required"),
    ("request_id", _DELETE, "request_id: is required"),
    ("version", "v1", "version: 'v0' was expected"),
    ("id", "not-a-uuid", "id: 'not-a-uuid' does not match"),
    ("privacy_mode", "secret", "privacy_mode: 'secret' is not one of"),
    ("risk_profile.level", "extreme", "risk_profile.level: 'extreme' is not one of"),
    ("colour", "blue", "colour: is not a known field"),
    ("breadth", 9, "breadth: 9 is greater than the maximum of 4"),
    ("lod", ["huge"], "lod[0]: 'huge' is not one of"),
    ("lod", [], "lod: [] should be non-empty"),
    ("filters.k", 0, "filters.k: 0 is less than the minimum of 1"),
    ("filters.tiers", ["lukewarm"], "filters.tiers[0]: 'lukewarm' is not one of"),
    ("filters.paths", "src/*", "filters.paths: 'src/*' is not of type 'array'"),
    ("filters.depth", 3, "filters.depth: is not a known field"),
    ("format", "html", "format: 'html' is not one of"),
    ("focus", [""], "focus[0]: '' should be non-empty"),
    ("strategy", "Bad Name", "strategy: 'Bad Name' does not match"),
]


@pytest.mark.parametrize(("path", "value", "expected"), BAD, ids=[f"{p}={'(deleted)' if v is _DELETE else repr(v)}" for p, v, _ in BAD])
def test_every_schema_error_names_its_field(path: str, value: Any, expected: str) -> None:
    with pytest.raises(InvalidRequest) as info:
        parse_request(_with(path, value))
    err = info.value
    assert err.code == "INVALID_REQUEST" and isinstance(err, UsageError)
    assert err.errors == [e for e in err.errors] and any(e.startswith(expected) for e in err.errors)
    assert err.field == expected.split(":", 1)[0] and expected in err.message


@pytest.mark.parametrize("data", [[], "{not json", "null"])
def test_a_request_that_is_not_an_object(data: Any) -> None:
    with pytest.raises(InvalidRequest) as info:
        parse_request(data)
    assert info.value.field == "(request)"


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_error_code_builds_a_valid_envelope(code: ErrorCode) -> None:
    env = error_envelope(code, "something happened", "req-1")
    Draft202012Validator(ENVELOPE_SCHEMA).validate(env)
    spec = CODES[code]
    assert env["error"]["retriable"] is spec.retriable
    assert env["error"]["max_attempts"] == spec.max_attempts
    assert [o["action"] for o in env["error"]["options"]] == [a for a, _ in spec.options]
    assert list(env["error"]) == ["code", "message", "retriable", "attempt", "max_attempts", "options"]


def test_envelope_matches_the_contract_example() -> None:
    options = [{"action": "retry_with_reduced_scope", "hint": "Reduce L2 top_k from 50 to 20"},
               {"action": "return_minimal", "hint": "return what we have now"}]
    env = error_envelope("PROVIDER_TIMEOUT", "L2 provider exceeded deadline", "req-debug-002",
                         True, attempt=1, max_attempts=2, options=options)
    assert env == {"request_id": "req-debug-002", "error": {
        "code": "PROVIDER_TIMEOUT", "message": "L2 provider exceeded deadline", "retriable": True,
        "attempt": 1, "max_attempts": 2, "options": options}}


def test_envelope_for_exceptions() -> None:
    env = envelope_for(BudgetTooSmall(10, 57), "r")
    assert env["error"]["code"] == "BUDGET_TOO_SMALL"
    assert env["error"]["options"][0] == {"action": "retry_with_budget", "hint": "budgets.tokens_max >= 57"}
    assert envelope_for(StoreLocked("index is in use"), "r")["error"]["retriable"] is True
    assert envelope_for(InvalidRequest(["x: is required"]), "r")["error"]["code"] == "INVALID_REQUEST"
    internal = envelope_for(KeyError("secret detail"), "r")["error"]
    assert internal["code"] == "INTERNAL" and "secret detail" not in internal["message"]
    with pytest.raises(UsageError, match="valid: INVALID_REQUEST"):
        error_envelope("NOPE", "m", "r")


def test_kv_policy_pins_hot_and_never_pins_cold() -> None:
    from dataclasses import replace

    hot = replace(CANDIDATES[4], tier="hot", score=0.2)  # low score, but hot micro: pinned
    cold = replace(CANDIDATES[0], fragment="urn:acms:f:old", entity="urn:acms:e:old", tier="cold",
                   score=0.99, text="def parse_header(self, line):\n    return line\n")  # best score, but history
    request = parse_request({**REQUEST, "focus": [], "budgets": {"tokens_max": 2000, "time_ms": 800}})
    reply = reply_for(request, [hot, cold, CANDIDATES[2]], METRICS).reply
    assert reply is not None
    kv = reply["kv_policy"]
    assert fragment_key(hot.fragment) in kv["pin"]
    assert fragment_key(cold.fragment) not in kv["pin"] and fragment_key(cold.fragment) in kv["compress"]
