"""A generated project of planted FAKE secrets in many placements, with decoys, and its manifest.

Why: recall and false positives are only worth reporting on secrets the scrubber was not tuned on.
Each placement below is one realistic way a secret lands in a repository (a language's
concatenated literals, a connection URL, a compose file's command line, prose in a comment, a
Markdown table, a file named after a token...), written from how such files look in the wild, not
from acms's rules. Every value is drawn at run time from a seeded generator: random characters of
the right shape, nothing real. Decoys are what must survive: placeholders, templates, environment
lookups, hashes, UUIDs, documented example keys, prose about passwords, port flags.

    python bench/secret_placements.py OUT_DIR [--seed N]

``OUT_DIR/manifest.json``: per placement its kind, file, the secrets (kind and the fragments that
must be gone from every output) and the decoys (values that must still be in the scrubbed file).
``secret_names`` lists the planted file and folder names that must not show on any surface.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import random
import string
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from installed import as_installed

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"


@dataclass
class Secret:
    kind: str
    fragments: list[str]  # each must be gone from every output


@dataclass
class Placement:
    """One file with what was planted in it."""

    kind: str  # the placement (where and how the secret sits)
    path: str
    text: str
    secrets: list[Secret] = field(default_factory=list)
    decoys: list[str] = field(default_factory=list)  # must survive scrubbing
    name_secret: str = ""  # a secret that is (part of) the file's own path


class Gen:
    """Seeded random values of realistic shapes."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def mixed(self, n: int) -> str:
        """Letters and digits with each class present (what generated keys look like)."""
        while True:
            v = self.chars(ALNUM, n)
            if any(c.isdigit() for c in v) and any(c.islower() for c in v) and any(c.isupper() for c in v):
                return v

    def password(self) -> str:
        """A human-made but strong password: words, digits and a symbol."""
        word = self.r.choice(["Falcon", "river", "Copper", "maple", "Quartz", "tiger", "Nimbus", "cedar"])
        return f"{word}{self.r.randint(10, 99)}{self.r.choice('!#%&*-_.')}{self.chars(ALNUM, 5)}"

    def github(self) -> str:
        return "ghp_" + self.mixed(36)

    def gitlab(self) -> str:
        return "glpat-" + self.chars(URLSAFE, 20)

    def slack(self) -> str:
        return f"xoxb-{self.r.randint(10**10, 10**11)}-{self.r.randint(10**10, 10**11)}-{self.mixed(24)}"

    def stripe(self) -> str:
        return "sk_live_" + self.mixed(24)

    def openai(self) -> str:
        return "sk-proj-" + self.mixed(48)

    def aws_id(self) -> str:
        return "AKIA" + self.chars(string.ascii_uppercase + "234567", 16)

    def aws_secret(self) -> str:
        return self.chars(B64, 40)

    def google(self) -> str:
        return "AIza" + self.chars(URLSAFE, 35)

    def npm(self) -> str:
        return "npm_" + self.mixed(36)

    def pypi(self) -> str:
        return "pypi-AgEIcHlwaS5vcmc" + self.chars(URLSAFE, 60)

    def hf(self) -> str:
        return "hf_" + self.mixed(34)

    def sendgrid(self) -> str:
        return f"SG.{self.chars(URLSAFE, 22)}.{self.chars(URLSAFE, 43)}"

    def jwt(self) -> str:
        head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
        body = base64.urlsafe_b64encode(
            json.dumps({"sub": self.chars(HEX, 12), "iat": self.r.randint(1_600_000_000, 1_800_000_000)}).encode()).decode().rstrip("=")
        return f"{head}.{body}.{self.chars(URLSAFE, 43)}"

    def hexkey(self, n: int = 32) -> str:
        return self.chars(HEX, n)

    def sha256(self) -> str:
        return hashlib.sha256(self.chars(ALNUM, 20).encode()).hexdigest()

    def pem(self) -> tuple[str, list[str]]:
        lines = [self.chars(B64, 64) for _ in range(8)]
        block = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----"
        return block, lines


def _split(v: str, at: int) -> list[str]:
    return [v[:at], v[at:]]


P = Callable[[Gen], Placement]
PLACEMENTS: list[P] = []


def placement(fn: P) -> P:
    PLACEMENTS.append(fn)
    return fn


# ---------------------------------------------------------------------------------- Python


@placement
def py_module_constant(g: Gen) -> Placement:
    t = g.github()
    return Placement("py_module_constant", "svc/github_client.py",
                     f'import requests\n\nGITHUB_TOKEN = "{t}"\n\n\ndef repos():\n'
                     f'    return requests.get("https://api.github.com/user/repos",\n'
                     f'                        headers={{"Authorization": f"token {{GITHUB_TOKEN}}"}})\n',
                     [Secret("github_token", [t])], ["https://api.github.com/user/repos"])


