"""detect-secrets (Yelp's maintained scanner) in-process: its plugins' ``analyze_line`` and heuristic
filters, never its CLI or files; its hits pass acms's decoy checks."""

from __future__ import annotations

import importlib
import math
import re
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache, cached_property
from typing import Any

from acms.privacy.accept import (
    _ENTROPY_WORD,
    _EXPRESSION,
    _marked,
    _name_ok,
    _secret_value,
)
from acms.privacy.decoys import _HASH_CONTEXT, _HEX, _UUID, _b64_is_data, _placeholder
from acms.privacy.model import _MARK_HEAD, _Hit

_DS_KIND = {
    "AWS Access Key": "aws_secret_access_key",
    "Artifactory Credentials": "artifactory_token",
    "Azure Storage Account access key": "azure_storage_key",
    "Base64 High Entropy String": "high_entropy",
    "Basic Auth Credentials": "url_credentials",
    "Cloudant Credentials": "cloudant_credentials",
    "Discord Bot Token": "discord_bot_token",
    "GitHub Token": "github_token",
    "GitLab Token": "gitlab_token",
    "Hex High Entropy String": "high_entropy",
    "IBM COS HMAC Credentials": "ibm_cos_hmac",
    "IBM Cloud IAM Key": "ibm_cloud_iam_key",
    "JSON Web Token": "jwt",
    "Mailchimp Access Key": "mailchimp_key",
    "NPM tokens": "npm_token",
    "OpenAI Token": "openai_key",
    "Private Key": "private_key",
    "PyPI Token": "pypi_token",
    "Secret Keyword": "credential",
    "SendGrid API Key": "sendgrid_key",
    "Slack Token": "slack_token",
    "SoftLayer Credentials": "softlayer_credentials",
    "Square OAuth Secret": "square_token",
    "Stripe Access Key": "stripe_key",
    "Telegram Bot Token": "telegram_bot_token",
    "Twilio API Key": "twilio_key",
}
# Each plugin's module (under ``detect_secrets.plugins``) and class, as detect-secrets' own mapping
# (``get_mapping_from_secret_type_to_class``) has them: that mapping imports all 27 plugin modules
# (~30 ms), where a line needs one or two (a test checks the names against the installed version).
_DS_CLASS = {
    "AWS Access Key": ("aws", "AWSKeyDetector"),
    "Artifactory Credentials": ("artifactory", "ArtifactoryDetector"),
    "Azure Storage Account access key": ("azure_storage_key", "AzureStorageKeyDetector"),
    "Base64 High Entropy String": ("high_entropy_strings", "Base64HighEntropyString"),
    "Basic Auth Credentials": ("basic_auth", "BasicAuthDetector"),
    "Cloudant Credentials": ("cloudant", "CloudantDetector"),
    "Discord Bot Token": ("discord", "DiscordBotTokenDetector"),
    "GitHub Token": ("github_token", "GitHubTokenDetector"),
    "GitLab Token": ("gitlab_token", "GitLabTokenDetector"),
    "Hex High Entropy String": ("high_entropy_strings", "HexHighEntropyString"),
    "IBM COS HMAC Credentials": ("ibm_cos_hmac", "IbmCosHmacDetector"),
    "IBM Cloud IAM Key": ("ibm_cloud_iam", "IbmCloudIamDetector"),
    "JSON Web Token": ("jwt", "JwtTokenDetector"),
    "Mailchimp Access Key": ("mailchimp", "MailchimpDetector"),
    "NPM tokens": ("npm", "NpmDetector"),
    "OpenAI Token": ("openai", "OpenAIDetector"),
    "Private Key": ("private_key", "PrivateKeyDetector"),
    "PyPI Token": ("pypi_token", "PypiTokenDetector"),
    "Secret Keyword": ("keyword", "KeywordDetector"),
    "SendGrid API Key": ("sendgrid", "SendGridDetector"),
    "Slack Token": ("slack", "SlackDetector"),
    "SoftLayer Credentials": ("softlayer", "SoftlayerDetector"),
    "Square OAuth Secret": ("square_oauth", "SquareOAuthDetector"),
    "Stripe Access Key": ("stripe", "StripeDetector"),
    "Telegram Bot Token": ("telegram_token", "TelegramBotTokenDetector"),
    "Twilio API Key": ("twilio", "TwilioKeyDetector"),
}
_NAME_BEFORE = re.compile(
    r"(?P<n>[A-Za-z_][\w.\-]{0,80})[\"'\]]{0,2}[ \t]*(?:=>|:=|==|!=|=|:|\()[ \t]*[\"'`]?$")
