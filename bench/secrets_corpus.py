"""Write a small fake project full of planted FAKE secrets and decoys, with a JSON manifest.

Why: a secret scrubber is only as good as its recall on secrets it has not been tuned on and its
restraint on look-alikes. This corpus plants realistic secrets of many kinds in many placements
(Python/JS/Go source, comments, split string literals, .env, YAML, JSON, Docker config.json,
Kubernetes Secrets, INI, TOML, Markdown, shell scripts, URLs) next to decoys that must survive
(documented example keys, placeholders, ``${VAR}``, environment lookups, git and sha256 hashes,
UUIDs, base64 of images and text, version strings, URLs without credentials).

Every secret is random characters of the right shape, drawn at run time from a seeded generator:
nothing real. Tokens whose provider embeds a checksum (GitHub, npm: CRC32 in the last 6 characters)
are regenerated until the checksum is wrong, so no value would pass a provider's own validity check.

    python bench/secrets_corpus.py OUT_DIR [--seed N]

The manifest (``OUT_DIR/manifest.json``) lists every secret (kind, value, the fragments that must
not survive, file, placement) and every decoy (kind, value that must survive, file).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import sys
import uuid
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

ALNUM = string.ascii_letters + string.digits
UPPER_NUM = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase


@dataclass
class Planted:
    """A secret: ``fragments`` are the substrings that must be gone from the scrubbed file."""

    kind: str
    value: str
    file: str
    placement: str
    fragments: list[str] = field(default_factory=list)


@dataclass
class Decoy:
    """A look-alike that is no secret: ``value`` must still be in the scrubbed file."""

    kind: str
    value: str
    file: str


@dataclass
class Manifest:
    seed: int
    secrets: list[Planted] = field(default_factory=list)
    decoys: list[Decoy] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"seed": self.seed, "secrets": [asdict(s) for s in self.secrets],
                "decoys": [asdict(d) for d in self.decoys]}


def _base62(n: int, width: int) -> str:
    out = ""
    while n:
        n, r = divmod(n, 62)
        out = BASE62[r] + out
    return out.rjust(width, "0")


class Corpus:
    """Builds the files; every ``s_*`` call plants a secret, every ``d_*`` call a decoy."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.manifest = Manifest(seed)
        self.files: dict[str, str] = {}
        self._file = ""

    # ---------------------------------------------------------------- random shapes

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def mixed(self, alphabet: str, n: int) -> str:
        """Random, with at least one upper, lower and digit (as generated keys have)."""
        while True:
            v = self.chars(alphabet, n)
            if any(c.isupper() for c in v) and any(c.islower() for c in v) \
                    and any(c.isdigit() for c in v):
                return v

    def password(self, n: int = 18, symbols: str = "!%^*-_=+.~") -> str:
        """A generated password; ``symbols`` fit where it is placed (no ``#`` where that starts
        a comment, no ``@``/``/`` inside URLs, no quotes)."""
        while True:
            v = self.mixed(ALNUM + symbols, n)
            if not symbols or any(c in symbols for c in v):
                if v[0].isalnum():
                    return v

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def hexs(self, n: int) -> str:
        return self.chars(HEX, n)

    def _no_checksum(self, prefix: str, body_len: int) -> str:
        """``prefix + random + 6 chars`` whose last 6 chars are NOT the CRC32 checksum."""
        while True:
            body = self.chars(ALNUM, body_len - 6)
            tail = self.chars(ALNUM, 6)
            if tail != _base62(zlib.crc32(body.encode()), 6):
                return prefix + body + tail

    def github(self, prefix: str = "ghp_") -> str:
        return self._no_checksum(prefix, 36)

    def github_pat(self) -> str:
        return "github_pat_11" + self.chars(UPPER_NUM, 20) + "_" + self.chars(ALNUM, 59)

    def npm(self) -> str:
        return self._no_checksum("npm_", 36)

    def aws_id(self) -> str:
        return "AKIA" + self.chars(string.ascii_uppercase + "234567", 16)

    def aws_secret(self) -> str:
        return self.mixed(B64, 40)

    def slack_token(self, kind: str = "b") -> str:
        return (f"xox{kind}-{self.chars(string.digits, 12)}-{self.chars(string.digits, 13)}-"
                f"{self.mixed(ALNUM, 24)}")

    def jwt(self) -> str:
        def enc(obj: dict[str, object]) -> str:
            return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()) \
                .decode().rstrip("=")
        header = enc({"alg": "HS256", "typ": "JWT"})
        payload = enc({"sub": self.uuid(), "iat": self.rng.randint(1_600_000_000, 1_750_000_000),
                       "role": "service"})
        return f"{header}.{payload}.{self.mixed(URLSAFE, 43)}"

    def pem(self, label: str = "RSA PRIVATE KEY", lines: int = 12) -> tuple[str, list[str]]:
        body = [self.chars(B64, 64) for _ in range(lines)] + [self.chars(B64, 28) + "=="]
        return f"-----BEGIN {label}-----\n" + "\n".join(body) + f"\n-----END {label}-----", body

    def b64(self, raw: bytes) -> str:
        return base64.b64encode(raw).decode()

    # ---------------------------------------------------------------- registration

    def s(self, kind: str, value: str, placement: str, fragments: list[str] | None = None) -> str:
        self.manifest.secrets.append(Planted(kind, value, self._file, placement,
                                             fragments or [value]))
        return value

    def d(self, kind: str, value: str) -> str:
        self.manifest.decoys.append(Decoy(kind, value, self._file))
        return value

    def write(self, path: str, build: object) -> None:
        self._file = path
        text = build() if callable(build) else str(build)
        self.files[path] = text

    # ---------------------------------------------------------------- files

    def build(self) -> None:
        for path, fn in [
            ("app/settings.py", self.f_settings_py),
            ("app/integrations/github_client.py", self.f_github_client),
            ("app/notify.py", self.f_notify),
            ("app/cache.py", self.f_cache),
            ("app/db.py", self.f_db),
            ("app/assets.py", self.f_assets),
            ("app/crypto.py", self.f_crypto),
            ("web/src/config.js", self.f_config_js),
            ("web/src/api.js", self.f_api_js),
            ("services/worker/main.go", self.f_main_go),
            (".env", self.f_env),
            (".env.example", self.f_env_example),
            ("config/app.yaml", self.f_app_yaml),
            ("config/settings.toml", self.f_settings_toml),
            ("config/app.ini", self.f_app_ini),
            ("config/aws/credentials", self.f_aws_credentials),
            ("deploy/docker/config.json", self.f_docker_config),
            ("deploy/k8s/secrets.yaml", self.f_k8s_yaml),
            ("deploy/k8s/api-secret.json", self.f_k8s_json),
            ("deploy/docker-compose.yml", self.f_compose),
            ("deploy/terraform/main.tf", self.f_terraform),
            ("scripts/deploy.sh", self.f_deploy_sh),
            ("docs/setup.md", self.f_setup_md),
            ("README.md", self.f_readme),
            ("keys/deploy_key", self.f_deploy_key),
            ("certs/server.key", self.f_server_key),
            ("config/service-account.json", self.f_service_account),
            ("web/package-lock.json", self.f_package_lock),
            (".npmrc", self.f_npmrc),
            (".pypirc", self.f_pypirc),
            ("config/appsettings.json", self.f_appsettings),
        ]:
            self.write(path, fn)

    def f_settings_py(self) -> str:
        secret_key = self.s("password", self.password(50, "!%^*-_=+().~"), "python: SECRET_KEY")
        db_pw = self.s("password", self.password(), "python: dict literal PASSWORD")
        stripe = self.s("stripe_key", "sk_live_" + self.mixed(ALNUM, 24), "python: assignment")
        sendgrid = self.s("sendgrid_key", f"SG.{self.mixed(URLSAFE, 22)}.{self.mixed(URLSAFE, 43)}",
                          "python: assignment")
        aws_id = self.s("aws_access_key_id", self.aws_id(), "python: assignment")
        aws_secret = self.s("aws_secret_access_key", self.aws_secret(), "python: assignment")
        ex_id = self.d("aws_example", "AKIAIOSFODNN7EXAMPLE")
        ex_secret = self.d("aws_example", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
        version = self.d("version", "4.2.17")
        request_id = self.d("uuid", self.uuid())
        return f'''"""Django settings for shopfront."""
import os

__version__ = "{version}"
DEBUG = False
SECRET_KEY = "{secret_key}"
ALLOWED_HOSTS = ["shopfront.internal"]

DATABASES = {{
    "default": {{
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "shop",
        "USER": "shop_app",
        "PASSWORD": "{db_pw}",
        "HOST": "db.internal",
    }},
    "replica": {{
        "ENGINE": "django.db.backends.postgresql",
        "PASSWORD": os.environ["REPLICA_DB_PASSWORD"],
    }},
}}

STRIPE_API_KEY = "{stripe}"
SENDGRID_API_KEY = "{sendgrid}"
AWS_ACCESS_KEY_ID = "{aws_id}"
AWS_SECRET_ACCESS_KEY = "{aws_secret}"

# The AWS docs' example pair, used by the moto-based tests:
TEST_AWS_ACCESS_KEY_ID = "{ex_id}"
TEST_AWS_SECRET_ACCESS_KEY = "{ex_secret}"

GITHUB_TOKEN = os.environ.get("GITHUB_TOKEN", "")
PASSWORD_MIN_LENGTH = 12
DEFAULT_REQUEST_ID = "{request_id}"
'''

    def f_github_client(self) -> str:
        tok = self.github()
        a, b = tok[:14], tok[14:]
        self.s("github_token", tok, "python: split across adjacent literals on two lines", [a, b])
        oauth = self.s("github_token", self.github("gho_"), "python: call argument")
        old = self.s("github_token", self.github_pat(), "python: comment")
        commit = self.d("git_sha", self.hexs(40))
        return f'''from github import Github

# Bot token for the release job (TODO: move to the vault)
RELEASE_TOKEN = ("{a}"
                 "{b}")

# old PAT, revoked? {old}
PINNED_COMMIT = "{commit}"


def client() -> Github:
    return Github("{oauth}")


def headers(token: str) -> dict[str, str]:
    return {{"Authorization": f"token {{token}}"}}
'''

    def f_notify(self) -> str:
        t, b, k = self.chars(UPPER_NUM, 8), self.chars(UPPER_NUM, 10), self.mixed(ALNUM, 24)
        slack = self.s("slack_webhook", f"https://hooks.slack.com/services/T{t}/B{b}/{k}",
                       "python: URL constant", [k])
        did, dtok = self.chars(string.digits, 18), self.mixed(URLSAFE, 68)
        discord = self.s("discord_webhook", f"https://discord.com/api/webhooks/{did}/{dtok}",
                         "python: URL constant", [dtok])
        hx = self.hexs(32)
        teams = self.s("teams_webhook",
                       f"https://contoso.webhook.office.com/webhookb2/{self.uuid()}@{self.uuid()}"
                       f"/IncomingWebhook/{hx}/{self.uuid()}", "python: URL constant", [hx])
        tg = self.s("telegram_bot_token",
                    f"{self.chars(string.digits, 10)}:AA{self.mixed(URLSAFE, 33)}",
                    "python: inside a URL path")
        slack_bot = self.s("slack_token", self.slack_token("b"), "python: keyword argument")
        placeholder = self.d("placeholder",
                             "https://hooks.slack.com/services/XXXXXXXXX/XXXXXXXXXXX/XXXXXXXXXXXXXXXXXXXXXXXX")
        return f'''import requests
from slack_sdk import WebClient

SLACK_WEBHOOK = "{slack}"
DISCORD_WEBHOOK = "{discord}"
TEAMS_WEBHOOK = "{teams}"
# docs: set SLACK_WEBHOOK to something like {placeholder}


def telegram(text: str) -> None:
    requests.post("https://api.telegram.org/bot{tg}/sendMessage", json={{"text": text}})


client = WebClient(token="{slack_bot}")
'''

    def f_cache(self) -> str:
        pw = self.password(24, "-_.~")
        self.s("url_credentials", f"redis://:{pw}@cache.internal:6379/0", "python: redis URL", [pw])
        plain = self.d("url_no_credentials", "redis://cache.internal:6379/1")
        return f'''import redis

SESSIONS = redis.Redis.from_url("redis://:{pw}@cache.internal:6379/0")
RATE_LIMITS = redis.Redis.from_url("{plain}")
'''

    def f_db(self) -> str:
        pw1 = self.password(16, "-_.~")
        self.s("url_credentials", f"mysql+pymysql://root:{pw1}@localhost/shop",
               "python: SQLAlchemy URL", [pw1])
        pw2 = self.password(16, "!%^*-_+.")
        self.s("password", pw2, "python: libpq DSN string")
        pw3 = self.password(20)
        self.s("password", pw3, "python: keyword argument")
        return f'''import psycopg2
from sqlalchemy import create_engine

engine = create_engine("mysql+pymysql://root:{pw1}@localhost/shop")


def connect():
    return psycopg2.connect("dbname=shop user=shop_app host=db.internal password={pw2}")


def admin():
    return psycopg2.connect(dbname="shop", user="admin", password="{pw3}")
'''

    def f_assets(self) -> str:
        png = self.d("base64_data", self.b64(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
                                             + bytes(self.rng.getrandbits(8) for _ in range(60))))
        text = self.d("base64_data", self.b64(b"Thanks for your order! We will email you when it ships."))
        sha = self.d("sha256", self.hexs(64))
        git = self.d("git_sha", self.hexs(40))
        gz = self.d("base64_data", self.b64(b"\x1f\x8b\x08\x00" + bytes(self.rng.getrandbits(8)
                                                                      for _ in range(45))))
        return f'''"""Inline assets for the e-mail templates."""

LOGO_PNG = "{png}"
ORDER_BANNER = "{text}"
FONT_SUBSET_GZ = "{gz}"
TEMPLATE_SHA256 = "{sha}"
BUILT_FROM = "{git}"
'''

    def f_crypto(self) -> str:
        key = self.s("high_entropy", self.b64(bytes(self.rng.getrandbits(8) for _ in range(32))),
                     "python: bytes literal under ENCRYPTION_KEY")
        old = self.s("stripe_key", "rk_live_" + self.mixed(ALNUM, 24), "python: comment")
        salt = self.s("high_entropy", self.mixed(ALNUM, 22), "python: HASH_SALT")
        nonce_doc = self.d("uuid", self.uuid())
        return f'''from cryptography.fernet import Fernet

ENCRYPTION_KEY = b"{key}"
HASH_SALT = "{salt}"
NONCE_SIZE = 12
# rotated 2024-03-02; the previous restricted key was {old}
EXAMPLE_CORRELATION_ID = "{nonce_doc}"
'''

    def f_config_js(self) -> str:
        openai = self.s("openai_key", "sk-proj-" + self.mixed(URLSAFE, 64), "js: object literal")
        google = self.s("google_api_key", "AIzaSy" + self.mixed(URLSAFE, 33), "js: object literal")
        ant = "sk-ant-api03-" + self.mixed(URLSAFE, 80) + "AA"
        a, b = ant[:30], ant[30:]
        self.s("anthropic_key", ant, "js: split with + concatenation", [a, b])
        pw = self.password(20, "-_.~")
        self.s("url_credentials", f"mongodb+srv://shop:{pw}@cluster0.ab1cd.mongodb.net/shop",
               "js: mongodb+srv URL", [pw])
        pk = self.d("publishable_key", "pk_live_" + self.mixed(ALNUM, 24))
        api = self.d("url_no_credentials", "https://api.shopfront.example.org/v2/")
        env = self.d("env_lookup", "process.env.ANALYTICS_TOKEN")
        return f'''export const config = {{
  apiBase: "{api}",
  openaiApiKey: "{openai}",
  mapsKey: '{google}',
  stripePublishableKey: "{pk}",
  analyticsToken: {env},
  mongoUrl: "mongodb+srv://shop:{pw}@cluster0.ab1cd.mongodb.net/shop",
}};

export const anthropicKey = "{a}" +
  "{b}";
'''

    def f_api_js(self) -> str:
        jwt = self.s("jwt", self.jwt(), "js: hard-coded bearer token")
        mc = self.s("mailchimp_key", f"{self.hexs(32)}-us{self.rng.randint(1, 21)}",
                    "js: const")
        ver = self.d("version", "2.0.0-rc.1+build.20240611")
        return f'''const SERVICE_JWT = '{jwt}';
const mailchimpKey = '{mc}';
export const CLIENT_VERSION = "{ver}";

export async function orders(token) {{
  return fetch("/api/orders", {{ headers: {{ Authorization: `Bearer ${{token}}` }} }});
}}
'''

    def f_main_go(self) -> str:
        pw = self.s("password", self.password(18, "!%^*-_=+.~"), "go: const")
        apw = self.password(16, "-_.~")
        self.s("url_credentials", f"amqp://worker:{apw}@rabbitmq.internal:5672/",
               "go: amqp URL", [apw])
        twilio = self.s("twilio_key", "SK" + self.hexs(32), "go: struct literal")
        hf = self.s("huggingface_token", "hf_" + self.mixed(ALNUM, 34), "go: :=")
        gl = "glpat-" + self.mixed(URLSAFE, 20)
        a, b = gl[:12], gl[12:]
        self.s("gitlab_token", gl, "go: split with + on one line", [a, b])
        lookup = self.d("env_lookup", 'os.Getenv("DB_PASSWORD")')
        plain = self.d("url_no_credentials", "amqp://rabbitmq.internal:5672/%2f")
        return f'''package main

import "os"

const dbPassword = "{pw}"

var fallbackPassword = {lookup}

type Twilio struct{{ KeySID string }}

func main() {{
	broker := "amqp://worker:{apw}@rabbitmq.internal:5672/"
	local := "{plain}"
	t := Twilio{{KeySID: "{twilio}"}}
	hfToken := "{hf}"
	gitlab := "{a}" + "{b}"
	_, _, _, _, _ = broker, local, t, hfToken, gitlab
}}
'''

    def f_env(self) -> str:
        pw = self.password(20, "-_.~")
        self.s("url_credentials", f"postgres://shop:{pw}@db.internal:5432/shop", ".env: URL", [pw])
        jwt_secret = self.s("password", self.mixed(ALNUM, 48), ".env: JWT_SECRET")
        session = self.s("password", self.password(32, "-_.~"), ".env: SESSION_SECRET")
        gitlab = self.s("gitlab_token", "glpat-" + self.mixed(URLSAFE, 20), ".env: GITLAB_TOKEN")
        twilio = self.s("twilio_key", self.hexs(32), ".env: TWILIO_AUTH_TOKEN (hex)")
        vault = self.s("vault_token", "hvs." + self.mixed(URLSAFE, 90), ".env: VAULT_TOKEN")
        rpw = self.password(22, "-_.~")
        self.s("url_credentials", f"redis://default:{rpw}@redis.internal:6379", ".env: REDIS_URL",
               [rpw])
        smtp = self.s("password", self.password(14, "!%^*-_=+.~"), ".env: SMTP_PASSWORD")
        hf = self.s("huggingface_token", "hf_" + self.mixed(ALNUM, 34), ".env: export HF_TOKEN")
        base = self.d("url_no_credentials", "https://api.shopfront.example.org")
        return f'''APP_ENV=production
LOG_LEVEL=info
API_BASE_URL={base}
DATABASE_URL=postgres://shop:{pw}@db.internal:5432/shop
JWT_SECRET={jwt_secret}
SESSION_SECRET="{session}"
GITLAB_TOKEN={gitlab}
TWILIO_AUTH_TOKEN={twilio}
VAULT_TOKEN={vault}
REDIS_URL=redis://default:{rpw}@redis.internal:6379
SMTP_PASSWORD='{smtp}'
export HF_TOKEN={hf}
'''

    def f_env_example(self) -> str:
        a = self.d("placeholder", "your-api-key-here")
        b = self.d("placeholder", "${POSTGRES_PASSWORD}")
        c = self.d("placeholder", "<your-github-token>")
        e = self.d("placeholder", "sk_live_xxxxxxxxxxxxxxxxxxxxxxxx")
        f = self.d("placeholder", "REPLACE_ME")
        return f'''# Copy to .env and fill in
OPENAI_API_KEY={a}
DB_PASSWORD={b}
GITHUB_TOKEN={c}
STRIPE_API_KEY={e}
SENDGRID_API_KEY={f}
'''

    def f_app_yaml(self) -> str:
        pw = self.s("password", self.password(16, "-_.~"), "yaml: unquoted password")
        api = self.s("password", self.mixed(ALNUM, 32), "yaml: quoted api_key")
        signing = self.s("high_entropy", self.mixed(B64, 44), "yaml: signing_key")
        apw = self.password(16, "-_.~")
        self.s("url_credentials", f"amqps://events:{apw}@mq.internal:5671/events",
               "yaml: amqps URL", [apw])
        slack = self.s("slack_token", self.slack_token("p"), "yaml: slack user token")
        ttl = self.d("config_number", "token_ttl_seconds: 3600")
        reset = self.d("url_no_credentials", "https://shop.example.org/account/password-reset")
        tmpl = self.d("placeholder", "{{ .Values.mail.password }}")
        return f'''database:
  host: db.internal
  user: shop_app
  password: {pw}
payments:
  api_key: "{api}"
auth:
  signing_key: {signing}
  {ttl}
  password_reset_url: {reset}
events:
  broker_url: amqps://events:{apw}@mq.internal:5671/events
mail:
  password: "{tmpl}"
slack:
  user_token: {slack}
'''

    def f_settings_toml(self) -> str:
        pw = self.s("password", self.password(18, "!%^*-_=+.~"), "toml: password")
        jwt = self.s("high_entropy", self.mixed(URLSAFE, 40), "toml: jwt_secret")
        acct = self.b64(bytes(self.rng.getrandbits(8) for _ in range(64)))
        self.s("azure_storage_key", acct, "toml: Azure connection string AccountKey")
        sha = self.d("sha256", self.hexs(64))
        return f'''[database]
host = "db.internal"
password = "{pw}"

[auth]
jwt_secret = "{jwt}"
algorithm = "HS256"

[storage]
connection_string = "DefaultEndpointsProtocol=https;AccountName=shopassets;AccountKey={acct};EndpointSuffix=core.windows.net"

[release]
artifact_sha256 = "{sha}"
'''

    def f_app_ini(self) -> str:
        pw = self.password(16, "-_.~")
        self.s("url_credentials", f"postgresql://alembic:{pw}@db.internal/shop",
               "ini: sqlalchemy.url", [pw])
        smtp = self.s("password", self.password(16, "!%^*-_=+.~"), "ini: smtp password")
        api = self.s("password", self.mixed(ALNUM, 40), "ini: api_token")
        ref = self.d("placeholder", "%(SMTP_PASSWORD)s")
        return f'''[alembic]
script_location = migrations
sqlalchemy.url = postgresql://alembic:{pw}@db.internal/shop

[smtp]
host = smtp.internal
user = mailer
password = {smtp}
fallback_password = {ref}

[shipping]
api_token = {api}
'''

    def f_aws_credentials(self) -> str:
        a = self.s("aws_access_key_id", self.aws_id(), "ini: aws credentials file")
        b = self.s("aws_secret_access_key", self.aws_secret(), "ini: aws credentials file")
        return f'''[default]
aws_access_key_id = {a}
aws_secret_access_key = {b}
region = eu-west-1
'''

    def f_docker_config(self) -> str:
        auth1 = self.s("docker_auth", self.b64(f"deploy:{self.password(20, '-_.~!')}".encode()),
                       "docker config.json auth")
        auth2 = self.s("docker_auth",
                       self.b64(f"_json_key:{self.mixed(ALNUM, 40)}".encode()),
                       "docker config.json auth (second registry)")
        return f'''{{
  "auths": {{
    "registry.shopfront.example.org": {{
      "auth": "{auth1}"
    }},
    "europe-docker.pkg.dev": {{
      "auth": "{auth2}"
    }},
    "ghcr.io": {{}}
  }},
  "credsStore": "desktop"
}}
'''

    def f_k8s_yaml(self) -> str:
        p1 = self.s("k8s_secret", self.b64(self.password(18, "-_.~!").encode()),
                    "k8s Secret data (base64)")
        p2 = self.s("k8s_secret", self.b64(self.mixed(ALNUM, 32).encode()),
                    "k8s Secret data (base64, quoted)")
        p3 = self.s("k8s_secret", self.password(20, "-_.~"), "k8s Secret stringData")
        inner = self.password(16, "-_.~")
        self.s("k8s_secret", inner, "k8s Secret stringData block scalar", [inner])
        user = self.b64(b"shop_app")  # a Secret's data is all secret: no decoy here
        level = self.d("config", "LOG_LEVEL: debug")
        helm = self.d("placeholder", "{{ .Values.db.password | b64enc }}")
        uid = self.d("uuid", self.uuid())
        return f'''apiVersion: v1
kind: Secret
metadata:
  name: shop-db
  uid: {uid}
type: Opaque
data:
  username: {user}
  password: {p1}
  api-key: "{p2}"
stringData:
  REDIS_PASSWORD: {p3}
  app.ini: |
    [db]
    password = {inner}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: shop-config
data:
  {level}
---
apiVersion: v1
kind: Secret
metadata:
  name: shop-db-templated
data:
  password: {helm}
'''

    def f_k8s_json(self) -> str:
        v = self.s("k8s_secret", self.b64(self.mixed(ALNUM, 40).encode()), "k8s Secret JSON data")
        return f'''{{
  "apiVersion": "v1",
  "kind": "Secret",
  "metadata": {{"name": "api-token"}},
  "type": "Opaque",
  "data": {{
    "token": "{v}"
  }}
}}
'''

    def f_compose(self) -> str:
        pg = self.s("password", self.password(20, "-_.~"), "compose: environment map")
        rp = self.s("password", self.password(20, "-_.~"), "compose: environment list")
        digest = self.d("sha256", self.hexs(64))
        return f'''services:
  db:
    image: postgres@sha256:{digest}
    environment:
      POSTGRES_PASSWORD: {pg}
      POSTGRES_USER: shop
  cache:
    image: redis:7
    environment:
      - REDIS_PASSWORD={rp}
'''

    def f_terraform(self) -> str:
        pw = self.s("password", self.password(20, "!%^*-_=+.~"), "terraform: resource argument")
        arn = self.d("arn", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/shop-db-Ab12Cd")
        return f'''resource "aws_db_instance" "shop" {{
  engine   = "postgres"
  username = "shop"
  password = "{pw}"
}}

data "aws_secretsmanager_secret" "db" {{
  arn = "{arn}"
}}
'''

    def f_deploy_sh(self) -> str:
        gh = self.s("github_token", self.github(), "shell: export")
        bearer = self.s("bearer_token", self.mixed(URLSAFE + ".", 40), "shell: curl -H Bearer")
        upw = self.password(14, "-_.~")
        self.s("basic_auth", upw, "shell: curl -u user:pass")
        pgpw = self.s("password", self.password(16, "-_.~"), "shell: PGPASSWORD= prefix")
        npm = self.s("npm_token", self.npm(), "shell: echo into .npmrc")
        dpw = self.s("password", self.password(18, "-_.~"), "shell: --password flag")
        git = self.d("git_sha", self.hexs(40))
        return f'''#!/usr/bin/env bash
set -euo pipefail
export GITHUB_TOKEN={gh}
RELEASE={git}

curl -fsS -H "Authorization: Bearer {bearer}" https://deploy.internal/api/releases
curl -fsS -u deployer:{upw} https://nexus.internal/service/rest/v1/status
PGPASSWORD={pgpw} psql -h db.internal -U shop -c 'select 1'
echo "//registry.npmjs.org/:_authToken={npm}" > ~/.npmrc
docker login registry.shopfront.example.org --username deploy --password={dpw}
echo "token is $GITHUB_TOKEN"
'''

    def f_setup_md(self) -> str:
        token = self.s("slack_token", self.slack_token("b"), "markdown: prose in a list")
        basic = self.b64(f"ops:{self.password(14, '-_.~')}".encode())
        self.s("basic_auth", basic, "markdown: curl Basic header")
        pem, body = self.pem("EC PRIVATE KEY", 3)
        self.s("private_key", pem, "markdown: PEM in a code fence", body)
        pw = self.password(16, "-_.~")
        self.s("url_credentials", f"https://ci-bot:{pw}@git.internal/shop/shop.git",
               "markdown: https URL with user:pass", [pw])
        ex = self.d("aws_example", "AKIAIOSFODNN7EXAMPLE")
        ph = self.d("placeholder", "<your-token>")
        plain = self.d("url_no_credentials", "https://git.internal/shop/shop.git")
        commit = self.d("git_sha", self.hexs(40))
        return f'''# Setup

1. Ask ops for the bot token (ours is {token}).
2. Check the registry:

```sh
curl -H "Authorization: Basic {basic}" https://nexus.internal/
curl -H "Authorization: Bearer {ph}" https://api.internal/
git clone https://ci-bot:{pw}@git.internal/shop/shop.git
git clone {plain}
```

The AWS example key `{ex}` works with the local stack.
Fixed in commit {commit}.

```
{pem}
```
'''

    def f_readme(self) -> str:
        openai = self.s("openai_key", "sk-" + self.mixed(ALNUM, 48), "markdown: inline code")
        uid = self.d("uuid", self.uuid())
        ver = self.d("version", "v3.11.7")
        return f'''# shopfront

Release {ver}. Tenant id `{uid}`.

Run with `OPENAI_API_KEY={openai} make demo` (that key is the team's shared one).
'''

    def f_deploy_key(self) -> str:
        pem, body = self.pem("OPENSSH PRIVATE KEY", 7)
        self.s("private_key", pem, "file: OpenSSH private key", body)
        return pem + "\n"

    def f_server_key(self) -> str:
        pem, body = self.pem("RSA PRIVATE KEY", 12)
        self.s("private_key", pem, "file: RSA private key", body)
        return pem + "\n"

    def f_service_account(self) -> str:
        pem, body = self.pem("PRIVATE KEY", 8)
        escaped = pem.replace("\n", "\\n") + "\\n"
        self.s("private_key", pem, "json: escaped PEM in a service account", body)
        key_id = self.d("key_id", self.hexs(40))  # names the key, like a fingerprint
        email = self.d("email", "deployer@shopfront-prod.iam.gserviceaccount.com")
        return f'''{{
  "type": "service_account",
  "project_id": "shopfront-prod",
  "private_key_id": "{key_id}",
  "private_key": "{escaped}",
  "client_email": "{email}",
  "client_id": "{self.chars(string.digits, 21)}"
}}
'''

    def f_package_lock(self) -> str:
        i1 = self.d("integrity", "sha512-" + self.b64(bytes(self.rng.getrandbits(8) for _ in range(64))))
        i2 = self.d("integrity", "sha512-" + self.b64(bytes(self.rng.getrandbits(8) for _ in range(64))))
        commit = self.d("git_sha", self.hexs(40))
        return f'''{{
  "name": "shopfront-web",
  "lockfileVersion": 3,
  "packages": {{
    "node_modules/react": {{
      "version": "18.3.1",
      "resolved": "https://registry.npmjs.org/react/-/react-18.3.1.tgz",
      "integrity": "{i1}"
    }},
    "node_modules/left-pad": {{
      "version": "1.3.0",
      "resolved": "git+ssh://git@github.com/stevemao/left-pad.git#{commit}",
      "integrity": "{i2}"
    }}
  }}
}}
'''

    def f_npmrc(self) -> str:
        tok = self.s("npm_token", self.npm(), ".npmrc _authToken")
        return f'''registry=https://registry.npmjs.org/
//registry.npmjs.org/:_authToken={tok}
'''

    def f_pypirc(self) -> str:
        tok = self.s("pypi_token", "pypi-AgEIcHlwaS5vcmc" + self.mixed(URLSAFE, 140), ".pypirc")
        return f'''[distutils]
index-servers = pypi

[pypi]
username = __token__
password = {tok}
'''

    def f_appsettings(self) -> str:
        pw = self.password(18, "!%^*-_=+.~")
        self.s("password", pw, "json: ADO.NET connection string Password=")
        shop = self.s("shopify_token", "shpat_" + self.hexs(32), "json: nested key")
        secret = self.s("password", self.mixed(URLSAFE, 36), "json: ClientSecret")
        ai = self.d("uuid", self.uuid())
        return f'''{{
  "ConnectionStrings": {{
    "Shop": "Server=tcp:shop.database.windows.net,1433;Database=shop;User ID=shop;Password={pw};Encrypt=True;"
  }},
  "Shopify": {{ "AdminApiAccessToken": "{shop}" }},
  "AzureAd": {{ "ClientId": "{ai}", "ClientSecret": "{secret}" }}
}}
'''


def build(out: Path, seed: int = 20240611) -> Manifest:
    """Write the corpus under ``out`` (created), plus ``out/manifest.json``; return the manifest."""
    corpus = Corpus(seed)
    corpus.build()
    for rel, text in corpus.files.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (out / "manifest.json").write_text(json.dumps(corpus.manifest.to_json(), indent=1),
                                       encoding="utf-8")
    return corpus.manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=20240611)
    args = parser.parse_args(argv)
    m = build(args.out, args.seed)
    kinds = {s.kind for s in m.secrets}
    print(f"{len(m.secrets)} secrets of {len(kinds)} kinds, {len(m.decoys)} decoys -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