@placement
def py_implicit_concat(g: Gen) -> Placement:
    t = g.slack()
    a, b = _split(t, 19)
    return Placement("py_implicit_concat", "svc/notify.py",
                     f'SLACK_BOT = (\n    "{a}"\n    "{b}"\n)\nCHANNEL = "#deploys"\n',
                     [Secret("slack_token", [a, b])], ["#deploys"])


@placement
def py_plus_concat_generic(g: Gen) -> Placement:
    v = g.mixed(32)
    a, b = _split(v, 14)
    return Placement("py_plus_concat_generic", "svc/signing.py",
                     f'signing_key = "{a}" + "{b}"\n\ndef sign(msg):\n    return hmac.new(signing_key.encode(), msg, "sha256")\n',
                     [Secret("credential", [a, b])], ['"sha256"'])


@placement
def py_dict_password(g: Gen) -> Placement:
    pw = g.password()
    return Placement("py_dict_password", "svc/db_settings.py",
                     f'DATABASES = {{\n    "default": {{\n        "ENGINE": "django.db.backends.postgresql",\n'
                     f'        "NAME": "shop",\n        "USER": "shop",\n        "PASSWORD": "{pw}",\n'
                     f'        "HOST": "db.internal",\n    }}\n}}\n',
                     [Secret("password", [pw])], ["django.db.backends.postgresql", "db.internal"])


@placement
def py_connect_kwarg(g: Gen) -> Placement:
    pw = g.password()
    return Placement("py_connect_kwarg", "jobs/export_orders.py",
                     f'import psycopg2\n\nconn = psycopg2.connect(host="replica", dbname="orders", user="exporter",\n'
                     f'                        password="{pw}")\n',
                     [Secret("password", [pw])], ['dbname="orders"'])


@placement
def py_redis_url(g: Gen) -> Placement:
    pw = g.mixed(20)
    return Placement("py_redis_url", "svc/cache.py",
                     f'import redis\n\ncache = redis.Redis.from_url("redis://:{pw}@cache.internal:6379/2")\n',
                     [Secret("url_credentials", [pw])], ["cache.internal:6379/2"])


@placement
def py_sqlalchemy_url(g: Gen) -> Placement:
    pw = g.password()
    return Placement("py_sqlalchemy_url", "svc/models.py",
                     f'from sqlalchemy import create_engine\n\nengine = create_engine(\n'
                     f'    "postgresql+psycopg2://reporting:{pw}@analytics.internal:5432/warehouse", pool_size=5)\n',
                     [Secret("url_credentials", [pw])], ["analytics.internal:5432/warehouse"])


@placement
def py_celery_amqp(g: Gen) -> Placement:
    pw = g.mixed(18)
    return Placement("py_celery_amqp", "svc/celeryconfig.py",
                     f"broker_url = 'amqp://celery:{pw}@rabbitmq.internal:5672/prod'\nresult_backend = 'rpc://'\n",
                     [Secret("url_credentials", [pw])], ["rabbitmq.internal:5672/prod", "rpc://"])


@placement
def py_comment_prose(g: Gen) -> Placement:
    pw = g.password()
    return Placement("py_comment_prose", "scripts/seed_staging.py",
                     f"# Seeds the staging database.\n# The staging admin password is {pw} (ask ops before rotating).\n"
                     "def seed():\n    pass\n",
                     [Secret("password", [pw])], ["Seeds the staging database."])


@placement
def py_docstring_prose(g: Gen) -> Placement:
    pw = g.password()
    return Placement("py_docstring_prose", "scripts/migrate_users.py",
                     f'def migrate():\n    """Move the users to the new cluster.\n\n'
                     f'    Log in to the old cluster with password: {pw} and run it once.\n    """\n',
                     [Secret("password", [pw])], ["Move the users to the new cluster."])


@placement
def py_commented_out_key(g: Gen) -> Placement:
    k = g.hexkey(32)
    return Placement("py_commented_out_key", "svc/weather.py",
                     f'API_KEY = os.environ["WEATHER_API_KEY"]\n# API_KEY = "{k}"  # old key, keep for local runs\n',
                     [Secret("credential", [k])], ['os.environ["WEATHER_API_KEY"]'])


@placement
def py_subprocess_flag(g: Gen) -> Placement:
    pw = g.password()
    return Placement("py_subprocess_flag", "scripts/backup.py",
                     f'import subprocess\n\nsubprocess.run(["mysqldump", "--user", "backup", "--password", "{pw}", "shop"],\n'
                     f'               check=True)\n',
                     [Secret("password", [pw])], ['"mysqldump"'])


