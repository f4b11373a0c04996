"""Secret words and names, and the checks a rule's match must pass to count as a secret."""

from __future__ import annotations

import base64
import binascii
import bisect
import re
from functools import lru_cache

from acms.privacy.decoys import (
    _FORMATTED_AFTER,
    _NAME_NOT_SECRET,
    _PATH,
    _PLACEHOLDER,
    _UUID,
    _names_a_secret,
    _looks_random,
    _placeholder,
    _wordy,
)
from acms.privacy.model import _MARK_HEAD


_SECRET_WORD = (
    r"(?:password|passwd|passphrase|pwd|(?<![a-z])pass(?![a-z])|(?<![a-z])pw(?![a-z])|secret|token|api[_\-]?key|apikey"
    r"|access[_\-]?key|private[_\-]?key|credentials?|(?<![a-z])auth(?![a-z])|signing[_\-]?key"
    r"|encryption[_\-]?key|master[_\-]?key|client[_\-]?key|session[_\-]?key|license[_\-]?key"
    r"|account[_\-]?key|(?<![a-z])dsn(?![a-z])|(?<![a-z])salt(?![a-z]))"
)
_ENTROPY_WORD = (
    r"(?:key|secret|token|salt|seed|signature|hmac|cookie|session|cred|pass|pwd|private|auth|nonce"
    r"|(?<![a-z])sig(?![a-z]))"
)
_NAME = r"[A-Za-z0-9_.\-]{0,40}?" + _SECRET_WORD + r"[A-Za-z0-9_.\-]{0,40}"
_ENAME = r"[A-Za-z0-9_.\-]{0,40}?" + _ENTROPY_WORD + r"[A-Za-z0-9_.\-]{0,40}"
# ``name = ``, ``name: ``, ``name := ``, ``name => ``, ``name: Type = `` (annotated assignment)
_SEP = (r"[ \t]*(?::=|=>|\|\|=|\?\?=|=(?!=)|:(?:[ \t]*[\w\[\]., |&<>*']{1,40}[ \t]*=(?!=))?)"
        r"[ \t]*")
_QUOTED = (r"(?:[rbuRBUfF]{0,2})(?P<q>[\"'`])(?P<v>(?:(?!(?P=q))[^\\\n]|\\.){1,500})(?P=q)")
# what any _SEP + _QUOTED match holds: _SEP's last sign, blanks, the quote (a rule's prefilter)
_SEP_QUOTE = r"(?i)[=:>][ \t]*[rbuRBUfF]{0,2}[\"'`]"
_INLINE_VALUE = r"(?i)=(?!=)[^\s;&\"'<>,)\]}`]{3}"  # what _inline_pattern's matches end in
_BARE_SKIP = re.compile(
    r"(?i)^(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Za-z_][\w.]*\(.*|\d{1,6}|[\[{(|>].*)$"
)


_EXPRESSION = re.compile(r"[ \t](?:=|==|\||->|and|or|if|else)[ \t]")  # code, not a value


def _kind_for_name(m: re.Match[str]) -> str:
    return "password" if re.search(r"(?i)pass|pwd|(?<![a-z])pw(?![a-z])", m.group("n")) else "credential"


_STRONG_NAME = re.compile(r"(?i)passw|passphrase|pwd|secret|(?<![a-z])pass(?:_|$)|(?<![a-z])pw(?:_|$)")


def _name_ok(name: str) -> bool:
    """The secret word must be in the last dotted part (``Token.PromptNum`` is a style name,
    ``settings.API_KEY`` a key) and the name must not be about a secret (``password_url``)."""
    name = name.strip("\"'[]")
    last = name.rsplit(".", 1)[-1]
    if not re.search(_SECRET_WORD + "|" + _ENTROPY_WORD, last, re.I):
        return False
    return not _NAME_NOT_SECRET.search(name)


