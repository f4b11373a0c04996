"""Privacy: every planted secret is redacted in ``redact``; ``allow`` keeps only heuristic ones;
``block`` shows no body; redaction is idempotent."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acms.assembly.model import Candidate
from acms.assembly.privacy import PrivacyMode, blocked_text, protect, redact

# (kind, secret value that must not survive ``redact``, clearly sensitive?)
SECRETS = [
    ("aws_access_key_id", "AKIAIOSFODNN7EXAMPLQ", True),
    ("aws_secret_access_key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", True),
    ("github_token", "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", True),
    ("github_token", "gho_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2", True),
    ("github_token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF", True),
    ("slack_token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", True),
    ("stripe_key", "sk_live_51HqLyjWDarjtT1zdp7dcXYZabc", True),
    ("stripe_key", "rk_live_51HqLyjWDarjtT1zdp7dcXYZdef", True),
    ("google_api_key", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", True),
    ("openai_key", "sk-4f3a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e", True),
    ("openai_key", "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90", True),
    ("anthropic_key", "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7-AAAA", True),
    ("bearer_token", "7f9c2ba4e88f827d616045507605853e", True),
    ("jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
            "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", True),
    ("connection_string", "Tr0ub4dor3xyz", True),
    ("private_key", "MIIEowIBAAKCAQEA7bq98Y3xkMNbodyLongKeyMaterialLine1", True),
    ("private_key", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3Bx", True),
    ("password", "hunter2hunter2", False),
    ("password", "s3cretYamlPass", False),
    ("password", "iniPassw0rd", False),
    ("credential", "yamlApiKey123", False),
    ("credential", "envSecretValue9", False),
    ("credential", "envTokenValue42", False),
    ("credential", "jsonTokenValue7", False),
    ("high_entropy", "q8Z3xLm0Pv7RtY2wKs9DbN4c", False),
]
S = {value: kind for kind, value, _ in SECRETS}

FIXTURE = f'''\
import os
AWS_ACCESS_KEY_ID = "{SECRETS[0][1]}"
aws_secret_access_key = "{SECRETS[1][1]}"
GITHUB = "{SECRETS[2][1]}"
oauth = "{SECRETS[3][1]}"
pat = "{SECRETS[4][1]}"
slack = "{SECRETS[5][1]}"
stripe = "{SECRETS[6][1]}"
restricted = "{SECRETS[7][1]}"
google = "{SECRETS[8][1]}"
openai_legacy = "{SECRETS[9][1]}"
openai_proj = "{SECRETS[10][1]}"
anthropic = "{SECRETS[11][1]}"
headers = {{"Authorization": "Bearer {SECRETS[12][1]}"}}
session = "{SECRETS[13][1]}"
DATABASE_URL = "postgres://admin:{SECRETS[14][1]}@db.internal.example:5432/app"
-----BEGIN RSA PRIVATE KEY-----
{SECRETS[15][1]}
{SECRETS[16][1]}
-----END RSA PRIVATE KEY-----
password = "{SECRETS[17][1]}"
# settings.yaml
db:
  PASSWORD: {SECRETS[18][1]}
  api_key: '{SECRETS[20][1]}'
[ini]
passwd = {SECRETS[19][1]}
secret={SECRETS[21][1]}
export API_TOKEN="{SECRETS[22][1]}"
{{"token": "{SECRETS[23][1]}"}}
cache_key = "{SECRETS[24][1]}"
'''

NOT_SECRETS = """\
max_tokens = 100
token = tokens[i]
api_key: str | None = None
password: str
self.password = password
cfg.api_key = settings.API_KEY
if password == "":
DB_PASSWORD: ${DB_PASSWORD}
cache_key = "user_profile"
tokenizer = "cl100k_base"
url = "https://example.com/path"
"""


def test_redact_removes_every_planted_secret() -> None:
    text, kinds = redact(FIXTURE, PrivacyMode.REDACT)
    survivors = [value for value in S if value in text]
    assert survivors == []
    assert set(kinds) == {kind for kind, _, _ in SECRETS}
    for kind in kinds:
        assert f"[REDACTED:{kind}]" in text
    # what is not secret survives: the user and host of the connection string, the names
    assert "postgres://admin:[REDACTED:connection_string]@db.internal.example:5432/app" in text
    assert 'headers = {"Authorization": "Bearer [REDACTED:bearer_token]"}' in text
    assert "-----BEGIN" not in text


def test_allow_removes_clear_secrets_but_keeps_heuristic_ones() -> None:
    text, kinds = redact(FIXTURE, PrivacyMode.ALLOW)
    for kind, value, clear in SECRETS:
        assert (value in text) is not clear, (kind, value)
    assert "private_key" in kinds and "github_token" in kinds
    assert "high_entropy" not in kinds and "password" not in kinds


def test_code_that_only_mentions_secrets_is_left_alone() -> None:
    assert redact(NOT_SECRETS, PrivacyMode.REDACT) == (NOT_SECRETS, [])


def test_unterminated_private_key_is_redacted_to_the_end() -> None:
    text, kinds = redact("key = '''\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n", "allow")
    assert kinds == ["private_key"] and "MIIE" not in text


@pytest.mark.parametrize("mode", [PrivacyMode.ALLOW, PrivacyMode.REDACT])
def test_redaction_is_idempotent(mode: PrivacyMode) -> None:
    once, _ = redact(FIXTURE, mode)
    assert redact(once, mode) == (once, [])


PIECES = [v for v in S] + [
    "password = ", "token: ", "api_key=", '"', "'", " ", "\n", "Bearer ", "postgres://u:",
    "@host", "-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----", "[REDACTED:jwt]", "x",
    "export ", "secret_key = ",
]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12), st.sampled_from(["allow", "redact"]))
def test_redaction_is_idempotent_on_random_mixtures(pieces: list[str], mode: str) -> None:
    once, _ = redact("".join(pieces), mode)
    assert redact(once, mode)[0] == once


def test_block_returns_no_body() -> None:
    body = 'def connect(self):\n    """Open the pool."""\n    return pool(password="x")\n'
    c = Candidate("f1", "urn:e1", "pkg.db.Pool.connect", "Method", "micro", body, "pkg/db.py",
                  40, 42, 0.8, "arce", "keyword hit")
    protected = protect([c], PrivacyMode.BLOCK)
    shown = protected.candidates[0].text
    assert shown == blocked_text(c) == "[BLOCKED] pkg/db.py:40-42 Method pkg.db.Pool.connect"
    for line in body.splitlines():
        assert line.strip() not in shown
    assert "Open the pool" not in shown
    assert redact(body, PrivacyMode.BLOCK) == ("", ["blocked"])
    assert protected.redactions == {"blocked": 1}


def test_protect_counts_fragments_per_kind_and_keeps_clean_candidates_identical() -> None:
    clean = Candidate("f1", "e1", "n", "Function", "micro", "x = 1\n", "a.py", 1, 1, 0.5, "s", "r")
    dirty = Candidate("f2", "e2", "m", "Function", "micro", FIXTURE, "b.py", 1, 40, 0.5, "s", "r")
    out = protect([clean, dirty], "redact")
    assert out.candidates[0] is clean
    assert out.redactions["github_token"] == 1
    assert "github_token redacted in 1 fragment(s)" in out.warnings()
