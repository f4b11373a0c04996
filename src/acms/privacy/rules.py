"""The line rules: every secret shape acms matches on one line, with its decoy check."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache

from acms.privacy.accept import (
    _ENAME,
    _INLINE_VALUE,
    _NAME,
    _QUOTED,
    _SECRET_WORD,
    _SEP,
    _SEP_QUOTE,
    _assign_ok,
    _bare_ok,
    _basic_ok,
    _bearer_ok,
    _docker_auth_ok,
    _entropy_ok,
    _flag_code_ok,
    _flag_ok,
    _inline_code_ok,
    _inline_ok,
    _kind_for_name,
    _pair_ok,
    _secret_value,
    _short_word_ok,
    _prose_ok,
    _credential_pair_ok,
    _prose_code_ok,
    _prose_word_ok,
    _url_ok,
    _wrapped_ok,
)
from acms.privacy.decoys import _placeholder
from acms.privacy.model import _Rule
from acms.privacy.lazy import lazy
from acms.privacy.providers import _ENTROPY_NEEDLES, _PROVIDER_SPECS, _SECRET_NEEDLES


@cache
def _line_rules() -> tuple[_Rule, ...]:
    """Rules matched on one line at a time (only on lines the trigger picked)."""
    c = lazy
    # the one provider without needles runs on every candidate line: its dotted middle first
    discord = c(r"\.[A-Za-z\d_\-]{6}\.")
    rules = [_Rule(kind, c(rx), 0, ok, needles=nd, prefilter=None if nd else discord)
             for kind, rx, ok, nd in _PROVIDER_SPECS]
    not_code = frozenset({"config", "shell", "doc", "any"})
    rules += [
        _Rule("azure_storage_key", c(r"(?i)AccountKey=(?P<v>[A-Za-z0-9+/=]{40,})"), "v",
              needles=("accountkey=",)),
        _Rule("aws_secret_access_key", c(
            r"(?i)(?<![A-Za-z0-9])aws[\w.\-]{0,40}secret[\w.\-]{0,40}[\"'\]]?" + _SEP
            + r"[\"']?(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"), "v",
            lambda m, line: not _placeholder(m.group("v")), needles=("aws",)),
        # user:password@ in a URL of any scheme: up to the last "@" of the authority (a password
        # may hold "@"), and a lazy variant for passwords with "/" (base64 ones do)
        _Rule("url_credentials", c(
            r"(?i)\b[a-z][a-z0-9+.\-]{1,30}://[^\s:/?#@'\"`\[\]<>]*:(?!//)"
            r"(?P<v>[^\s'\"`<>/?#]{1,200})@(?=[\w.\-\[\]%]+(?:[:/?#,;)\s'\"`<>]|$))"), "v", _url_ok,
            generic=True, needles=("://",)),
        _Rule("url_credentials", c(
            r"(?i)\b[a-z][a-z0-9+.\-]{1,30}://[^\s:/?#@'\"`\[\]<>]*:(?!//)(?!\d{1,5}/)"
            r"(?P<v>[^\s'\"`<>]{1,200}?)@(?=[\w.\-\[\]%]+(?:[:/?#,;)\s'\"`<>]|$))"), "v", _url_ok,
            generic=True, needles=("://",)),
        _Rule("npm_token", c(
            r"(?i):_(?:authToken|auth|password)[ \t]*=[ \t]*[\"']?(?P<v>[^\s\"']{6,})"), "v",
            lambda m, line: not _placeholder(m.group("v")), needles=(":_",)),
        _Rule("bearer_token", c(
            r"(?i)(?<![\w\-])(?:bearer|token)[ \t]+(?P<v>[A-Za-z0-9\-._~+/]{16,}=*)(?![A-Za-z0-9\-._~+/=])"),
            "v", _bearer_ok, needles=("bearer", "token")),
        _Rule("basic_auth", c(
            r"(?i)\bbasic[ \t]+(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"), "v", _basic_ok,
            needles=("basic",)),
        _Rule("basic_auth", c(
            r"(?:^|[ \t])(?:-u|--user)[ \t=]+[\"']?[^\s:\"'$]+:(?P<v>[^\s\"']{3,})"), "v",
            lambda m, line: not _placeholder(m.group("v")), needles=("-u", "--user")),
        _Rule("docker_auth", c(
            r"(?i)[\"'](?:auth|identitytoken|registrytoken)[\"'][ \t]*:[ \t]*[\"']"
            r"(?P<v>[A-Za-z0-9+/=_\-.]{8,})[\"']"), "v", _docker_auth_ok,
            needles=("auth", "token")),
        _Rule("password", c(r"(?i)(?:^|[ \t])password[ \t]+(?P<v>\S{3,})(?=[ \t]|$)"), "v",
              lambda m, line: not _placeholder(m.group("v")), needles=("machine ",)),
        # assignments to secret-looking names: quoted anywhere, unquoted outside code
        _Rule("password", c(
            r"(?i)(?<![\w.\-])[\"'\[]?(?P<n>" + _NAME + r")[\"'\]]{0,2}" + _SEP + _QUOTED), "v",
            _assign_ok, _kind_for_name, generic=True, needles=_SECRET_NEEDLES,
            prefilter=c(_SEP_QUOTE)),
        _Rule("password", c(
            r"(?i)(?<![\w.\-])(?:\\?[\"'])?(?P<n>" + _NAME + r")(?:\\?[\"'])?" + _SEP
            + r"\\(?P<q>[\"'])(?P<v>(?:(?!\\(?P=q))[^\n]){1,300}?)\\(?P=q)"), "v",
            _assign_ok, _kind_for_name, generic=True, needles=("\\\"", "\\'")),
        _Rule("password", c(
            r"(?i)^[ \t]*(?:-[ \t]+)?(?:export[ \t]+|set[ \t]+|ENV[ \t]+|ARG[ \t]+)?[\"':]?"
            r"(?P<n>" + _NAME + r")[\"']?[ \t]*(?::=|\?=|=|:)[ \t]*"
            r"(?P<v>[^\s'\"`#;][^\n]{0,300}?)[\"'`]?(?=(?:[ \t]+[#;][^\n]*)?[ \t]*$)"), "v",
            _bare_ok, _kind_for_name, not_code, generic=True, needles=_SECRET_NEEDLES),
        _Rule("password", _inline_pattern(), "v", _inline_ok, _kind_for_name, not_code,
              generic=True, needles=("pass", "pwd", "secret", "token", "key"),
              prefilter=c(_INLINE_VALUE)),
        _Rule("password", _inline_pattern(), "v", _inline_code_ok, _kind_for_name,
              frozenset({"code"}), generic=True, needles=("pass", "pwd", "secret", "token", "key"),
              prefilter=c(_INLINE_VALUE)),
        # ("DB_PASSWORD", "..."): define(), os.Setenv(), tuples, header setters
        _Rule("password", c(
            r"(?i)[\"'](?P<n>" + _NAME + r")[\"'][ \t]*,[ \t]*" + _QUOTED
            + r"(?=[ \t]*(?:[)\]};]|$))"), "v", _pair_ok, _kind_for_name, generic=True,
            needles=_SECRET_NEEDLES, prefilter=c(r"(?i)[\"'][ \t]*,[ \t]*[rbuRBUfF]{0,2}[\"'`]")),
        # <password>...</password>, <add key="ApiKey" value="..."/>
        _Rule("password", c(
            r"(?i)<(?P<n>[\w:.\-]{0,40}?" + _SECRET_WORD + r"[\w:.\-]{0,40})>(?P<v>[^<>\n]{1,300})</"
            r"(?P=n)>"), "v", _assign_ok, _kind_for_name, generic=True, needles=_SECRET_NEEDLES,
            prefilter=c("</")),
        _Rule("password", c(
            r"(?i)\b(?:key|name|id)[ \t]*=[ \t]*[\"'](?P<n>" + _NAME + r")[\"'][^<>\n]{0,200}?[ \t]value[ \t]*=[ \t]*"
            r"[\"'](?P<v>[^\"'\n]{1,300})[\"']"), "v", _assign_ok, _kind_for_name, generic=True,
            needles=("value",)),
        # the default of a placeholder named after a secret: ${db.password:x}, ${DB_PASSWORD:-x}
        _Rule("password", c(
            r"(?i)\$\{(?P<n>[\w.\-]{0,60}?" + _SECRET_WORD + r"[\w.\-]{0,40}):-?(?P<v>[^}\s\"'$]{3,200})\}"), "v",
            lambda m, line: _secret_value(m.group("n"), m.group("v")), _kind_for_name, generic=True,
            needles=("${",)),
        # X-API-Key: ..., Private-Token: ... (HTTP headers in scripts and docs)
        _Rule("credential", c(
            r"(?i)(?<![\w\-])(?P<n>x-[\w\-]{0,30}(?:api-?key|token|secret|auth)[\w\-]{0,30}|api-?key"
            r"|private-token|x-auth)[ \t]*:[ \t]*(?P<v>[^\s\"'`,;]{8,300})"), "v", _assign_ok,
            generic=True, needles=("key", "token", "secret", "auth"),
            prefilter=c(r"(?i):[ \t]*[^\s\"'`,;]{8}")),
        # prose in comments and docs: "the password is hunter2!"
        _Rule("password", c(
            r"(?i)\b(?:password|passwd|pwd|passphrase)[ \t]+(?:is|was)[ \t]*:?[ \t]+[\"'`]?"
            r"(?P<v>[^\s\"'`]{4,100})"), "v",
            _prose_ok,
            needles=("password", "passwd", "pwd", "passphrase")),
        # the same words followed by a value in comments, docstrings and docs ("the admin
        # password <value>", "password: <value>"): the value must look generated
        _Rule("password", c(
            r"(?i)(?<![\w\-.])(?P<n>password|passwd|pwd|passphrase|secret|token|api[ _\-]?key)"
            r"(?:[ \t]+(?:is|was|to|for|of|as|=|:|-))?[ \t]*[:=]?[ \t]+[\"'`]?"
            r"(?P<v>[^\s\"'`]{6,100})"), "v",
            _prose_word_ok, _kind_for_name, not_code, generic=True,
            needles=("password", "passwd", "pwd", "passphrase", "secret", "token", "key")),
        _Rule("password", c(
            r"(?i)(?<![\w\-.])(?P<n>password|passwd|pwd|passphrase|secret|token|api[ _\-]?key)"
            r"(?:[ \t]+(?:is|was|to|for|of|as|=|:|-))?[ \t]*[:=]?[ \t]+[\"'`]?"
            r"(?P<v>[^\s\"'`]{6,100})"), "v",
            _prose_code_ok, _kind_for_name, frozenset({"code"}), generic=True,
            needles=("password", "passwd", "pwd", "passphrase", "secret", "token", "key")),
        # a user and a password passed together: auth=("user", "pw"), NetworkCredential("u", "pw"),
        # HTTPBasicAuth(...), SetBasicAuth(...), url.UserPassword(...)
        _Rule("password", c(
            r"(?i)(?:\b(?P<call>[\w.]{0,40}(?:auth|credential|password|login)\w{0,30})[ \t]*(?:=[ \t]*)?\("
            r"[ \t]*[\"'][^\"'\n]{1,100}[\"'][ \t]*,[ \t]*[\"'](?P<v>[^\"'\n]{3,200})[\"'][ \t]*[,)])"), "v",
            _credential_pair_ok, needles=("auth", "credential", "password", "login")),
        # a secret set by a configuration command: aws configure set aws_secret_access_key X,
        # git config ... token X, npm config set ...:_authToken X
        _Rule("password", c(
            r"(?i)\b(?:configure|config)[ \t]+(?:--\w+[ \t]+)*set[ \t]+(?P<n>[\w./:\-]{0,60}?" + _SECRET_WORD
            + r"[\w./:\-]{0,40})[ \t]+[\"']?(?P<v>[^\s\"']{4,200})"), "v",
            lambda m, line: _secret_value(m.group("n"), m.group("v")), _kind_for_name, generic=True,
            needles=("config",)),
        # .pgpass lines: host:port:database:user:password
        _Rule("password", c(
            r"(?m)^[ \t]*(?=[\w.\-]*[A-Za-z*])[\w.\-*]{1,100}:(?:\d{1,5}|\*):(?=[\w.\-]*[A-Za-z*])[\w.\-*]{1,100}"
            r":(?=[\w.\-@]*[A-Za-z*])[\w.\-*@]{1,100}:(?P<v>[^\s:][^\s]{2,200})$"),
            "v", lambda m, line: not _placeholder(m.group("v")), needles=(":",),
            prefilter=c(r":(?:\d{1,5}|\*):")),
        # "pass `x`", "# pw: x": the short words only with a quoted value or a colon
        _Rule("password", c(
            r"(?i)(?<![\w\-])(?P<n>pass|pw)(?:[ \t]*:[ \t]*(?P<q1>[\"'`]?)|[ \t]+(?P<q2>[\"'`]))"
            r"(?P<v>[^\s\"'`]{6,100})"), "v",
            _short_word_ok, generic=True, needles=("pass", "pw")),
        # Go's MySQL DSN: user:password@tcp(host:port)/db (no scheme, so no URL rule sees it)
        _Rule("password", c(
            r"(?<![\w@])[\w.\-]{1,64}:(?P<v>[^\s\"'`@/]{3,200})@(?:tcp|udp|unix)\("), "v",
            lambda m, line: not _placeholder(m.group("v")), needles=("@tcp(", "@udp(", "@unix(")),
        # command lines: --requirepass x, mysql -pSECRET, sshpass -p x, SQL "PASSWORD 'x'"; in a
        # list of arguments too (["--requirepass", "x"]), and in code inside a string
        _Rule("password", c(
            r"(?i)(?:^|[ \t\"'\[(,])--?(?P<n>[\w\-]{0,30}(?:password|passwd|pass|pwd|token|secret"
            r"|api-?key|requirepass|masterauth))(?:[ \t]+|[\"'][ \t]*,[ \t]*)[\"']?"
            r"(?P<v>[^\s\"'\\,\])]{4,200})"), "v",
            _flag_ok, _kind_for_name, not_code, generic=True,
            needles=("pass", "pwd", "token", "secret", "key", "masterauth")),
        _Rule("password", c(
            r"(?i)(?:^|[ \t\"'\[(,])--?(?P<n>[\w\-]{0,30}(?:password|passwd|pass|pwd|token|secret"
            r"|api-?key|requirepass|masterauth))(?:[ \t]+|[\"'][ \t]*,[ \t]*)[\"']?"
            r"(?P<v>[^\s\"'\\,\])]{4,200})"), "v",
            _flag_code_ok, _kind_for_name, frozenset({"code"}), generic=True,
            needles=("pass", "pwd", "token", "secret", "key", "masterauth")),
        # -p where the command says it is a password: docker/podman/helm login, redis-cli -a
        _Rule("password", c(
            r"(?i)\b(?:docker|podman|helm|buildah|skopeo|oras|nerdctl)\b[^\n]{0,80}?\blogin\b"
            r"[^\n]{0,200}?[ \t]-p[ \t]+[\"']?(?P<v>[^\s\"']{4,200})"), "v",
            lambda m, line: not _placeholder(m.group("v")), needles=("login",)),
        _Rule("password", c(
            r"\bredis-cli\b[^\n]{0,200}?[ \t]-a[ \t]+[\"']?(?P<v>[^\s\"']{4,200})"), "v",
            lambda m, line: not _placeholder(m.group("v")), needles=("redis-cli",)),
        # a literal wrapped in a call or a conversion: String::from("..."), SecretStr("..."),
        # []byte("..."), Secret.new("...")
        _Rule("password", c(
            r"(?i)(?<![\w.\-])[\"'\[]?(?P<n>" + _NAME + r")[\"'\]]{0,2}" + _SEP
            + r"(?:&|new[ \t]+)?(?P<call>(?:\[\])?[\w:.<>]{1,40})\([ \t]*" + _QUOTED + r"[ \t]*\)"), "v",
            _wrapped_ok, _kind_for_name, generic=True, needles=_SECRET_NEEDLES,
            prefilter=c(r"\([ \t]*[rbuRBUfF]{0,2}[\"'`]")),
        _Rule("password", c(
            r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?[ \t]-p"
            r"(?P<v>[^\s\"'\-][^\s\"']{2,200})"),
            "v", lambda m, line: not _placeholder(m.group("v")), needles=("mysql", "mariadb")),
        _Rule("password", c(r"\bsshpass[ \t]+-p[ \t]*[\"']?(?P<v>[^\s\"']{3,200})"), "v",
              lambda m, line: not _placeholder(m.group("v")), needles=("sshpass",)),
        _Rule("password", c(
            r"(?i)\b(?:password|identified[ \t]+by)[ \t]+(?P<q>['\"])(?P<v>[^'\"\n]{3,200})(?P=q)"),
            "v", lambda m, line: not _placeholder(m.group("v"))
            and bool(re.search(r"(?i)\b(?:user|role|login)\b", line[max(0, m.start() - 300):m.end() + 300])),
            needles=("password", "identified")),
        _Rule("password", c(
            r"(?i)ConvertTo-SecureString[ \t]+(?:-String[ \t]+)?[\"'](?P<v>[^\"'\n]{3,200})[\"']"),
            "v", lambda m, line: not _placeholder(m.group("v")), needles=("securestring",)),
        # Twilio: the auth token is 32 hex chars, passed next to the AC account SID
        _Rule("twilio_key", c(
            r"AC[0-9a-f]{32}[\"']?[ \t]*[,:=][ \t]*[\"'](?P<v>[0-9a-f]{32})[\"']"), "v",
            needles=("ac",)),
        # high-entropy values under key/secret/token/salt... names
        _Rule("high_entropy", c(
            r"(?i)(?<![\w.\-])[\"'\[]?(?P<n>" + _ENAME + r")[\"'\]]{0,2}" + _SEP + _QUOTED), "v",
            _entropy_ok, generic=True, needles=_ENTROPY_NEEDLES,
            prefilter=c(_SEP_QUOTE + r"\S{16}")),  # _looks_random: 16+ chars, no blank
        _Rule("high_entropy", c(
            r"(?i)^[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?[\"']?(?P<n>" + _ENAME + r")[\"']?"
            r"[ \t]*[=:][ \t]*(?P<v>[A-Za-z0-9+/=_\-.~]{16,})[ \t]*(?:[#;].*)?$"), "v",
            _entropy_ok, None, not_code, generic=True, needles=_ENTROPY_NEEDLES),
        _Rule("url_credentials", c(
            r"(?i)[?&;](?P<n>sig|signature|access_token|refresh_token|client_secret|api_key|apikey"
            r"|token|password|passwd|pwd|secret|auth)=(?P<v>[^&\s\"'#<>`;]{4,})"), "v",
            lambda m, line: not _placeholder(m.group("v")),
            lambda m: "password" if re.search(r"(?i)pass|pwd", m.group("n")) else "url_credentials",
            generic=True,
            needles=("sig=", "signature=", "token=", "secret=", "key=", "pass", "pwd=", "auth=")),
    ]
    return tuple(replace(r, gate=_needle_regex(r.needles), needle_set=frozenset(r.needles))
                 if r.needles else r for r in rules)


@cache
def _needle_regex(needles: tuple[str, ...]) -> re.Pattern[str]:
    """One search instead of a Python loop of ``in`` tests; compiled when first used (only a long line's
    scan asks: compiling all 75 was ~8 ms of every process's first scrub)."""
    return lazy("|".join(re.escape(n) for n in needles))


@cache
def _inline_pattern() -> re.Pattern[str]:
    return re.compile(
        r"(?i)(?<![\w.\-])(?:--)?(?P<n>[\w\-]{0,30}?(?:password|passwd|pwd|secret|token|api[_\-]?key"
        r"|apikey)|pass)=(?!=)(?P<v>[^\s;&\"'<>,)\]}`]{3,200})")