@placement
def py_getenv_default(g: Gen) -> Placement:
    k = g.stripe()
    return Placement("py_getenv_default", "svc/payments.py",
                     f'import os\n\nSTRIPE_KEY = os.getenv("STRIPE_KEY", "{k}")\n',
                     [Secret("stripe_key", [k])], ['os.getenv("STRIPE_KEY"'])


@placement
def py_django_secret_key(g: Gen) -> Placement:
    k = g.chars(ALNUM + "!@#$%^&*(-_=+)", 50)
    return Placement("py_django_secret_key", "site/settings.py",
                     f"DEBUG = False\nSECRET_KEY = '{k}'\nALLOWED_HOSTS = ['shop.example.com']\n",
                     [Secret("credential", [k])], ["shop.example.com"])


@placement
def py_boto3_pair(g: Gen) -> Placement:
    i, s = g.aws_id(), g.aws_secret()
    return Placement("py_boto3_pair", "jobs/upload.py",
                     f'import boto3\n\ns3 = boto3.client("s3", aws_access_key_id="{i}",\n'
                     f'                  aws_secret_access_key="{s}", region_name="eu-west-1")\n',
                     [Secret("aws_access_key_id", [i]), Secret("aws_secret_access_key", [s])], ['"eu-west-1"'])


@placement
def py_test_fixture_jwt(g: Gen) -> Placement:
    t = g.jwt()
    return Placement("py_test_fixture_jwt", "tests/test_auth.py",
                     f'SESSION = "{t}"\n\n\ndef test_session_is_parsed():\n    assert parse(SESSION)\n',
                     [Secret("jwt", [t])], ["def test_session_is_parsed():"])


# ---------------------------------------------------------------------------------- JS / TS


@placement
def js_plus_concat_provider(g: Gen) -> Placement:
    t = g.openai()
    a, b = _split(t, 20)
    return Placement("js_plus_concat_provider", "web/src/ai.js",
                     f'const OPENAI_KEY = "{a}" +\n  "{b}";\nexport const client = new OpenAI({{ apiKey: OPENAI_KEY }});\n',
                     [Secret("openai_key", [a, b])], ["new OpenAI({ apiKey: OPENAI_KEY })"])


@placement
def js_template_decoy_and_url(g: Gen) -> Placement:
    pw = g.mixed(16)
    return Placement("js_template_decoy_and_url", "web/src/db.ts",
                     "const uri = `mongodb+srv://${user}:${pass}@cluster0.abcde.mongodb.net/app`;\n"
                     f'const fallback = "mongodb+srv://admin:{pw}@cluster0.abcde.mongodb.net/app";\n',
                     [Secret("url_credentials", [pw])], ["mongodb+srv://${user}:${pass}@cluster0.abcde.mongodb.net/app"])


@placement
def ts_config_object(g: Gen) -> Placement:
    k = g.google()
    return Placement("ts_config_object", "web/src/firebase.ts",
                     f'export const firebaseConfig = {{\n  apiKey: "{k}",\n  authDomain: "shop-prod.firebaseapp.com",\n'
                     f'  projectId: "shop-prod",\n}};\n',
                     [Secret("google_api_key", [k])], ["shop-prod.firebaseapp.com"])


@placement
def js_fetch_header(g: Gen) -> Placement:
    k = g.mixed(32)
    return Placement("js_fetch_header", "web/src/search.js",
                     f'export async function search(q) {{\n  return fetch(`/api/search?q=${{q}}`, {{\n'
                     f'    headers: {{ "X-API-Key": "{k}" }},\n  }});\n}}\n',
                     [Secret("credential", [k])], ["/api/search?q="])


@placement
def js_comment_prose(g: Gen) -> Placement:
    pw = g.password()
    return Placement("js_comment_prose", "web/src/admin.js",
                     f"// TODO remove: the admin password is {pw}\nexport function isAdmin(u) {{ return u.role === 'admin'; }}\n",
                     [Secret("password", [pw])], ["u.role === 'admin'"])


@placement
def js_env_fallback(g: Gen) -> Placement:
    t = g.npm()
    return Placement("js_env_fallback", "tools/publish.mjs",
                     f'const token = process.env.NPM_TOKEN || "{t}";\n',
                     [Secret("npm_token", [t])], ["process.env.NPM_TOKEN"])


@placement
def js_minified_bundle(g: Gen) -> Placement:
    k = g.stripe()
    filler = ";".join(f"var a{i}=function(b){{return b+{i}}}" for i in range(200))
    return Placement("js_minified_bundle", "web/assets/app.min.js",
                     f'{filler};var cfg={{stripeKey:"{k}",mode:"live"}};{filler}\n',
                     [Secret("stripe_key", [k])], ['mode:"live"'])