def _formatted(m: re.Match[str], line: str) -> bool:
    """``"VS%0.fCOMNTOOLS" % version``, ``"{}:{}".format(...)``: a template, not a value."""
    return bool(_FORMATTED_AFTER.match(line, m.end()))


def _assign_ok(m: re.Match[str], line: str) -> bool:
    """An assignment to a secret name is a secret unless the name is about one (``password_url``)
    or the value stands for one (``${DB_PASSWORD}``, ``<your-token>``, ``os.environ[...]``)."""
    return _secret_value(m.group("n"), m.group("v")) and not _formatted(m, line)


def _secret_value(name: str, value: str) -> bool:
    """Prose and identifiers count only under password-like names: keys and tokens are random."""
    if not _name_ok(name) or _placeholder(value) or value == name:
        return False
    strong = bool(_STRONG_NAME.search(name.rsplit(".", 1)[-1]))
    if re.search(r"\s", value):  # a passphrase, or prose: prose has no digits and symbols
        return strong and len(value.split()) < 6 and "\\n" not in value \
            and bool(re.search(r"\d|[^\w\s.,;:'\"]", value))
    if strong or not _wordy(value):
        return True
    # a token name with a word-like value: ``envTokenValue42`` maybe, ``GetCallerIdentity`` no
    return bool(re.search(r"\d", value)) and not re.search(r"[./:]", value)


def _pair_ok(m: re.Match[str], line: str) -> bool:
    """``("DB_PASSWORD", "s3cr3t")``: lists of names (``("AUTH", "SELECTED")``) are common, so the
    value needs a digit or a symbol and no spaces."""
    value = m.group("v")
    return _assign_ok(m, line) and not re.search(r"\s", value) \
        and bool(re.search(r"[\d\W]", value.replace("_", "")))


def _prose_ok(m: re.Match[str], line: str) -> bool:
    """``the password is hunter2!``, not ``Password is correct.&quot;);``: the word itself, without
    trailing punctuation, must hold a digit, a symbol or a case change."""
    core = re.sub(r"(?:&\w+;|[.,;:!?)\]}\"'])+$", "", m.group("v"))
    return len(core) >= 4 and not _placeholder(core) and (not _wordy(core) or _human_password(core)) \
        and bool(re.search(r"\d|[^\w\s]|[a-z][A-Z]", core))


def _human_password(core: str) -> bool:
    """``cedar79_GtSno``, ``Copper63-QwiRm``: words, digits and a symbol or a case change inside;
    wordy, yet no identifier, version or path reads so after a secret word in prose."""
    return (bool(re.search(r"\d", core)) and bool(re.search(r"[A-Za-z]{3}", core))
            and bool(re.search(r"[^\w\s]|_|[a-z][A-Z]", core))
            and not re.fullmatch(r"[a-z]+(?:_[a-z0-9]+)+|[A-Z][A-Z0-9_]+|v?\d+(?:\.\d+)+[\w.\-]*", core))


_PROSE_BEFORE = re.compile(
    r"^[ \t]*(?:#|//|/\*|\*|--|;|%|\"\"\"|\'\'\'|<!--|(?:[-*+>][ \t]+|\d+\.[ \t]+)?[A-Za-z(][\w ,.;:()'`-]*$)")


def _prose_word_ok(m: re.Match[str], line: str) -> bool:
    """``the admin password`` or ``password:`` then a generated-looking word, in prose: a comment, a docstring or
    a document's line (in code, only where the line is a comment or reads as words). The value must
    look generated (letters and digits mixed, or symbols), not be a word, a name or a placeholder."""
    core = re.sub(r"(?:&\w+;|[.,;:!?)\]}\"'`])+$", "", m.group("v"))
    if len(core) < 6 or _placeholder(core) or _names_a_secret(core):
        return False
    if _wordy(core) and not _human_password(core):
        return False
    if not (re.search(r"\d", core) and re.search(r"[A-Za-z]", core)):
        return False
    if re.search(r"[()\[\]{}<>=]|\.\w+\(|::|->|^[\w.]+\.[a-z_]+$", core) or _PATH.fullmatch(core):
        return False  # code, a call, a path, a module name
    if re.fullmatch(r"[a-z]+(?:[_\-][a-z0-9]+)+|[a-z]+\d{1,3}|v?\d+(?:\.\d+)+[\w.\-]*", core):
        return False  # snake_case names, word1, versions
    if m.group("n").lower().startswith(("token", "secret", "api")) and not _looks_random(core):
        return False  # keys and tokens are random: prose about them rarely is
    return True