_DS_GENERIC = frozenset({"Secret Keyword", "Base64 High Entropy String", "Hex High Entropy String",
                         "Basic Auth Credentials"})
_DS_SKIPPED = frozenset({"Public IP (ipv4)"})  # an address is not a secret
_KEYED_BEFORE = re.compile(
    r"(?i)(?:" + _ENTROPY_WORD + r"|password|passwd|credential|api)[\w.\-]{0,40}[\"'\]]?[ \t]*"
    r"(?:=>|:=|[=:(,])[ \t]*[\"'`]?[ \t]*$")


# Which lines each plugin can fire on (lower-cased needles, or a regex on the line): running all
# 26 plugins on every candidate line is what made scanning slow.
_DS_GATES: dict[str, tuple[str, ...] | re.Pattern[str]] = {
    "AWS Access Key": ("akia", "asia", "abia", "acca", "a3t", "aws"),
    "Artifactory Credentials": re.compile(r"AKC|AP[\dA-F]"),
    "Azure Storage Account access key": ("accountkey",),
    "Base64 High Entropy String": re.compile(r"[\"'][A-Za-z0-9+/=_\-]{20}"),
    "Basic Auth Credentials": ("://",),
    "Cloudant Credentials": ("cloudant", "cl_", "cl-", "clou"),
    "Discord Bot Token": re.compile(r"[MNO][\w\-]{23,25}\."),
    "GitHub Token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "GitLab Token": ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "gr1348941", "glcbt-",
                     "glimt-", "glptt-", "glagent-", "gloas-"),
    "Hex High Entropy String": re.compile(r"[\"'][0-9a-fA-F]{16}"),
    "IBM COS HMAC Credentials": ("secret", "access"),
    "IBM Cloud IAM Key": ("ibm", "iam", "cloud"),
    "JSON Web Token": ("eyj",),
    "Mailchimp Access Key": ("-us",),
    "NPM tokens": ("_authtoken",),
    "OpenAI Token": ("t3blbkfj",),
    "Private Key": ("private key", "begin ssh2", "putty"),
    "PyPI Token": ("pypi-",),
    "Secret Keyword": ("key", "pass", "pwd", "secret", "contrase"),
    "SendGrid API Key": ("sg.",),
    "Slack Token": ("xox", "hooks.slack"),
    # (?i)softlayer|(?<![a-z])sl[_\-]?(?:api)?[_\-]?(?:key|pass|pw), from a class of what (?i) takes
    # for an "s" (with the long s) so that ``re`` skips ahead to one: 5x faster
    "SoftLayer Credentials": re.compile(
        r"[Ss\u017f](?i:oftlayer|(?<![a-z]s)l[_\-]?(?:api)?[_\-]?(?:key|pass|pw))"),
    "Square OAuth Secret": ("sq0csp",),
    "Stripe Access Key": ("k_live_",),
    "Telegram Bot Token": re.compile(r":(?<=\d{8}:)"),  # \d{8}: found from its rarer colon
    "Twilio API Key": re.compile(r"(?:AC|SK)[a-z0-9]{32}"),
}


# The entropy plugins report a quoted run of their charset (``(['"])([charset]+)\1``) whose Shannon
# entropy passes their limit, which a run shorter than 2 ** limit cannot: a line without such a run is
# not given to them (a docstring's opening quotes passed the gates above and set detect-secrets up).
_DS_CHARSETS = {"Base64 High Entropy String": ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/\\-_=", 4.5),
                "Hex High Entropy String": ("0123456789abcdefABCDEF", 3.0)}
_DS_CLOSED = {kind: re.compile(r"([\"'])[" + re.escape(charset) + "]{" + str(math.floor(2 ** limit) + 1) + r",}\1")
              for kind, (charset, limit) in _DS_CHARSETS.items()}

_DS_TYPES = tuple(sorted(_DS_KIND))  # the plugins run: every one detect-secrets has, bar _DS_SKIPPED (a test checks)