# ---------------------------------------------------------------------------------- Go, Java, C#, ...


@placement
def go_const(g: Gen) -> Placement:
    k = g.mixed(40)
    return Placement("go_const", "cmd/worker/main.go",
                     f'package main\n\nconst apiSecret = "{k}"\n\nfunc main() {{}}\n',
                     [Secret("credential", [k])], ["package main"])


@placement
def go_concat(g: Gen) -> Placement:
    t = g.gitlab()
    a, b = _split(t, 12)
    return Placement("go_concat", "internal/ci/client.go",
                     f'package ci\n\nvar token = "{a}" +\n\t"{b}"\n',
                     [Secret("gitlab_token", [a, b])], ["package ci"])


@placement
def go_mysql_dsn(g: Gen) -> Placement:
    pw = g.password()
    return Placement("go_mysql_dsn", "internal/store/db.go",
                     f'package store\n\nfunc open() (*sql.DB, error) {{\n\treturn sql.Open("mysql", "app:{pw}@tcp(db:3306)/shop?parseTime=true")\n}}\n',
                     [Secret("password", [pw])], ['sql.Open("mysql"'])


@placement
def go_struct_field(g: Gen) -> Placement:
    pw = g.password()
    return Placement("go_struct_field", "internal/mail/smtp.go",
                     f'package mail\n\nvar cfg = Config{{\n\tHost:     "smtp.internal",\n\tUsername: "mailer",\n'
                     f'\tPassword: "{pw}",\n}}\n',
                     [Secret("password", [pw])], ['"smtp.internal"'])


@placement
def java_concat(g: Gen) -> Placement:
    i = g.aws_id()
    a, b = _split(i, 8)
    return Placement("java_concat", "src/main/java/shop/Storage.java",
                     f'package shop;\n\nclass Storage {{\n    static final String KEY_ID = "{a}" + "{b}";\n}}\n',
                     [Secret("aws_access_key_id", [a, b])], ["package shop;"])


@placement
def java_properties(g: Gen) -> Placement:
    pw = g.password()
    return Placement("java_properties", "src/main/resources/application.properties",
                     f"spring.datasource.url=jdbc:postgresql://db:5432/shop\nspring.datasource.username=shop\n"
                     f"spring.datasource.password={pw}\n",
                     [Secret("password", [pw])], ["jdbc:postgresql://db:5432/shop"])


@placement
def java_jdbc_query_password(g: Gen) -> Placement:
    pw = g.mixed(14)
    return Placement("java_jdbc_query_password", "src/main/java/shop/Db.java",
                     f'class Db {{\n  String url = "jdbc:mysql://db:3306/shop?user=shop&password={pw}&useSSL=true";\n}}\n',
                     [Secret("password", [pw])], ["useSSL=true"])


@placement
def kotlin_val(g: Gen) -> Placement:
    k = g.mixed(36)
    return Placement("kotlin_val", "app/src/main/kotlin/Push.kt",
                     f'object Push {{\n    private const val serverKey = "{k}"\n}}\n',
                     [Secret("credential", [k])], ["object Push"])


@placement
def csharp_connection_string(g: Gen) -> Placement:
    pw = g.password()
    return Placement("csharp_connection_string", "Shop/appsettings.json",
                     '{\n  "ConnectionStrings": {\n'
                     f'    "Default": "Server=sql.internal;Database=Shop;User Id=shop;Password={pw};"\n  }}\n}}\n',
                     [Secret("password", [pw])], ["Server=sql.internal;Database=Shop"])


@placement
def ruby_config_assign(g: Gen) -> Placement:
    k = g.sendgrid()
    return Placement("ruby_config_assign", "config/initializers/mail.rb",
                     f"ActionMailer::Base.smtp_settings = {{\n  user_name: 'apikey',\n  password: '{k}',\n}}\n",
                     [Secret("sendgrid_key", [k])], ["ActionMailer::Base.smtp_settings"])


@placement
def php_define(g: Gen) -> Placement:
    pw = g.password()
    return Placement("php_define", "wp-config.php",
                     f"<?php\ndefine( 'DB_NAME', 'wordpress' );\ndefine( 'DB_PASSWORD', '{pw}' );\n",
                     [Secret("password", [pw])], ["define( 'DB_NAME', 'wordpress' );"])


@placement
def php_dot_concat(g: Gen) -> Placement:
    k = g.stripe()
    a, b = _split(k, 14)
    return Placement("php_dot_concat", "src/Billing.php",
                     f"<?php\n$stripeKey = '{a}' . '{b}';\n",
                     [Secret("stripe_key", [a, b])], ["<?php"])


