"""Each general detection rule, with the decoys of its family: joined literals (Python, JS/TS, Go,
Java, PHP, Lua), credentials in URLs of any scheme, prose in comments, docstrings and documents,
command lines, literals wrapped in a conversion, Go DSNs, Markdown tables and reST fields,
high-entropy values next to secret words; secret-looking file and folder names; long lines scanned in
windows find what a scan of the whole line finds.

Every value is made up for these tests (random characters of the right shape).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acms.privacy import scrub, scrubber
from acms.privacy.names import redact_path, secret_name_kind

GH = "ghp_Vb7Qx2Lm9Tz4Nc8Wd1Ye6Rf3Ug5Ih0Jk2Pl"
RAND = "Qm7xZ2vN5kL8pR3tW9yB4cD6"
PW = "Copper63-QwiRm"


SECRETS = [
    # joined literals: the pieces are joined, scanned as one, and every piece is redacted
    ("a.py", f'TOKEN = ("{GH[:12]}"\n         "{GH[12:]}")\n', [GH[:12], GH[12:]]),
    ("a.py", f'signing_key = "{RAND[:10]}" + "{RAND[10:]}"\n', [RAND[:10], RAND[10:]]),
    ("a.js", f'const k = "{GH[:9]}" +\n  "{GH[9:]}";\n', [GH[:9], GH[9:]]),
    ("a.go", f'var token = "{GH[:14]}" +\n\t"{GH[14:]}"\n', [GH[:14], GH[14:]]),
    ("A.java", f'String pw = "{PW[:7]}" + "{PW[7:]}";\n', [PW[:7], PW[7:]]),
    ("a.php", f"$key = '{GH[:8]}' . '{GH[8:]}';\n", [GH[:8], GH[8:]]),
    ("a.lua", f'local token = "{GH[:15]}" .. "{GH[15:]}"\n', [GH[:15], GH[15:]]),
    # credentials in URLs of any scheme
    ("a.py", f'r = redis.from_url("redis://:{RAND}@cache:6379/0")\n', [RAND]),
    ("a.py", f'DB = "postgresql+psycopg2://app:{PW}@db:5432/app"\n', [PW]),
    ("a.py", f"BROKER = 'amqps://worker:{RAND}@mq//'\n", [RAND]),
    ("a.md", f"Use `mongodb+srv://admin:{RAND}@cluster0.x.mongodb.net/db`.\n", [RAND]),
    ("a.go", f'db, _ := sql.Open("mysql", "app:{PW}@tcp(db:3306)/shop")\n', [PW]),
    # prose: comments, docstrings, documents
    ("a.py", f"# the staging password is {PW}\n", [PW]),
    ("a.py", f'def f():\n    """Log in with password: {PW} first."""\n', [PW]),
    ("a.js", f"// TODO remove: admin password {PW}\n", [PW]),
    ("README.md", f"Log in with the shared password `{PW}` and change it.\n", [PW]),
    ("CHANGELOG.md", f"- Switched the client (api secret {RAND}).\n", [RAND]),
    ("notes.txt", f"new bot token: {GH}\n", [GH]),
    # high-entropy values next to secret words
    ("a.py", f'session_secret = "{RAND}"\n', [RAND]),
    ("a.swift", f'static let analyticsSecret = "{RAND}"\n', [RAND]),
    # command lines
    ("compose.yml", f"    command: redis-server --requirepass {RAND} --appendonly yes\n", [RAND]),
    ("compose.yml", f'    command: ["redis-server", "--requirepass", "{RAND}"]\n', [RAND]),
    ("run.sh", f"psql --password {PW}\n", [PW]),
    ("a.py", f'subprocess.run(["mysqldump", "--password", "{PW}", "shop"])\n', [PW]),
    ("a.py", f'ARGS = "--token {RAND}"\n', [RAND]),
    ("ci.sh", f"docker login -u ci -p {RAND} registry.internal\n", [RAND]),
    ("flush.sh", f"redis-cli -h cache -a {RAND} FLUSHDB\n", [RAND]),
    # literals wrapped in a conversion
    ("a.rs", f'let token = String::from("{RAND}");\n', [RAND]),
    ("a.py", f'api_key = SecretStr("{RAND}")\n', [RAND]),
    # tables and field lists in documents
    ("accounts.md", f"| user | password |\n| --- | --- |\n| qa-admin | {PW} |\n", [PW]),
    ("svc.rst", f":user: svc\n:token: {RAND}\n", [RAND]),
    # config: a dotted human password under a password name
    ("mail.ini", "[smtp]\npass = cedar56.YnDd3\n", ["cedar56.YnDd3"]),
    # a user and a password given together
    ("a.py", f'requests.post(URL, auth=("bot", "{PW}"), timeout=10)\n', [PW]),
    ("M.cs", f'var c = new NetworkCredential("mailer", "{PW}");\n', [PW]),
    # a secret set by a configuration command
    ("boot.sh", f"aws configure set aws_secret_access_key {RAND}/x+Yz09AbCdEfGh\n", [RAND]),
    # .pgpass lines, CSV columns, the short words with a quoted value or a colon
    ("pg.sh", f"db.internal:5432:shop:app:{PW}\n", [PW]),
    ("accounts.csv", f"service,user,password\nsmtp,mailer,{PW}\n", [PW]),
    ("qa.md", f"Test DB: user `qa`, pass `{PW}`.\n", [PW]),
    ("db.py", f"conn = connect(DSN)  # pw: {PW}\n", [PW]),
    # a name and its value on the next line or in the same object; a placeholder's default
    ("deploy.yaml", f"env:\n  - name: DB_PASSWORD\n    value: \"{PW}\"\n", [PW]),
    ("task.json", f'{{"name": "API_TOKEN", "value": "{RAND}"}}\n', [RAND]),
    ("Db.java", f'@Value("${{db.password:{PW}}}")\n', [PW]),
    ("run.sh", f'psql "${{DB_PASSWORD:-{PW}}}"\n', [PW]),
    ("login.html", f'<input type="password" name="password" value="{PW}">\n', [PW]),
]

DECOYS = [
    ("a.py", 'password = os.environ["DB_PASSWORD"]'),
    ("a.py", 'url = "postgres://user:password@localhost/db"'),
    ("a.py", 'msg = "Invalid " + "password"'),
    ("a.py", 'key = "a" + "b"'),
    ("a.py", "# the password is stored in the vault"),
    ("a.py", 'HEADER_TOKEN_RE = re.compile(r"^\\s*([^=\\s;,]+)")'),
    ("a.py", "comment_token = line[pos:].rstrip('\\r\\n')"),
    ("a.py", 'token = os.getenv("TOKEN")'),
    ("a.py", 'parser.add_argument("--password-file", default="/run/secrets/db")'),
    ("a.py", 'cmd = ["docker", "run", "-p", "8080:80", "shop"]'),
    ("README.md", "Your password must be at least 12 characters long."),
    ("README.md", "Set the password to changeme in development."),
    ("README.md", "The API key is sent in the X-API-Key header."),
    ("README.md", "export API_KEY=<your-api-key>"),
    ("run.sh", 'redis-server --requirepass "$REDIS_PASSWORD"'),
    ("run.sh", 'docker login -u ci -p "$CI_REGISTRY_PASSWORD" registry.internal'),
    ("run.sh", "psql -h db -p 5432 -U shop"),
    ("c.yml", "password: {{ .Values.db.password }}"),
    ("c.yml", "token: ${{ secrets.DEPLOY_TOKEN }}"),
    ("t.md", "| user | password |\n| --- | --- |\n| qa | <set in vault> |"),
    ("a.md", "The password hash uses argon2id v19 with 64 MB."),
    ("a.py", 'password = password.encode("latin1")'),
    ("a.py", 'passphrase = self._get_param("Passphrase")'),
    ("a.py", 'CHALLENGE_PASSWORD = ObjectIdentifier("1.2.840.113549.1.9.7")'),
    ("a.md", "password = getpass.getpass()"),
    ("a.json", '{"InstanceId": "i-1234567890abcdef0"\n "InstanceType": "t2.micro"}'),
    ("list.rst", "aws gamelift list-fleets --next-token eyJhd3NBY2NvdW50SWQiOnsicyI6IjMwMjc3NjAx"),
    ("uuid.txt", "en0   150   01:00:5e:00:00:01"),
    ("a.py", 'auth_header("Authorization", "Bearer")'),
    ("data.csv", "service,user,password\nsmtp,mailer,<in vault>"),
    ("deploy.yaml", "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db"),
    ("deploy.yaml", "env:\n  - name: LOG_LEVEL\n    value: debug"),
    ("Db.java", '@Value("${db.password}")'),
    ("run.sh", 'psql "${DB_PASSWORD:-$FALLBACK}"'),
    ("login.html", '<input type="password" name="password" value="">'),
]


@pytest.mark.parametrize(("path", "text", "fragments"), SECRETS, ids=[f"{p}:{t[:28]}" for p, t, _ in SECRETS])
def test_each_general_rule_catches_its_placement(path: str, text: str, fragments: list[str]) -> None:
    out = scrub(text, path).text
    assert [f for f in fragments if f in out] == [], out
    assert out.count("\n") == text.count("\n")


@pytest.mark.parametrize(("path", "text"), DECOYS, ids=[f"{p}:{t[:28]}" for p, t in DECOYS])
def test_decoys_of_each_family_survive(path: str, text: str) -> None:
    assert scrub(text, path).text == text


NAMES = [
    (f"keys/{GH}.json", "github_token"),
    (f"cache/{RAND}/notes.md", "high_entropy"),
    ("sk-proj-abcDEF123ghiJKL456mnoPQR789stu/readme.md", "openai_key"),
]
NOT_NAMES = [
    "data/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.bin",
    "x/550e8400-e29b-41d4-a716-446655440000.json",
    "scipy/io/tests/data/test-44100Hz-2ch-32bit-float-be.wav",
    "src/very_long_module_name_for_tests.py",
    "docs/ThisIsAVeryLongCamelCaseFileName2.md",
    "man/man3/X11::Protocol::Connection::UNIXFH.3pm.gz",
]


@pytest.mark.parametrize(("path", "kind"), NAMES)
def test_a_secret_file_or_folder_name_is_redacted_stably(path: str, kind: str) -> None:
    redacted = redact_path(path)
    secret = next(part for part in path.split("/") if secret_name_kind(part))
    assert secret not in redacted and f"REDACTED-{kind}-" in redacted
    assert redacted == redact_path(path)  # stable: re-indexing keeps the IRI
    assert redacted.rsplit(".", 1)[-1] == path.rsplit(".", 1)[-1]  # the language stays
    assert redact_path(redacted) == redacted
    assert redact_path(path.replace(secret, secret[:-1] + "Z")) != redacted


@pytest.mark.parametrize("path", NOT_NAMES)
def test_hashes_uuids_and_long_names_stay(path: str) -> None:
    assert redact_path(path) is path


def test_the_walker_lists_a_secret_name_redacted_and_reads_the_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from acms.ingest.walker import list_files, read_source

    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / f"{GH}.py").write_text("def load():\n    return 1\n")
    listing = list_files(tmp_path)
    [listed] = listing.files
    assert GH not in listed.path and listed.path.startswith("keys/REDACTED-github_token-")
    got = read_source(listed)
    assert not isinstance(got, str) and "def load" in got.text  # type: ignore[union-attr]


PIECES = ["password", "token", " = ", "=", ": ", '"', "'", " ", "--password ", "redis://:", "@h:1/0",
          GH, RAND, PW, "machine h login u ", "# ", "api_key", "x" * 50, "+", "(", ")", ";"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.sampled_from(PIECES), min_size=900, max_size=1300), st.sampled_from(["a.py", "a.txt", "a.yml"]))
def test_a_long_line_in_windows_finds_what_the_whole_line_finds(pieces: list[str], path: str) -> None:
    """Windows are an optimisation: with a window as long as the line, the findings are the same,
    except where the whole line's needles let a rule fire far from them (windows are stricter)."""
    text = "".join(pieces).replace("\n", " ")
    windowed = scrub(text, path)
    reach = scrubber._REACH
    try:
        scrubber._REACH = 10**9
        whole = scrub(text, path)
    finally:
        scrubber._REACH = reach
    lost = [f for f in whole.findings if f not in windowed.findings
            and not any(w.start < f.end and f.start < w.end for w in windowed.findings)]
    assert lost == [], (lost, text[:300])