class _DsPlugin:
    """A detect-secrets plugin behind acms's gate for it. The plugin, and detect-secrets with it (~0.1 s
    to import and set up in a fresh process, most of it the HTTP library its plugins' base module loads),
    is made when a line first passes the gate: a refresh that scrubs a file or two rarely needs it."""

    def __init__(self, secret_type: str) -> None:
        gate = _DS_GATES.get(secret_type)
        self.secret_type = secret_type
        self.gate: re.Pattern[str] | None = gate if isinstance(gate, re.Pattern) else None  # searched on the line
        self.needles: frozenset[str] | None = frozenset(gate) if isinstance(gate, tuple) else None  # in the lower-cased line
        self.closed = _DS_CLOSED.get(secret_type)  # searched on the line after ``gate``

    @cached_property
    def plugin(self) -> Any:
        return _ds_class(self.secret_type)()

    @cached_property
    def regex_based(self) -> bool:
        return isinstance(self.plugin, _ds_import("plugins.base").RegexBasedDetector)

    @cached_property
    def ascii_gate(self) -> re.Pattern[str] | None:
        """Searched on the lower-cased line if it is ASCII."""
        return _ds_ascii_gate(self.secret_type)


class _RequestsOnUse(types.ModuleType):
    """What detect-secrets' modules get for ``requests`` while acms imports them: they import it at their
    top but use it only to verify a secret with its provider over the network, which acms never asks
    for. Importing it (and urllib3, http.cookiejar...) was ~65 ms of a fresh process's first scrub that
    needs a plugin: a one-file ``acms index`` or ``acms assemble`` after an edit. Any use of it imports
    the real module and goes on there, but for ``Response``: the IBM Cloud plugin's module reads it at
    import, in an annotation (``-> requests.Response``), which imported the real module (~0.13 s) for
    every line holding "iam" or "cloud"."""

    Response = type("Response", (), {"__doc__": "What an annotation read at import gets for requests.Response."})

    def __getattr__(self, name: str) -> Any:
        if sys.modules.get("requests") is self:
            del sys.modules["requests"]
        return getattr(importlib.import_module("requests"), name)


@contextmanager
def _requests_on_use() -> Iterator[None]:
    if "requests" in sys.modules:
        yield
        return
    stand_in = _RequestsOnUse("requests")
    sys.modules["requests"] = stand_in
    try:
        yield
    finally:  # later imports of requests get the real module
        if sys.modules.get("requests") is stand_in:
            del sys.modules["requests"]


def _ds_import(name: str) -> types.ModuleType:
    """``detect_secrets.<name>``, imported with ``requests`` only on use (:class:`_RequestsOnUse`)."""
    module = sys.modules.get(f"detect_secrets.{name}")
    if module is not None:
        return module
    with _requests_on_use():
        return importlib.import_module(f"detect_secrets.{name}")


def _ds_class(secret_type: str) -> Any:
    """detect-secrets' plugin class for a secret type: its own module only (``_DS_CLASS``), or, where an
    installed version laid its plugins out otherwise, from its own mapping."""
    module, name = _DS_CLASS[secret_type]
    try:
        return getattr(_ds_import(f"plugins.{module}"), name)
    except (ImportError, AttributeError):
        return _ds_import("core.plugins.util").get_mapping_from_secret_type_to_class()[secret_type]


@cache
def _ds_plugins() -> tuple[_DsPlugin, ...]:
    """Every detect-secrets plugin with its default settings, bar the public-IP one."""
    return tuple(_DsPlugin(secret_type) for secret_type in _DS_TYPES)


def _ds_ascii_gate(secret_type: str) -> re.Pattern[str] | None:
    """The keyword plugin's regexes all need one of its DENYLIST words (``api_?key``, ``pwd``...),
    matched ignoring case. On an ASCII line that is a plain search of the lower-cased line, far
    tighter than its needles (``key`` is on most lines of code); elsewhere Unicode case folding
    (``ſ`` for ``s``, ``İ`` for ``i``) lets other spellings match, so the needles alone decide."""
    if secret_type != "Secret Keyword":
        return None
    return re.compile("|".join(_DS_DENYLIST))


# detect-secrets' keyword DENYLIST (``detect_secrets.plugins.keyword``), copied so that a line is gated
# without importing detect-secrets (a test checks the copy against the installed plugin)
_DS_DENYLIST = ("api_?key", "auth_?key", "service_?key", "account_?key", "db_?key", "database_?key", "priv_?key",
                "private_?key", "client_?key", "db_?pass", "database_?pass", "key_?pass", "password", "passwd",
                "pwd", "secret", "contraseña", "contrasena")


@cache
def _ds_filters() -> tuple[Callable[..., bool], ...]:
    heuristic = _heuristic()
    return (heuristic.is_sequential_string, heuristic.is_potential_uuid,
            heuristic.is_templated_secret, heuristic.is_prefixed_with_dollar_sign,
            heuristic.is_not_alphanumeric_string)


