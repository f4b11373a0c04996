"""Privacy modes of render_request.v0 and the secret redaction they require.

==========  ==================================================================================
mode        what leaves acms
==========  ==================================================================================
allow       the text, with *clearly* sensitive spans redacted: private key blocks, provider-
            prefixed tokens (AWS key ids and secret keys, GitHub, Slack, Stripe, Google, OpenAI,
            Anthropic), bearer tokens, JWTs, connection-string passwords
redact      the above plus the heuristics: password / secret / api_key / token assignments in
            py, yaml, ini, env and json lines, and high-entropy literals assigned to names that
            mention key / secret / token / password
block       no raw text at all: :func:`blocked_text` gives path:lines, kind and name only
==========  ==================================================================================

A redacted span becomes ``[REDACTED:kind]``. Every pattern refuses to start on such a marker, so
redacting twice changes nothing (idempotence is tested). Patterns are compiled once, lazily.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import cache

from acms.assembly.model import Candidate

MARK = "[REDACTED:{}]"
_NOT_MARK = r"(?!\[REDACTED:)"
ENTROPY_MIN = 3.5
ENTROPY_LEN_MIN = 20


class PrivacyMode(str, Enum):
    ALLOW = "allow"
    REDACT = "redact"
    BLOCK = "block"


@dataclass(frozen=True)
class _Rule:
    """One secret shape; ``group`` names the part replaced (0: the whole match)."""

    kind: str
    pattern: re.Pattern[str]
    group: int | str = 0
    accept: Callable[[re.Match[str]], bool] | None = None
    kind_of: Callable[[re.Match[str]], str] | None = None


_CONFIG_NAME = (
    r"[\w.\-]{0,80}(?:password|passwd|passphrase|pwd|(?<![a-z])pass|secret|secret[_\-]?key"
    r"|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|token|credentials?)"
)
_ENTROPY_NAME = r"[\w.\-]{0,80}(?:key|secret|token|passw(?:or)?d)[\w.\-]{0,80}"
# ``name = ``, ``name: ``, ``name := ``, ``name: Type = `` (an annotated assignment)
_SEP = r"[ \t]*(?::=|=|:(?:[ \t]*[\w\[\]., |]+[ \t]*=)?)[ \t]*"
_BARE_SKIP = re.compile(
    r"(?i)^(?:none|null|nil|true|false|yes|no|on|off|~|str|bytes|int|float|bool|any|secretstr"
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)$"
)


def _bare_ok(m: re.Match[str]) -> bool:
    """Unquoted values: skip literals, type names, code references (``self.token = token``,
    ``settings.API_KEY``) and ``$VAR`` references."""
    value, name = m.group("v"), m.group("n")
    if value in (name, name.rsplit(".", 1)[-1]):
        return False
    return not (_BARE_SKIP.match(value) or value.startswith(("$", "%(", "{{", "<")))


def _config_kind(m: re.Match[str]) -> str:
    """``password`` for pass/pwd names, ``credential`` for secrets, keys and tokens."""
    return "password" if re.search(r"(?i)pass|pwd", m.group("n")) else "credential"


def _entropy(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(k / n * math.log2(k / n) for k in counts.values())


def _high_entropy(m: re.Match[str]) -> bool:
    value = m.group("v")
    return len(value) >= ENTROPY_LEN_MIN and _entropy(value) >= ENTROPY_MIN


@cache
def _clear_rules() -> tuple[_Rule, ...]:
    """Spans that are sensitive whatever the mode (order matters: longest shapes first)."""
    c = re.compile
    return (
        _Rule("private_key", c(
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*\Z)", re.S)),
        _Rule("jwt", c(
            r"(?<![A-Za-z0-9])eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}")),
        _Rule("anthropic_key", c(r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_\-]{20,}")),
        _Rule("openai_key", c(
            r"(?<![A-Za-z0-9])sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_\-]*\d)[A-Za-z0-9_\-]{20,}")),
        _Rule("stripe_key", c(r"(?<![A-Za-z0-9])(?:sk|rk)_live_[A-Za-z0-9]{16,}")),
        _Rule("github_token", c(
            r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
        _Rule("slack_token", c(r"(?<![A-Za-z0-9])xox[baprs]-[A-Za-z0-9\-]{10,}")),
        _Rule("google_api_key", c(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])")),
        _Rule("aws_access_key_id", c(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
        _Rule("aws_secret_access_key", c(
            r"(?i)(?<![A-Za-z0-9])aws[\w.\-]{0,40}secret[\w.\-]{0,40}[\"']?" + _SEP
            + r"[\"']?" + _NOT_MARK + r"(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"), "v"),
        _Rule("bearer_token", c(r"(?i)\bbearer[ \t]+" + _NOT_MARK
                                + r"(?P<v>[A-Za-z0-9\-._~+/]{16,}=*)"), "v"),
        _Rule("connection_string", c(
            r"\b[a-zA-Z][a-zA-Z0-9+.\-]{1,20}://[^:/?#@\s'\"]*:" + _NOT_MARK
            + r"(?P<v>[^@\s/'\"]+)@"), "v"),
    )


@cache
def _heuristic_rules() -> tuple[_Rule, ...]:
    """Spans that are only probably secrets: redacted in ``redact`` mode, kept in ``allow``."""
    c = re.compile
    quoted = r"(?:[rbuRBUfF]{0,2})(?P<q>[\"'])" + _NOT_MARK + r"(?P<v>(?:(?!(?P=q))[^\\\n]|\\.)+)(?P=q)"
    return (
        _Rule("high_entropy", c(
            r"(?i)(?<![\w.\-])[\"']?" + _ENTROPY_NAME + r"[\"']?" + _SEP + quoted), "v",
            _high_entropy),
        _Rule("high_entropy", c(
            r"(?im)^[ \t]*(?:export[ \t]+)?" + _ENTROPY_NAME + r"[ \t]*[=:][ \t]*" + _NOT_MARK
            + r"(?P<v>[A-Za-z0-9+/=_\-.~]{20,})[ \t]*$"), "v", _high_entropy),
        _Rule("password", c(
            r"(?i)(?<![\w.\-])[\"']?(?P<n>" + _CONFIG_NAME + r")[\"']?" + _SEP + quoted), "v",
            kind_of=_config_kind),
        _Rule("password", c(
            r"(?im)^[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?[\"']?(?P<n>" + _CONFIG_NAME + r")[\"']?"
            r"[ \t]*(?::=|=|:)[ \t]*" + _NOT_MARK
            + r"(?P<v>[^\s'\"#;,()\[\]{}<>]+)(?=[ \t]*(?:[#;].*)?$)"), "v", _bare_ok, _config_kind),
    )


def _apply(rule: _Rule, text: str, found: list[str]) -> str:
    def sub(m: re.Match[str]) -> str:
        if rule.accept is not None and not rule.accept(m):
            return m.group(0)
        kind = rule.kind_of(m) if rule.kind_of is not None else rule.kind
        found.append(kind)
        start, end = m.span(rule.group)
        base = m.start(0)
        whole = m.group(0)
        return whole[: start - base] + MARK.format(kind) + whole[end - base:]

    return rule.pattern.sub(sub, text)


def redact(text: str, mode: PrivacyMode | str) -> tuple[str, list[str]]:
    """Return the text with secrets replaced, and the distinct kinds replaced (sorted).

    ``block`` returns no text at all: callers show :func:`blocked_text` instead.
    """
    mode = PrivacyMode(mode)
    if mode is PrivacyMode.BLOCK:
        return "", ["blocked"] if text else []
    found: list[str] = []
    rules = _clear_rules() + (_heuristic_rules() if mode is PrivacyMode.REDACT else ())
    for rule in rules:
        text = _apply(rule, text, found)
    return text, sorted(set(found))


def blocked_text(c: Candidate) -> str:
    """What ``block`` mode shows of a fragment: where it is and what it is, never its body."""
    name = " ".join(c.name.split())
    return f"[BLOCKED] {c.path}:{c.start_line}-{c.end_line} {c.kind} {name}"


@dataclass
class Protected:
    """Candidates made safe for a mode, with how many fragments had each kind redacted."""

    candidates: list[Candidate]
    redactions: dict[str, int] = field(default_factory=dict)

    def warnings(self) -> list[str]:
        return [f"{kind} redacted in {n} fragment(s)" for kind, n in sorted(self.redactions.items())]


def protect(cands: Iterable[Candidate], mode: PrivacyMode | str) -> Protected:
    """Apply a privacy mode to every candidate's text (the pipeline step between dedupe and pack)."""
    mode = PrivacyMode(mode)
    out: list[Candidate] = []
    counts: Counter[str] = Counter()
    for c in cands:
        if mode is PrivacyMode.BLOCK:
            out.append(replace(c, text=blocked_text(c)))
            counts["blocked"] += 1
            continue
        text, found = c.text, list[str]()
        if mode is PrivacyMode.REDACT:  # ingest's scrubber first (on the raw text: a token split
            # across literals is only whole there): an index kept with store_secrets holds raw text
            from acms.privacy import scrub

            scrubbed = scrub(text, c.path)
            text, found = scrubbed.text, list(scrubbed.kinds)
        text, kinds = redact(text, mode)
        kinds = sorted(set(kinds) | set(found))
        counts.update(kinds)
        out.append(c if text == c.text else replace(c, text=text))
    return Protected(out, dict(counts))