def _credential_pair_ok(m: re.Match[str], line: str) -> bool:
    """The second of a user and a password given together; not a pair of names or messages."""
    value = m.group("v")
    if _placeholder(value) or " " in value.strip() or _names_a_secret(value):
        return False
    return bool(re.search(r"\d|[^\w\s]", value)) and (not _wordy(value) or _human_password(value))


def _short_word_ok(m: re.Match[str], line: str) -> bool:
    """``pass `x```, ``pw: x``: a generated-looking value, in prose or a comment."""
    return _prose_word_ok(m, line) and (bool(m.group("q1") or m.group("q2")) or ":" in m.group(0))


def _prose_code_ok(m: re.Match[str], line: str) -> bool:
    """In code, prose is a comment or a docstring's line (it reads as words before the match)."""
    if not _prose_word_ok(m, line):
        return False
    if m.start() > 400:  # a long line is code, not prose; a comment marker may still be near
        return bool(re.search(r"(?:#|//|/\*|<!--)[^\"'`\n]{0,200}$", line[m.start() - 400:m.start()]))
    before = line[:m.start()]
    if _PROSE_BEFORE.match(before) is None and not re.search(r"(?:#|//|/\*|<!--)[^\"'`]*$", before):
        return False
    return True


_VALUE_CALL = re.compile(
    r"(?:^|[.:])(?:(?i:from|new|of|str|string|bytes|byte|b|u|utf8|to_?string|to_?owned|into|some|ok"
    r"|literal)|\[\]byte|[A-Z]\w*(?:Secret|Password|Passwd|Key|Token|Str|String|Bytes|Credential)"
    r"|(?:Secret|Password|Sensitive|Masked|Buffer|SecureString)\w*)$")


def _wrapped_ok(m: re.Match[str], line: str) -> bool:
    """``token = String::from("...")``, ``SecretStr("...")``: a conversion or a secret type's
    constructor around a literal; any other call reads, looks up or names something with it
    (``self._get_param("Passphrase")``, ``ObjectIdentifier("2.5.29.16")``, ``os.getenv("TOKEN")``)."""
    return _VALUE_CALL.search(m.group("call")) is not None and _assign_ok(m, line)


def _flag_code_ok(m: re.Match[str], line: str) -> bool:
    """In code, ``--password x`` counts inside a string or a list of arguments (the flag quoted)."""
    if not _flag_ok(m, line):
        return False
    dq, sq = _quotes(line)
    inside = bisect.bisect_left(dq, m.start("n")) % 2 == 1 or bisect.bisect_left(sq, m.start("n")) % 2 == 1
    return inside and bool(re.search(r"\d", m.group("v")))


def _flag_ok(m: re.Match[str], line: str) -> bool:
    """``--password x``: not ``--password-file x`` nor ``--token $TOKEN``."""
    return _name_ok(m.group("n")) and not _placeholder(m.group("v")) \
        and not m.group("v").startswith("-")


_OBJECTS = re.compile(r"(?i)^(?:settings|config|conf|cfg|env|os|self|this|process|secrets|vars|values|app"
                      r"|params|options|opts|args|ctx|context|request|props|import|module)\.")


