"""The wire contract: ``render_request.v0`` in, ``render_context_reply.v0`` or an error envelope out.

The request is checked against ``schema/render_request.v0.json`` (shipped in the package); an
invalid one raises :class:`InvalidRequest` naming the field, e.g.
``budgets.tokens_max: -5 is less than the minimum of 1``.

Reply fragments carry the contract's ``id, lod, text, entities, cost_tokens`` plus acms provenance:
``source_ref`` (``path:start-end``), ``kind``, ``score``, ``strategy``, ``tier``, ``reason``,
``truncated``.

What the budget covers: the fragments' text, what a client puts into its prompt. ``cost_tokens``
counts one fragment's text and ``metrics.used_tokens = sum(cost_tokens) <= budgets.tokens_max``
(0 % overshoot). The envelope around the text is compact and bounded, so a small budget buys
context, not identifiers: a fragment ``id`` is a 12-hex digest of its IRI (stable while its content
is unchanged), names are the qualified names (no IRIs), ``reason``, names and warnings are cut
at ``FIELD_MAX_TOKENS``, ``evict`` lists at most ``EVICT_MAX`` ids, ``warnings`` at most
``WARNINGS_MAX`` lines. ``metrics.reply_tokens`` is the count of the whole serialized reply (compact
JSON, :func:`acms.assembly.budget.dumps`), for a client that pastes the JSON itself; the envelope,
``reply_tokens - used_tokens``, stays within :func:`envelope_bound`.

kv_policy (disjoint lists of fragment ids; pin wins over compress):

- ``pin``: the best-scored fragment, then the next best while the pinned fragments' tokens stay
  within half of all fragments' ``cost_tokens`` (walking by score), every ``micro`` fragment
  of a focus entity (``focus`` matches the entity IRI or name), and every ``micro`` fragment from
  the ``hot`` tier (code that changes or is used now comes back in the next request);
- tiers: a ``cold`` fragment (history: an old body, a commit) is never pinned; it is compressed;
- ``compress``: ``macro`` outlines, truncated fragments and ``cold`` fragments that are not pinned;
- ``evict``: candidates dropped for budget, best first, at most ``EVICT_MAX``.

Errors travel as the contract's envelope (``error_envelope``): the code, whether and how often to
retry, and the retry options, all from the one code table in :mod:`acms.errors` (``CODES``), which
the CLI's exit codes and the server's HTTP statuses share.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib.resources import files
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from acms.assembly.budget import ReplyBuilder, pack_json
from acms.assembly.dedupe import rank_key
from acms.assembly.model import Assembled, Candidate, Packed
from acms.assembly.privacy import PrivacyMode, protect
from acms.assembly.render import Format
from acms.errors import CODES, AcmsError, BudgetTooSmall, ErrorCode, InvalidRequest, UsageError
from acms.text_checks import WIRE_MAX_BYTES, InputProblem, bad_iri, clip, strict_json, text_problem, walk_strings
from acms.tokens import count

SCHEMA_NAME = "render_request.v0.json"
EVICT_MAX = 16
WARNINGS_MAX = 8
FIELD_MAX_TOKENS = 40  # names, reasons and warning lines in a reply
LABEL_MAX_TOKENS = 12  # kinds, strategy names, timing keys
MESSAGE_MAX_CHARS = 300
VALUE_SHOWN_CHARS = 60  # of a refused value, in the error that names it
REQUEST_ID_MAX_CHARS = 256
ID_HEX = 12
# envelope_bound: the reply around the text, with every capped field at its cap (see the tests)
ENVELOPE_BASE, ENVELOPE_PER_FRAGMENT, ENVELOPE_PER_EVICTED = 600, 200, 12
ESCAPED = frozenset('"\\' + "".join(map(chr, range(32))))  # what json.dumps escapes (ensure_ascii=False)


def request_schema() -> dict[str, Any]:
    """The shipped JSON Schema of ``render_request.v0`` (a fresh copy)."""
    text = (files("acms.assembly") / "schema" / SCHEMA_NAME).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator() -> Draft202012Validator:
    """Built once, on first use (not at import). The shipped schema is checked against its meta-schema
    by the tests, not by every process that reads a request (~27 ms of each ``acms assemble``)."""
    return Draft202012Validator(request_schema())


def _path(parts: Sequence[str | int]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(request)"


def _describe(error: ValidationError) -> list[str]:
    """One ``field: problem`` line per offending field, the field named in full."""
    parts = list(error.absolute_path)
    if error.validator == "required":
        m = re.match(r"'(.+?)' is a required property", error.message)
        return [f"{_path([*parts, m.group(1) if m else '?'])}: is required"]
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        unknown = sorted(set(error.instance) - set(known))
        return [f"{_path([*parts, k])}: is not a known field" for k in unknown]
    message = error.message
    if error.validator == "maxLength" and isinstance(error.instance, str):
        message = f"is {len(error.instance):,} characters; the limit is {error.validator_value:,}"
    elif isinstance(error.instance, str) and len(error.instance) > VALUE_SHOWN_CHARS:
        message = message.replace(repr(error.instance), repr(clip(error.instance, VALUE_SHOWN_CHARS)))
    if len(message) > MESSAGE_MAX_CHARS:
        message = message[: MESSAGE_MAX_CHARS - 1] + "…"
    return [f"{_path(parts)}: {message}"]


@dataclass(frozen=True)
class Filters:
    paths: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    min_score: float | None = None
    k: int | None = None
    tests_and_docs: str = "demote"  # "equal": tests, docs, examples and data files rank like source code


@dataclass(frozen=True)
class RenderRequest:
    """A validated ``render_request.v0``; ``budgets`` flattened, extensions defaulted."""

    id: str
    intent: str
    request_id: str
    tokens_max: int
    time_ms: float
    version: str = "v0"
    risk_level: str | None = None
    privacy_mode: PrivacyMode = PrivacyMode.ALLOW
    strategy: str = "auto"
    focus: tuple[str, ...] = ()
    breadth: int | None = None
    plan: str | None = None
    lod: tuple[str, ...] = ()
    filters: Filters = Filters()
    format: Format = Format.MARKDOWN


RANKING_MAX_CHARS = 32_000  # of a long task, what strategies and ranking read (3/4 from its head, 1/4 from its tail)


def ranking_text(intent: str, limit: int = RANKING_MAX_CHARS) -> str:
    """What ranking reads of a task: all of it up to ``limit`` characters; of a longer one its head and
    its tail (where an issue's last stack frames and error line are), so a 1 MiB task costs what a
    32k one does."""
    if len(intent) <= limit:
        return intent
    tail = limit // 4
    return f"{intent[: limit - tail]}\n{intent[-tail:]}"


def ranking_note(intent: str, limit: int = RANKING_MAX_CHARS) -> str | None:
    """The warning a long task gets: how much of it ranking read."""
    if len(intent) <= limit:
        return None
    return (f"the task is {len(intent):,} characters; ranking read its first {limit - limit // 4:,} "
            f"and last {limit // 4:,}")


def request_id_of(raw: str | bytes) -> str:
    """The request_id of a raw request, for the error envelope even when the request is invalid (cut
    to the schema's length: an envelope never echoes a long value back)."""
    try:
        found = strict_json(raw).get("request_id", "unknown")
    except (InputProblem, AttributeError):
        return "unknown"
    return clip(found, REQUEST_ID_MAX_CHARS) if isinstance(found, str) else "unknown"


def parse_request(data: Mapping[str, Any] | str | bytes) -> RenderRequest:
    """Validate and parse a request (an object, or its JSON text)."""
    if isinstance(data, (str, bytes)):
        if len(data) > WIRE_MAX_BYTES:
            raise InvalidRequest([f"(request): is over the limit of {WIRE_MAX_BYTES:,} bytes"])
        try:
            data = strict_json(data)
        except InputProblem as exc:
            raise InvalidRequest([f"(request): {exc}"]) from None
    elif isinstance(data, Mapping) and not isinstance(data, dict):
        data = dict(data)
    problems = sorted({line for e in _validator().iter_errors(data) for line in _describe(e)})
    problems += [f"{field}: {why}" for field, value in walk_strings(data) if (why := text_problem(value))]
    for i, f in enumerate(data.get("focus", ()) if isinstance(data, Mapping) else ()):
        bracketed = isinstance(f, str) and f.strip().startswith("<")
        iri = f.strip()[1:-1] if bracketed else f
        if isinstance(iri, str) and (bracketed or iri.startswith(("http://", "https://", "urn:"))) and (why := bad_iri(iri)):
            problems.append(f"focus[{i}]: {why}")
    if problems:
        raise InvalidRequest(problems)
    assert isinstance(data, Mapping)
    f = data.get("filters", {})
    return RenderRequest(
        id=data["id"], intent=data["intent"], request_id=data["request_id"],
        tokens_max=int(data["budgets"]["tokens_max"]), time_ms=data["budgets"]["time_ms"],
        version=data["version"], risk_level=data.get("risk_profile", {}).get("level"),
        privacy_mode=PrivacyMode(data.get("privacy_mode", "allow")),
        strategy=data.get("strategy", "auto"), focus=tuple(data.get("focus", ())),
        breadth=data.get("breadth"), plan=data.get("plan"), lod=tuple(data.get("lod", ())),
        filters=Filters(
            paths=tuple(f.get("paths", ())), languages=tuple(f.get("languages", ())),
            classes=tuple(f.get("classes", ())), tiers=tuple(f.get("tiers", ())),
            min_score=f.get("min_score"), k=f.get("k"), tests_and_docs=f.get("tests_and_docs", "demote"),
        ),
        format=Format(data.get("format", "markdown")),
    )


# -- replies ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReplyMetrics:
    """What the caller measured before packing; the reply adds used_tokens, coverage, dropped."""

    planner_ms: int
    strategy: str
    strategy_reason: str
    timings_ms: Mapping[str, int | float] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    entities_wanted: tuple[str, ...] | None = None


def _score(value: float) -> float | None:
    return round(value, 3) if math.isfinite(value) else None


def fragment_key(fragment: str) -> str:
    """The reply's id of a fragment: a short digest of its IRI (which holds its content hash)."""
    return hashlib.sha256(fragment.encode("utf-8")).hexdigest()[:ID_HEX]


def _cut(text: str, limit: int = FIELD_MAX_TOKENS) -> str:
    """``text`` in at most ``limit`` tokens: the longest prefix that fits, marked with an ellipsis."""
    if count(text) <= limit:
        return text
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(text[:mid] + "…") <= limit:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + "…"


def envelope_bound(reply: Mapping[str, Any]) -> int:
    """Most tokens a reply may spend around its fragments' text: a base, a share per fragment and
    per evicted id, plus the two fields that are never cut, the request_id and each path, plus what
    JSON escaping adds to every string (code's newlines, quotes and backslashes: about a tenth of a
    fragment's tokens, 343 on a 3,055-token Python file; far more for control characters)."""
    uncut = count(reply["request_id"]) + sum(count(f["source_ref"]) for f in reply["fragments"])
    return (ENVELOPE_BASE + ENVELOPE_PER_FRAGMENT * len(reply["fragments"]) + uncut
            + ENVELOPE_PER_EVICTED * len(reply["kv_policy"]["evict"]) + escaping_tokens(reply))


def escaping_tokens(reply: Mapping[str, Any]) -> int:
    """Tokens the JSON escapes of the reply's strings cost beyond the strings themselves."""
    return sum(max(0, count(json.dumps(text, ensure_ascii=False)[1:-1]) - count(text))
               for _, text in walk_strings(reply) if any(c in text for c in ESCAPED))


def _fragment(item: Packed) -> dict[str, Any]:
    c = item.candidate
    return {
        "id": fragment_key(c.fragment), "lod": c.lod, "text": item.text, "entities": [_cut(c.name)],
        "cost_tokens": item.cost_tokens, "source_ref": item.source_ref, "kind": _cut(c.kind, LABEL_MAX_TOKENS),
        "score": _score(c.score), "strategy": _cut(c.strategy, LABEL_MAX_TOKENS), "tier": c.tier,
        "reason": _cut(c.reason), "truncated": item.truncated,
    }


def _warnings(lines: Sequence[str]) -> list[str]:
    shown = [_cut(w) for w in lines[:WARNINGS_MAX]]
    if len(lines) > WARNINGS_MAX:
        shown[-1] = f"… and {len(lines) - WARNINGS_MAX + 1} more warnings"
    return shown


def kv_policy(request: RenderRequest, assembled: Assembled) -> dict[str, list[str]]:
    """The pin / compress / evict rule of the module docstring."""
    focus = set(request.focus)
    total = sum(i.cost_tokens for i in assembled.items)
    pinned: set[str] = set()
    upto = 0
    for n, item in enumerate(sorted(assembled.items, key=lambda i: rank_key(i.candidate))):
        upto += item.cost_tokens
        if n > 0 and 2 * upto > total:
            break
        pinned.add(item.candidate.fragment)
    for item in assembled.items:
        c = item.candidate
        if c.lod == "micro" and (c.entity in focus or c.name in focus or c.tier == "hot"):
            pinned.add(c.fragment)
    pinned -= {i.candidate.fragment for i in assembled.items if i.candidate.tier == "cold"}
    ids = [i.candidate.fragment for i in assembled.items]
    compress = [
        i.candidate.fragment for i in assembled.items
        if i.candidate.fragment not in pinned
        and (i.candidate.lod == "macro" or i.truncated or i.candidate.tier == "cold")
    ]
    evict = [c.fragment for c in assembled.dropped_candidates[:EVICT_MAX]]
    return {"pin": [fragment_key(f) for f in ids if f in pinned], "compress": [fragment_key(f) for f in compress],
            "evict": [fragment_key(f) for f in evict]}


def _coverage(assembled: Assembled, wanted: Sequence[str] | None) -> float:
    placed = {i.candidate.entity for i in assembled.items} | {i.candidate.name for i in assembled.items}
    if wanted is None:
        pool = {i.candidate.entity for i in assembled.items}
        wanted = sorted(pool | {c.entity for c in assembled.dropped_candidates})
    if not wanted:
        return 0.0
    return round(sum(1 for w in set(wanted) if w in placed) / len(set(wanted)), 3)


def build_reply(request: RenderRequest, assembled: Assembled, metrics: ReplyMetrics) -> dict[str, Any]:
    """``render_context_reply.v0`` for a packed result (key order is part of the golden file)."""
    return {
        "request_id": request.request_id,
        "fragments": [_fragment(i) for i in assembled.items],
        "kv_policy": kv_policy(request, assembled),
        "metrics": {
            "used_tokens": assembled.used_tokens,
            "reply_tokens": assembled.reply_tokens,
            "planner_ms": metrics.planner_ms,
            "coverage_entities": _coverage(assembled, metrics.entities_wanted),
            "strategy": _cut(metrics.strategy, LABEL_MAX_TOKENS),
            "strategy_reason": _cut(metrics.strategy_reason),
            "timings_ms": {_cut(k, LABEL_MAX_TOKENS): v for k, v in list(metrics.timings_ms.items())[:WARNINGS_MAX]},
            "warnings": _warnings([*metrics.warnings, *assembled.warnings]),
            "dropped": assembled.dropped,
        },
    }


def reply_builder(request: RenderRequest, metrics: ReplyMetrics) -> ReplyBuilder:
    """The callback :func:`acms.assembly.budget.pack_json` packs against."""
    return lambda assembled: build_reply(request, assembled, metrics)


def reply_for(
    request: RenderRequest, candidates: Sequence[Candidate], metrics: ReplyMetrics,
    min_useful_tokens: int = 24,
) -> Assembled:
    """Privacy, then packing into a reply of at most ``tokens_max`` tokens (``.reply``, ``.rendered``).

    Raises :class:`BudgetTooSmall` when not even one useful fragment fits.
    """
    protected = protect(candidates, request.privacy_mode)
    metrics = replace(metrics, warnings=(*metrics.warnings, *protected.warnings()))
    builder = reply_builder(request, metrics)
    return pack_json(protected.candidates, request.tokens_max, builder, min_useful_tokens)


# -- errors -------------------------------------------------------------------------------------
# The codes, their retry advice and HTTP statuses are the one table in ``acms.errors`` (``CODES``).


def error_envelope(
    code: ErrorCode | str, message: str, request_id: str, retriable: bool | None = None,
    attempt: int = 1, max_attempts: int | None = None,
    options: Sequence[Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """The contract's error reply; unset fields come from ``acms.errors.CODES``."""
    try:
        spec = CODES[ErrorCode(code)]
    except ValueError:
        valid = ", ".join(c.value for c in ErrorCode)
        raise UsageError(f"unknown error code {code!r} (valid: {valid})") from None
    opts = [dict(o) for o in options] if options is not None else [
        {"action": a, "hint": h} for a, h in spec.options
    ]
    return {
        "request_id": request_id,
        "error": {
            "code": ErrorCode(code).value, "message": message,
            "retriable": spec.retriable if retriable is None else retriable,
            "attempt": attempt,
            "max_attempts": spec.max_attempts if max_attempts is None else max_attempts,
            "options": opts,
        },
    }


def envelope_for(exc: BaseException, request_id: str, attempt: int = 1) -> dict[str, Any]:
    """The envelope for an exception: its own code, INTERNAL for anything acms did not raise on purpose."""
    if not isinstance(exc, AcmsError):
        message = f"internal error ({type(exc).__name__})"
        return error_envelope(ErrorCode.INTERNAL, message, request_id, attempt=attempt)
    options = None
    if isinstance(exc, BudgetTooSmall):
        action, _ = CODES[ErrorCode.BUDGET_TOO_SMALL].options[0]
        rest = CODES[ErrorCode.BUDGET_TOO_SMALL].options[1:]
        options = [
            {"action": action, "hint": f"budgets.tokens_max >= {exc.minimum}"},
            *({"action": a, "hint": h} for a, h in rest),
        ]
    return error_envelope(exc.code, exc.message, request_id, attempt=attempt, options=options)