@placement
def rust_string_from(g: Gen) -> Placement:
    t = g.hf()
    return Placement("rust_string_from", "src/hub.rs",
                     f'fn token() -> String {{\n    let token = String::from("{t}");\n    token\n}}\n',
                     [Secret("huggingface_token", [t])], ["fn token() -> String"])


@placement
def swift_let(g: Gen) -> Placement:
    k = g.mixed(40)
    return Placement("swift_let", "ios/App/Keys.swift",
                     f'enum Keys {{\n    static let analyticsSecret = "{k}"\n}}\n',
                     [Secret("credential", [k])], ["enum Keys"])


# ---------------------------------------------------------------------------------- shell, CI


@placement
def sh_export(g: Gen) -> Placement:
    t = g.github()
    return Placement("sh_export", "scripts/release.sh",
                     f"#!/bin/sh\nexport GITHUB_TOKEN={t}\ngh release create \"$1\"\n",
                     [Secret("github_token", [t])], ['gh release create "$1"'])


@placement
def sh_curl_basic(g: Gen) -> Placement:
    pw = g.password()
    return Placement("sh_curl_basic", "scripts/healthcheck.sh",
                     f"curl -fsS -u monitor:{pw} https://grafana.internal/api/health\n",
                     [Secret("password", [pw])], ["https://grafana.internal/api/health"])


@placement
def sh_curl_bearer(g: Gen) -> Placement:
    t = g.mixed(40)
    return Placement("sh_curl_bearer", "scripts/deploy_hook.sh",
                     f'curl -X POST -H "Authorization: Bearer {t}" https://deploy.internal/hooks/web\n',
                     [Secret("bearer_token", [t])], ["https://deploy.internal/hooks/web"])


@placement
def sh_docker_login(g: Gen) -> Placement:
    pw = g.mixed(24)
    return Placement("sh_docker_login", "ci/push.sh",
                     f"docker login -u ci-bot -p {pw} registry.internal\ndocker push registry.internal/shop:latest\n",
                     [Secret("password", [pw])], ["registry.internal/shop:latest"])


@placement
def sh_mysql_p(g: Gen) -> Placement:
    pw = g.password()
    return Placement("sh_mysql_p", "scripts/restore.sh",
                     f"mysql -h db -u root -p{pw} shop < dump.sql\n",
                     [Secret("password", [pw])], ["shop < dump.sql"])


@placement
def sh_redis_cli(g: Gen) -> Placement:
    pw = g.mixed(20)
    return Placement("sh_redis_cli", "scripts/flush_cache.sh",
                     f"redis-cli -h cache.internal -a {pw} FLUSHDB\n",
                     [Secret("password", [pw])], ["FLUSHDB"])


@placement
def sh_env_prefix(g: Gen) -> Placement:
    pw = g.password()
    return Placement("sh_env_prefix", "scripts/report.sh",
                     f"PGPASSWORD={pw} psql -h analytics -U report -c 'select 1'\n",
                     [Secret("password", [pw])], ["psql -h analytics -U report"])


@placement
def makefile_twine(g: Gen) -> Placement:
    t = g.pypi()
    return Placement("makefile_twine", "Makefile",
                     f"release:\n\ttwine upload -u __token__ -p {t} dist/*\n",
                     [Secret("pypi_token", [t])], ["dist/*"])


@placement
def gha_workflow_literal(g: Gen) -> Placement:
    pw = g.mixed(22)
    return Placement("gha_workflow_literal", ".github/workflows/deploy.yml",
                     "jobs:\n  deploy:\n    steps:\n      - uses: docker/login-action@v3\n        with:\n"
                     "          username: ci\n          password: ${{ secrets.REGISTRY_PASSWORD }}\n"
                     f"      - run: ./deploy.sh\n        env:\n          DEPLOY_TOKEN: {pw}\n",
                     [Secret("credential", [pw])], ["${{ secrets.REGISTRY_PASSWORD }}"])


@placement
def powershell_securestring(g: Gen) -> Placement:
    pw = g.password()
    return Placement("powershell_securestring", "ops/connect.ps1",
                     f'$cred = ConvertTo-SecureString "{pw}" -AsPlainText -Force\n',
                     [Secret("password", [pw])], ["-AsPlainText -Force"])


# ---------------------------------------------------------------------------------- config files


@placement
def dotenv(g: Gen) -> Placement:
    k = g.stripe()
    return Placement("dotenv", ".env.production",
                     f"NODE_ENV=production\nSTRIPE_SECRET_KEY={k}\nPORT=8080\n",
                     [Secret("stripe_key", [k])], ["NODE_ENV=production"])


