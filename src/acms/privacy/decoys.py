"""Values that stand for a secret without being one (placeholders, templates, hashes, data):
the decoys that must survive scrubbing."""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

from acms.privacy.model import _MARK_HEAD


_PLACEHOLDER = re.compile(
    r"(?i)example|placeholder|replace[_\-. ]?me|(?<![a-z])your[_\-. ]|(?-i:x{5,}|X{5,})|\*{3,}"
    r"|\.\.\.|redacted|<[^<>\n]{1,60}>|\$\{[^}\n]*\}|\{\{.*?\}\}|^\$(?:[A-Za-z_]\w*(?![^/:.@\-])|\{|\([^()]*\)$)|^%\(|^%[\w.]+%$"
    r"|^\{[\w.\-]*\}$|#\{"
    r"|^@[\w.]+@$|^\(\(.*\)\)$|^!(?:vault|secret|ref)|^(?:env|vault|ssm|secretsmanager|awssm)[:(]"
    r"|os\.environ|getenv|process\.env|ENV\[|System\.getenv|arn:aws:|^pk_(?:live|test)_"
)
_WORDS = frozenset(
    "none null nil undefined true false yes no on off required optional string str bytes int"
    " password passwd pass secret token key apikey api_key credential credentials env bearer basic"
    " oauth oauth2 jwt hidden masked hmac sha256 sha512 hs256 rs256 aes aes256 default empty"
    " changeme unset todo tbd secretstr self this sample demo dummy test testing foo bar baz qux"
    .split()
)
_NAME_NOT_SECRET = re.compile(
    r"(?i)(?:name|names|url|uri|endpoint|path|file|filename|dir|type|length|len|min|max|count"
    r"|size|ref|hint|field|label|prompt|header|policy|expiry|expires|ttl|timeout|lifetime|age"
    r"|regex|pattern|format|hashers?|validators?|reset|manager|provider|class|mode|method|algorithm"
    r"|alg|scopes?|audience|issuer|version|enabled|required|izer|ization|ized|tokens|location"
    r"|source|mount|volume|store|backend|prefix|suffix|selector|mgr|realm|handler|factory"
    r"|callback|template|rotation|generator"
    r"|strength|_id|id|ids|index|position|pos|usage|limit|budget|kind|display|field_name|env_var"
    r"|envvar|var|variable|arn|public[_\-]?key|pubkey|public)[\"'\]]?$"
    r"|^(?:old)?pwd$|public|pubkey|publishable|_at$|^no_|^is_|^has_|^use_|^enable"
    r"|(?:next|page|continuation|cursor|pagination)[_\-]?token"
)


_FORMAT_FIELD = re.compile(
    r"\{[A-Za-z_]?[\w.\[\]'\"]*\}|(?<![A-Za-z0-9])%(?:\(\w+\))?[sd](?![A-Za-z0-9])")
_FORMATTED_AFTER = re.compile(r"[ \t]*(?:%[ \t]*[\w(]|\.format\()")
_SECRET_PARTS = frozenset(
    "password passwords passwd pass pwd secret secrets token tokens key keys auth authorization"
    " credential credentials access apikey api private session".split())


def _sequential(v: str) -> bool:
    """``abcdefgh...``, ``ABCDEFGHIJKLMNOPQRSTUVWXYZ234567``: alphabets, not keys."""
    steps = sum(ord(b) - ord(a) == 1 for a, b in zip(v, v[1:]))
    return steps >= 0.6 * (len(v) - 1)


def _names_a_secret(v: str) -> bool:
    """``AWS_SECRET_ACCESS_KEY``, ``secret_key``, ``AWSSecretKey``: the name of a secret (an
    environment variable, a field), not its value: letters only, in separated or camel-case words
    one of which is a secret word (``MyPassword`` alone stays a possible password)."""
    if len(v) > 64 or not re.fullmatch(r"[A-Za-z][A-Za-z_.\-/:]*", v):
        return False
    words = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", v)
    if not (re.search(r"[_.\-/:]", v) or len(words) >= 3):
        return False
    return any(w.lower() in _SECRET_PARTS for w in words)


def _placeholder(value: str) -> bool:
    """Example keys, templates, ``${VAR}``, environment lookups and other values that stand for a
    secret without being one (the decoys that must survive)."""
    v = value.strip().strip("\"'`")
    if len(v) < 4 or _MARK_HEAD in value:
        return True
    if v.lower() in _WORDS or len(set(v)) <= 2 or _sequential(v) or _PATH.fullmatch(v):
        return True
    return bool(_PLACEHOLDER.search(v) or _FORMAT_FIELD.search(v)) or _names_a_secret(v)


def _wordy(v: str) -> bool:
    """Mostly pronounceable words (``GetCallerIdentity``, ``fs.s3.enableServerSideEncryption``):
    an identifier or a setting name. Random base62 of 16+ chars passes for wordy ~0.1 % of the
    time (measured), so generated keys are not mistaken for names."""
    words = [w for w in re.findall(r"[A-Z]?[a-z]{2,}", v)
             if re.search(r"[aeiou]", w, re.I) and not re.search(r"[^aeiouyAEIOUY]{4}", w)]
    share = sum(len(w) for w in words) / max(len(v), 1)
    return share >= 0.8 or share >= 0.6 and bool(re.search(r"[._\-/:]", v))


def _entropy(value: str) -> float:
    n = len(value)
    return -sum(k / n * math.log2(k / n) for k in Counter(value).values()) if n else 0.0


_HEX = re.compile(r"(?i)^(?:0x)?[0-9a-f]+$")
_UUID = re.compile(r"(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HASH_CONTEXT = re.compile(
    r"(?i)sha1|sha224|sha256|sha384|sha512|md5|integrity|digest|checksum|hash|commit|etag"
    r"|fingerprint|revision|\brev\b|\bref\b|blake2|crc32|\bsri\b"
)
_DATA_MAGIC = (b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"\x1f\x8b", b"%PDF", b"PK\x03\x04", b"<svg",
               b"<?xml", b"RIFF", b"OggS", b"wOFF", b"wOF2", b"\x00\x01\x00\x00", b"BM", b"ID3")


def _b64_is_data(value: str) -> bool:
    """Base64 of text or of a known file format is data (an icon, a fixture), not a key."""
    v = value.strip("=")
    try:
        raw = base64.b64decode(v + "=" * (-len(v) % 4), altchars=b"-_" if "-" in v or "_" in v
                               else None, validate=True)
    except (binascii.Error, ValueError):
        return False
    if raw.startswith(_DATA_MAGIC):
        return True
    if len(raw) < 8:
        return False
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in raw)
    return printable / len(raw) > 0.95 and b" " in raw


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_PATH = re.compile(r"(?:/|~/|\.{1,2}/|[A-Za-z]:\\)[\w.\-/\\]*")


def _looks_random(value: str) -> bool:
    """Letters and digits mixed with enough entropy: what generated keys look like (and words
    joined by dashes do not)."""
    if len(value) < 16 or not re.search(r"\d", value) or not re.search(r"[A-Za-z]", value):
        return False
    if re.search(r"\s", value) or _wordy(value) or "://" in value or _DATE.search(value):
        return False
    if re.fullmatch(r"[a-z0-9]+(?:[\-_.][a-z0-9]+)+", value) \
            and not re.search(r"[a-z]\d|\d[a-z]", value):
        return False
    return _entropy(value) >= 3.3