def _dotted_password(name: str, value: str) -> bool:
    """``pass = cedar56.YnDd3`` under a password name: a dotted value that reads as a human password
    (digits, a case change) and not as an attribute of a settings object (``settings.DB_PASS``)."""
    return (bool(_STRONG_NAME.search(name.rsplit(".", 1)[-1])) and "." in value and " " not in value
            and _human_password(value) and not _OBJECTS.match(value)
            and any(re.search(r"\d", p) and re.search(r"[A-Za-z]", p) for p in value.split(".")))


def _bare_ok(m: re.Match[str], line: str) -> bool:
    """Unquoted values: skip code references, numbers, structures and ``self.x``."""
    value = m.group("v").strip()
    if value.startswith(("$", "%", "{{", "&", "*")):
        return False
    if _BARE_SKIP.match(value) and not _dotted_password(m.group("n"), value):
        return False
    if _EXPRESSION.search(value):
        return False
    return _assign_ok(m, line)


def _inline_ok(m: re.Match[str], line: str) -> bool:
    """``password=...`` inside a line: query strings, DSNs, CLI flags, ``--from-literal``."""
    return _assign_ok(m, line)


def _inline_code_ok(m: re.Match[str], line: str) -> bool:
    """In code, ``password=x`` is a keyword argument unless it sits inside a string literal (a DSN,
    a command line)."""
    if not _assign_ok(m, line):
        return False
    dq, sq = _quotes(line)
    return bisect.bisect_left(dq, m.start()) % 2 == 1 or bisect.bisect_left(sq, m.start()) % 2 == 1


@lru_cache(maxsize=8)
def _quotes(line: str) -> tuple[list[int], list[int]]:
    """Where the line's double and single quotes are: counting the quotes before each match of a
    rule made a long line (minified code, 5 MB on one line) cost its length times its matches."""
    return ([i for i, ch in enumerate(line) if ch == '"'], [i for i, ch in enumerate(line) if ch == "'"])


def _entropy_ok(m: re.Match[str], line: str) -> bool:
    value = m.group("v")
    return _name_ok(m.group("n")) and not _placeholder(value) and _looks_random(value) \
        and not _UUID.search(value) and not _formatted(m, line)


def _url_ok(m: re.Match[str], line: str) -> bool:
    value = m.group("v")
    return not _placeholder(value) and not value.isdigit() and value.lower() not in (
        "password", "pass", "passwd", "pwd", "secret")


def _marked(value: str) -> bool:
    """Only explicit placeholder marks (``EXAMPLE``, ``xxxx``, ``<...>``, one repeated char): a
    provider prefix is strong evidence, so the looser decoy tests do not apply to it."""
    return _MARK_HEAD in value or len(set(value)) <= 2 or bool(_PLACEHOLDER.search(value))


def _token_ok(m: re.Match[str], line: str) -> bool:
    return not _marked(m.group(0))


def _mixed_ok(m: re.Match[str], line: str) -> bool:
    """Short generic prefixes (``sk-``, ``hf_``, ``hvs.``) need letters and digits and no words
    (``sk-learn-classifier-v2`` is a name), like real keys."""
    body = m.group(0)
    tail = re.sub(r"^[a-z]{2,3}[\-_.](?:proj-|svcacct-|admin-|None-)?", "", body)
    return (not _marked(body) and bool(re.search(r"[A-Za-z]", tail))
            and bool(re.search(r"\d", tail)) and not _wordy(tail))


def _bearer_ok(m: re.Match[str], line: str) -> bool:
    value = m.group("v")
    return not _placeholder(value) and (bool(re.search(r"\d", value)) or len(value) >= 24)


def _b64(value: str) -> bytes | None:
    """Strict base64 (missing padding allowed), or None."""
    try:
        return base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def _basic_ok(m: re.Match[str], line: str) -> bool:
    value = m.group("v")
    raw = None if _placeholder(value) else _b64(value)
    return raw is not None and b":" in raw


def _docker_auth_ok(m: re.Match[str], line: str) -> bool:
    value = m.group("v")
    if _placeholder(value):
        return False
    raw = _b64(value)
    return (raw is not None and b":" in raw) or _looks_random(value)