@placement
def compose_command_flag(g: Gen) -> Placement:
    pw = g.mixed(18)
    return Placement("compose_command_flag", "docker-compose.yml",
                     f"services:\n  cache:\n    image: redis:7\n    command: redis-server --requirepass {pw} --appendonly yes\n"
                     "    ports:\n      - \"6379:6379\"\n",
                     [Secret("password", [pw])], ["redis:7", "--appendonly yes"])


@placement
def compose_command_list(g: Gen) -> Placement:
    pw = g.mixed(18)
    return Placement("compose_command_list", "deploy/compose.cache.yaml",
                     f'services:\n  cache:\n    command: ["redis-server", "--requirepass", "{pw}"]\n',
                     [Secret("password", [pw])], ['"redis-server"'])


@placement
def compose_environment_list(g: Gen) -> Placement:
    pw = g.password()
    return Placement("compose_environment_list", "deploy/compose.db.yml",
                     f"services:\n  db:\n    image: postgres:16\n    environment:\n      - POSTGRES_USER=shop\n"
                     f"      - POSTGRES_PASSWORD={pw}\n",
                     [Secret("password", [pw])], ["postgres:16"])


@placement
def k8s_secret_stringdata(g: Gen) -> Placement:
    pw = g.password()
    return Placement("k8s_secret_stringdata", "k8s/db-secret.yaml",
                     "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\nstringData:\n"
                     f"  username: shop\n  password: {pw}\n",
                     [Secret("k8s_secret", [pw])], ["apiVersion: v1"])


@placement
def helm_values(g: Gen) -> Placement:
    k = g.mixed(32)
    return Placement("helm_values", "charts/shop/values.yaml",
                     f"replicaCount: 2\nauth:\n  existingSecret: \"\"\n  jwtSecret: {k}\n",
                     [Secret("credential", [k])], ["replicaCount: 2"])


@placement
def toml_table(g: Gen) -> Placement:
    pw = g.password()
    return Placement("toml_table", "config/prod.toml",
                     f'[database]\nhost = "db.internal"\npassword = "{pw}"\n',
                     [Secret("password", [pw])], ['host = "db.internal"'])


@placement
def ini_section(g: Gen) -> Placement:
    pw = g.password()
    return Placement("ini_section", "config/mail.ini",
                     f"[smtp]\nhost = smtp.internal\nuser = mailer\npass = {pw}\n",
                     [Secret("password", [pw])], ["host = smtp.internal"])


@placement
def json_nested(g: Gen) -> Placement:
    k = g.mixed(40)
    return Placement("json_nested", "config/oauth.json",
                     f'{{\n  "auth": {{\n    "clientId": "shop-web",\n    "clientSecret": "{k}"\n  }}\n}}\n',
                     [Secret("credential", [k])], ['"clientId": "shop-web"'])


@placement
def xml_appsettings(g: Gen) -> Placement:
    k = g.mixed(32)
    return Placement("xml_appsettings", "Shop/Web.config",
                     f'<configuration>\n  <appSettings>\n    <add key="PaymentApiKey" value="{k}" />\n'
                     f'  </appSettings>\n</configuration>\n',
                     [Secret("credential", [k])], ["<appSettings>"])


@placement
def terraform_default(g: Gen) -> Placement:
    pw = g.password()
    return Placement("terraform_default", "infra/variables.tf",
                     f'variable "db_password" {{\n  type      = string\n  sensitive = true\n  default   = "{pw}"\n}}\n',
                     [Secret("password", [pw])], ["sensitive = true"])


@placement
def netrc(g: Gen) -> Placement:
    pw = g.mixed(20)
    return Placement("netrc", "ops/netrc", f"machine api.internal login deploy password {pw}\n",
                     [Secret("password", [pw])], ["machine api.internal login deploy"])


@placement
def npmrc(g: Gen) -> Placement:
    t = g.npm()
    return Placement("npmrc", ".npmrc", f"//registry.npmjs.org/:_authToken={t}\nsave-exact=true\n",
                     [Secret("npm_token", [t])], ["save-exact=true"])


@placement
def docker_config_auth(g: Gen) -> Placement:
    pw = g.mixed(16)
    auth = base64.b64encode(f"ci:{pw}".encode()).decode()
    return Placement("docker_config_auth", "ops/docker-config.json",
                     f'{{\n  "auths": {{\n    "registry.internal": {{\n      "auth": "{auth}"\n    }}\n  }}\n}}\n',
                     [Secret("docker_auth", [auth])], ['"registry.internal"'])


@placement
def pem_in_python_string(g: Gen) -> Placement:
    block, lines = g.pem()
    body = block.replace("\n", "\n")
    return Placement("pem_in_python_string", "tests/fixtures_keys.py",
                     f'PRIVATE_KEY = """{body}"""\n', [Secret("private_key", lines)], ['PRIVATE_KEY = """'])