def _ds_unkeyed_data(value: str, line: str, at: int) -> bool:
    """An entropy hit with no secret-looking name before it: hashes, UUIDs, base64 of text or
    images and checksum fields are data, anything else random stays a suspect."""
    v = value.strip("\"'")
    if _KEYED_BEFORE.search(line, 0, at):
        return False
    if _HEX.match(v) or _UUID.search(v) or _HASH_CONTEXT.search(line):
        return True
    if re.match(r"(?i)sha(?:1|256|384|512)-", v) or "/" in v and re.search(r"\.\w{1,5}$", v):
        return True
    return _b64_is_data(v)


@cache
def _heuristic() -> Any:
    """detect-secrets' filters module, imported once (an import statement per line is not free)."""
    return _ds_import("filters.heuristic")


_IDENTIFIER_VALUE = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")


def _ds_hits(line: str, low_line: str, plugins: tuple[_DsPlugin, ...], offset: int, path: str,
             lock_file: bool, code: bool) -> Iterator[_Hit]:
    """Run detect-secrets' plugins (those whose needles the line holds: :func:`_line_plan`) on one
    line and locate each reported value in it."""
    indirect: bool | None = None
    ascii_line = line.isascii()
    for ds in plugins:
        if ds.gate is not None and not ds.gate.search(line):
            continue
        if ds.closed is not None and not ds.closed.search(line):
            continue
        if ds.ascii_gate is not None and ascii_line and not ds.ascii_gate.search(low_line):
            continue
        reported = ds.plugin.analyze_line(filename=path or "text", line=line, line_number=0,
                                          context=None)
        for secret in reported:
            value = secret.secret_value or ""
            if not value or _MARK_HEAD in value or any(f(value) for f in _ds_filters()):
                continue
            if not ds.regex_based:
                if lock_file or _heuristic().is_likely_id_string(value, line, ds.plugin):
                    continue
                if indirect is None:
                    indirect = _heuristic().is_indirect_reference(line)
                if indirect and ds.secret_type == "Secret Keyword":
                    continue
            generic = ds.secret_type in _DS_GENERIC
            kind = _DS_KIND.get(ds.secret_type, re.sub(r"\W+", "_", ds.secret_type.lower()))
            if ds.secret_type == "AWS Access Key" and re.match(r"A[A-Z]{3}[A-Z0-9]{16}$", value):
                kind = "aws_access_key_id"
            if ds.secret_type == "Slack Token" and value.startswith("http"):
                kind = "slack_webhook"
            for at in _locate(line, value, generic):
                if ds.secret_type == "Private Key":
                    pass
                elif _placeholder(value) if generic else _marked(value):
                    continue
                if ds.secret_type == "Secret Keyword":
                    if _EXPRESSION.search(value) or re.search(r"\s", value):
                        continue  # its greedy values run on into code or YAML structure
                    if code and _IDENTIFIER_VALUE.fullmatch(value) and (at == 0 or line[at - 1] not in "\"'`"):
                        continue  # Go's "password == credPass": in code an unquoted name is a variable
                    named = _NAME_BEFORE.search(line, 0, at)
                    if named and not _secret_value(named.group("n"), value):
                        continue
                if ds.secret_type in ("Base64 High Entropy String", "Hex High Entropy String"):
                    if _ds_unkeyed_data(value, line, at):
                        continue
                    named = _NAME_BEFORE.search(line, 0, at)
                    if named and not _name_ok(named.group("n")) and _KEYED_BEFORE.search(
                            line, 0, at):
                        continue
                if ds.secret_type == "Secret Keyword":
                    kind = "password" if re.search(r"(?i)pass|pwd|contrase", line[:at]) \
                        else "credential"
                yield _Hit(offset + at, offset + at + len(value), kind, generic)


def _locate(line: str, value: str, generic: bool) -> list[int]:
    """Where a reported value sits: every occurrence of a token; for a keyword's value the ones not
    glued to word characters (``password = "password1"``: not the name), else all of them."""
    spots = [m.start() for m in re.finditer(re.escape(value), line)]
    if not generic:
        return spots
    free = [i for i in spots
            if (i == 0 or not (line[i - 1].isalnum() or line[i - 1] == "_"))
            and (i + len(value) >= len(line)
                 or not (line[i + len(value)].isalnum() or line[i + len(value)] == "_"))]
    return free or spots