@placement
def pem_file(g: Gen) -> Placement:
    block, lines = g.pem()
    return Placement("pem_file", "ops/deploy_key.pem", block + "\n", [Secret("private_key", lines)])


@placement
def properties_amqps(g: Gen) -> Placement:
    pw = g.mixed(18)
    return Placement("properties_amqps", "config/broker.properties",
                     f"broker.url=amqps://orders:{pw}@mq.internal:5671/orders\nbroker.prefetch=10\n",
                     [Secret("url_credentials", [pw])], ["broker.prefetch=10"])


@placement
def dockerfile_env(g: Gen) -> Placement:
    k = g.mixed(32)
    return Placement("dockerfile_env", "Dockerfile",
                     f"FROM python:3.12-slim\nENV SENTRY_AUTH_TOKEN={k}\nCOPY . /app\n",
                     [Secret("credential", [k])], ["FROM python:3.12-slim"])


@placement
def sql_create_user(g: Gen) -> Placement:
    pw = g.password()
    return Placement("sql_create_user", "db/migrations/0003_roles.sql",
                     f"CREATE USER reporting WITH PASSWORD '{pw}';\nGRANT SELECT ON ALL TABLES IN SCHEMA public TO reporting;\n",
                     [Secret("password", [pw])], ["GRANT SELECT ON ALL TABLES"])


@placement
def notebook_json_cell(g: Gen) -> Placement:
    k = g.openai()
    return Placement("notebook_json_cell", "notebooks/explore.ipynb",
                     '{"cells": [{"cell_type": "code", "source": ["import openai\\n", '
                     f'"openai.api_key = \\"{k}\\"\\n"]}}], "nbformat": 4}}\n',
                     [Secret("openai_key", [k])], ['"nbformat": 4'])


@placement
def html_inline_script(g: Gen) -> Placement:
    k = g.google()
    return Placement("html_inline_script", "web/public/index.html",
                     f'<script src="https://maps.googleapis.com/maps/api/js?key={k}&callback=initMap"></script>\n',
                     [Secret("google_api_key", [k])], ["callback=initMap"])


# ---------------------------------------------------------------------------------- docs


@placement
def md_prose(g: Gen) -> Placement:
    pw = g.password()
    return Placement("md_prose", "docs/staging.md",
                     f"# Staging\n\nThe staging password is {pw} until we move to SSO.\n",
                     [Secret("password", [pw])], ["until we move to SSO."])


@placement
def md_prose_no_copula(g: Gen) -> Placement:
    pw = g.password()
    return Placement("md_prose_no_copula", "docs/onboarding.md",
                     f"# Onboarding\n\nLog in to the VPN with the shared password `{pw}` and change it.\n",
                     [Secret("password", [pw])], ["# Onboarding"])


@placement
def md_code_block(g: Gen) -> Placement:
    k = g.openai()
    return Placement("md_code_block", "docs/local-dev.md",
                     f"# Local development\n\n```bash\nexport OPENAI_API_KEY={k}\nmake dev\n```\n",
                     [Secret("openai_key", [k])], ["make dev"])


@placement
def md_table(g: Gen) -> Placement:
    pw = g.password()
    return Placement("md_table", "docs/accounts.md",
                     f"# Test accounts\n\n| user | password |\n| --- | --- |\n| qa-admin | {pw} |\n",
                     [Secret("password", [pw])], ["# Test accounts"])


@placement
def md_connection_url(g: Gen) -> Placement:
    pw = g.mixed(16)
    return Placement("md_connection_url", "docs/analytics.md",
                     f"Connect with `postgres://analyst:{pw}@analytics.internal/warehouse`.\n",
                     [Secret("url_credentials", [pw])], ["analytics.internal/warehouse"])


@placement
def rst_field(g: Gen) -> Placement:
    k = g.mixed(30)
    return Placement("rst_field", "docs/service.rst",
                     f"Service account\n===============\n\n:user: svc-report\n:token: {k}\n",
                     [Secret("credential", [k])], [":user: svc-report"])


@placement
def txt_notes(g: Gen) -> Placement:
    t = g.slack()
    return Placement("txt_notes", "notes/incident-42.txt",
                     f"Rotated the bot after the incident.\nnew bot token: {t}\n",
                     [Secret("slack_token", [t])], ["Rotated the bot after the incident."])


@placement
def changelog_leak(g: Gen) -> Placement:
    k = g.hexkey(40)
    return Placement("changelog_leak", "CHANGELOG.md",
                     f"## 1.4.0\n\n- Switched the metrics client (api secret {k}).\n",
                     [Secret("credential", [k])], ["## 1.4.0"])


# ---------------------------------------------------------------------------------- file names


@placement
def file_named_after_token(g: Gen) -> Placement:
    t = g.github()
    return Placement("file_named_after_token", f"keys/{t}.json", '{"scopes": ["repo"]}\n',
                     name_secret=t, decoys=['"scopes"'])


@placement
def folder_named_after_key(g: Gen) -> Placement:
    k = g.mixed(32)
    return Placement("folder_named_after_key", f"cache/{k}/notes.md", "# Cached notes\n\nNothing here.\n",
                     name_secret=k, decoys=["# Cached notes"])


# ---------------------------------------------------------------------------------- decoys only


@placement
def decoys_code(g: Gen) -> Placement:
    d = [
        'password = os.environ["DB_PASSWORD"]',
        'token = request.headers.get("Authorization", "")',
        'api_key = settings.API_KEY',
        'DB_URL = "postgres://user:password@localhost:5432/dev"',
        'SECRET_KEY = "changeme"',
        'AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"',
        'password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())',
        'secret_name = "prod/db/credentials"',
        'TOKEN_URL = "https://oauth2.googleapis.com/token"',
        f'COMMIT = "{g.hexkey(40)}"',
        f'CHECKSUM_SHA256 = "{g.sha256()}"',
        f'REQUEST_ID = "{uuid.UUID(int=g.r.getrandbits(128))}"',
        'parser.add_argument("--password-file", default="/run/secrets/db")',
        'key = cache_key(user_id, "profile")',
        'cmd = ["docker", "run", "-p", "8080:80", "shop"]',
        'headers = {"Authorization": f"Bearer {token}"}',
        'password: str = Field(..., min_length=12)',
    ]
    return Placement("decoys_code", "svc/decoys.py", "\n".join(d) + "\n", decoys=d)


@placement
def decoys_config(g: Gen) -> Placement:
    d = [
        "DB_PASSWORD=${DB_PASSWORD}",
        "API_KEY=<your-api-key>",
        "password: {{ .Values.db.password }}",
        "token: ${{ secrets.DEPLOY_TOKEN }}",
        "redis_password: \"\"",
        "secret_ref: vault:secret/data/shop#password",
        f"integrity: sha384-{g.chars(B64, 64)}",
        "session_timeout: 3600",
        "password_min_length: 12",
    ]
    return Placement("decoys_config", "config/decoys.yaml", "\n".join(d) + "\n", decoys=d)


@placement
def decoys_shell(g: Gen) -> Placement:
    d = [
        "redis-server --requirepass \"$REDIS_PASSWORD\"",
        "docker login -u ci -p \"$CI_REGISTRY_PASSWORD\" registry.internal",
        "psql -h db -p 5432 -U shop",
        "mysql -u root -p shop",
        "curl -u \"$USER:$TOKEN\" https://api.internal",
        "ssh -p 2222 deploy@bastion",
    ]
    return Placement("decoys_shell", "scripts/decoys.sh", "\n".join(d) + "\n", decoys=d)


@placement
def decoys_prose(g: Gen) -> Placement:
    d = [
        "The password is stored in Vault and rotated weekly.",
        "Your password must be at least 12 characters long.",
        "Enter the password when prompted.",
        "Set the token to the value shown in the dashboard.",
        "The API key is sent in the X-API-Key header.",
        "Passwords are hashed with argon2id before they are stored.",
        "If the token expired, run `gh auth login` again.",
        "The secret is mounted at /run/secrets/db_password.",
    ]
    return Placement("decoys_prose", "docs/security-notes.md", "# Notes\n\n" + "\n\n".join(d) + "\n", decoys=d)


@placement
def decoys_names(g: Gen) -> Placement:
    name = hashlib.sha256(g.chars(ALNUM, 12).encode()).hexdigest()
    return Placement("decoys_names", f"fixtures/{name}.json", '{"ok": true}\n', decoys=['{"ok": true}'])


def build(seed: int) -> list[Placement]:
    g = Gen(seed)
    return [fn(g) for fn in PLACEMENTS]


def write(out: Path, seed: int) -> dict[str, object]:
    """Write every placement's file under ``out`` and return the manifest (also written there)."""
    placements = build(seed)
    for p in placements:
        target = out / p.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(p.text)
    manifest = {"seed": seed, "placements": [asdict(p) for p in placements],
                "secret_names": [p.name_secret for p in placements if p.name_secret]}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def main() -> None:
    as_installed()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    m = write(args.out, args.seed)
    placements = m["placements"]
    assert isinstance(placements, list)
    print(f"{len(placements)} placements, {sum(len(p['secrets']) for p in placements)} secrets, "
          f"{sum(len(p['decoys']) for p in placements)} decoys, {len(m['secret_names'])} secret names -> {args.out}")


if __name__ == "__main__":
    main()
