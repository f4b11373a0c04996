"""Secret scrubbing: every kind is caught where it is usually put, decoys stay, lines stay,
placeholders say what was removed, scrubbing twice changes nothing, arbitrary text never breaks it.

All secrets below are random characters of the right shape (made up for these tests).
"""

from __future__ import annotations

import base64
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acms.privacy import Finding, Scrubbed, scan, scrub

GH = "ghp_R8fKq2LmZ0vXc7TbN4wYs1HdJ6gPe3UaQ9oV"
GH2 = "gho_7TbN4wYs1HdJ6gPe3UaQ9oVR8fKq2LmZ0vXc"
PAT = "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7cD8eF9gH0"
GLPAT = "glpat-Xq3vR8sT1uW4yZ7bC0dE"
AWS_ID = "AKIAZ3MXQ7R2VN5KJW4T"
AWS_SECRET = "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"
SLACK = "xoxb-284719365012-1938274650192-Rk3mQ9vLx2Tz7WcN4bYs8HdF"
SLACK_HOOK_KEY = "Zr8Kq2LmX0vNc7TbW4ys1HdJ"
SLACK_HOOK = f"https://hooks.slack.com/services/T04QK7Z2M/B05RN8X3PL/{SLACK_HOOK_KEY}"
DISCORD_KEY = "a7Xk2Lq9_Rt4Zm8Wc3Nb6Yh1Kd5Fg0Pe-Vs2Uj7Io3Ty8Er4Wq1Az6Sx9Dc5Fv0Gb2Hn7Jm4Kl1Qw3Er5"
DISCORD_HOOK = f"https://discord.com/api/webhooks/112233445566778899/{DISCORD_KEY}"
TEAMS_HEX = "3f9a1c7e5b2d4f8a0c6e1b3d5f7a9c2e"
TEAMS_HOOK = ("https://contoso.webhook.office.com/webhookb2/6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b@"
              "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d/IncomingWebhook/" + TEAMS_HEX
              + "/7e6d5c4b-3a29-4817-a6b5-c4d3e2f1a0b9")
GOOGLE = "AIzaSyC4xR9kLm2Qv8Tz1Nb7Wc3Yh6Jd0Fg5Pe"
STRIPE = "sk_live_51Hq8vR2kLm9Tz1Nb7Wc3Yh6J"
OPENAI = "sk-proj-Rk3mQ9vLx2Tz7WcN4bYs8HdFq1Jp6Ge0Ua5Oi3Ew9Rt2Yu7Iop4As1Df6Gh8Jk"
ANTHROPIC = "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7Zy6Xw5Vu4Ts3Rq2Po1Nm0Lk9Ji8Hg7Fe6AA"
TWILIO = "SK3f9a1c7e5b2d4f8a0c6e1b3d5f7a9c2e"
SENDGRID = "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"
NPM = "npm_Rk3mQ9vLx2Tz7WcN4bYs8HdFq1Jp6Ge0Ua5O"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0ZjNhOWI4YyIsImlhdCI6MTcwMDAwMDAwMH0."
       "Rk3mQ9vLx2Tz7WcN4bYs8HdFq1Jp6Ge0Ua5Oi3Ew9Rt")
PYPI = "pypi-AgEIcHlwaS5vcmc" + "Rk3mQ9vLx2Tz7WcN4bYs8HdFq1Jp6Ge0Ua5Oi3Ew9Rt2Yu7Iop4As1Df6Gh8Jk" * 2
VAULT = "hvs.CAESIRk3mQ9vLx2Tz7WcN4bYs8HdFq1Jp6Ge0Ua5Oi3Ew9Rt2Yu7I"
TELEGRAM = "5829374610:AAHk3mQ9vLx2Tz7WcN4bYs8HdFq1Jp6Ge0U"
MAILCHIMP = "3f9a1c7e5b2d4f8a0c6e1b3d5f7a9c2e-us14"
HF = "hf_Rk3mQ9vLx2Tz7WcN4bYs8HdFq1Jp6Ge0Ua"
PW = "Xk9-mP2.vL7q_Rt4!"
REDIS_PW = "Zq8xP2mK9vL4nR7tW3"
B64_KEY = "K7gNU3sdo+OL0wNhqoVWhr3g6s1xYv72ol/pe/Unols="
HEX_SECRET = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
DOCKER_AUTH = base64.b64encode(b"deploy:Zq8xP2mK9vL4nR7tW3").decode()
K8S_B64 = base64.b64encode(b"Tr0ub4dor-3xq!").decode()
PEM_BODY = ["MIIEowIBAAKCAQEA7bq98Y3xkMNq2Lm9Tz1Nb7Wc3Yh6Jd0Fg5PeRk3mQ9vLx2Tz7",
            "Wc3Yh6Jd0Fg5PeRk3mQ9vLx2Tz7WcN4bYs8HdFq1Jp6Ge0Ua5Oi3Ew9Rt2Yu7Iop4",
            "As1Df6Gh8Jk2LzXq3vR8sT1uW4yZ7bC0dE=="]
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(PEM_BODY) + "\n-----END RSA PRIVATE KEY-----"

# (id, path, text, fragments that must be gone, kind of the placeholder)
CAUGHT: list[tuple[str, str, str, list[str], str]] = [
    # provider tokens, in code, config, docs, comments
    ("github-py", "app.py", f'TOKEN = "{GH}"\n', [GH], "github_token"),
    ("github-call", "app.py", f'gh = Github("{GH2}")\n', [GH2], "github_token"),
    ("github-comment", "app.go", f"// old token: {GH}\n", [GH], "github_token"),
    ("github-pat-md", "README.md", f"Use `{PAT}` for the bot.\n", [PAT], "github_token"),
    ("github-url-user", "deploy.sh", f"git clone https://{GH}@github.com/o/r.git\n", [GH],
     "github_token"),
    ("gitlab-env", ".env", f"GITLAB_TOKEN={GLPAT}\n", [GLPAT], "gitlab_token"),
    ("gitlab-header", "ci.sh", f'curl -H "PRIVATE-TOKEN: {GLPAT}" https://gitlab.internal/api\n',
     [GLPAT], "gitlab_token"),
    ("aws-id-yaml", "ci.yml", f"  AWS_ACCESS_KEY_ID: {AWS_ID}\n", [AWS_ID], "aws_access_key_id"),
    ("aws-secret-ini", "credentials", f"[default]\naws_secret_access_key = {AWS_SECRET}\n",
     [AWS_SECRET], "aws_secret_access_key"),
    ("aws-boto-kwargs", "s3.py",
     f"boto3.client('s3', aws_access_key_id='{AWS_ID}', aws_secret_access_key='{AWS_SECRET}')\n",
     [AWS_ID, AWS_SECRET], "aws_secret_access_key"),
    ("slack-token-js", "bot.js", f"const slack = new WebClient('{SLACK}');\n", [SLACK],
     "slack_token"),
    ("slack-webhook-py", "notify.py", f'HOOK = "{SLACK_HOOK}"\n', [SLACK_HOOK_KEY],
     "slack_webhook"),
    ("slack-webhook-yaml", "alerts.yaml", f"webhook_url: {SLACK_HOOK}\n", [SLACK_HOOK_KEY],
     "slack_webhook"),
    ("slack-webhook-md-link", "docs.md", f"[alerts]({SLACK_HOOK})\n", [SLACK_HOOK_KEY],
     "slack_webhook"),
    ("discord-webhook", "notify.ts", f"const hook = `{DISCORD_HOOK}`;\n", [DISCORD_KEY],
     "discord_webhook"),
    ("teams-webhook", "settings.json", f'{{"teams": "{TEAMS_HOOK}"}}\n', [TEAMS_HEX],
     "teams_webhook"),
    ("google", "maps.js", f"const key = '{GOOGLE}';\n", [GOOGLE], "google_api_key"),
    ("stripe", "pay.rb", f'Stripe.api_key = "{STRIPE}"\n', [STRIPE], "stripe_key"),
    ("openai-env", ".env", f"OPENAI_API_KEY={OPENAI}\n", [OPENAI], "openai_key"),
    ("anthropic", "llm.py", f'client = Anthropic(api_key="{ANTHROPIC}")\n', [ANTHROPIC],
     "anthropic_key"),
    ("twilio", "sms.go", f'keySid := "{TWILIO}"\n', [TWILIO], "twilio_key"),
    ("sendgrid", "mail.php", f"$sg = new \\SendGrid('{SENDGRID}');\n", [SENDGRID], "sendgrid_key"),
    ("npmrc", ".npmrc", f"//registry.npmjs.org/:_authToken={NPM}\n", [NPM], "npm_token"),
    ("jwt-header", "api.sh", f'curl -H "Authorization: Bearer {JWT}" https://api.internal/\n',
     [JWT], "jwt"),
    ("pypirc", ".pypirc", f"[pypi]\nusername = __token__\npassword = {PYPI}\n", [PYPI],
     "pypi_token"),
    ("vault", "vault.hcl", f'token = "{VAULT}"\n', [VAULT], "vault_token"),
    ("telegram-url", "bot.py",
     f'requests.get("https://api.telegram.org/bot{TELEGRAM}/getMe")\n', [TELEGRAM],
     "telegram_bot_token"),
    ("mailchimp", "news.js", f"mailchimp.setConfig({{ apiKey: '{MAILCHIMP}' }});\n", [MAILCHIMP],
     "mailchimp_key"),
    ("huggingface", "train.py", f'login(token="{HF}")\n', [HF], "huggingface_token"),
    # credentials in URLs, any scheme
    ("redis-url-py", "cache.py", f'r = Redis.from_url("redis://:{REDIS_PW}@cache:6379/0")\n',
     [REDIS_PW], "url_credentials"),
    ("rediss-env", ".env", f"REDIS_URL=rediss://default:{REDIS_PW}@redis.internal:6380\n",
     [REDIS_PW], "url_credentials"),
    ("postgres-yaml", "db.yaml", f"url: postgres://app:{REDIS_PW}@db:5432/app\n", [REDIS_PW],
     "url_credentials"),
    ("mongodb-srv", "db.js", f'mongoose.connect("mongodb+srv://app:{REDIS_PW}@c0.x.net/db");\n',
     [REDIS_PW], "url_credentials"),
    ("amqp-go", "mq.go", f'conn, _ := amqp.Dial("amqp://w:{REDIS_PW}@mq:5672/")\n', [REDIS_PW],
     "url_credentials"),
    ("https-userinfo-md", "setup.md", f"git clone https://bot:{REDIS_PW}@git.internal/r.git\n",
     [REDIS_PW], "url_credentials"),
    ("url-password-with-at", "x.py", 'u = "postgres://app:p@ss:w0rd9@db:5432/app"\n',
     ["p@ss:w0rd9", "ss:w0rd9"], "url_credentials"),
    ("url-password-with-slash", "x.env", "REDIS_URL=redis://:aB3/xY+z9Q@cache:6379\n",
     ["aB3/xY+z9Q"], "url_credentials"),
    ("jdbc-query", "app.properties",
     f"spring.datasource.url=jdbc:mysql://db:3306/shop?user=root&password={REDIS_PW}\n",
     [REDIS_PW], "password"),
    # tokens split across adjacent literals
    ("split-py-implicit", "a.py", f'TOKEN = ("{GH[:12]}"\n         "{GH[12:]}")\n',
     [GH[:12], GH[12:]], "github_token"),
    ("split-py-same-line", "a.py", f'TOKEN = "{GH[:20]}" "{GH[20:]}"\n', [GH[:20], GH[20:]],
     "github_token"),
    ("split-js-plus", "a.js", f"const t = '{GH[:4]}' + '{GH[4:]}';\n", [GH[4:]], "github_token"),
    ("split-go-three", "a.go", f'tok := "{SLACK[:10]}" +\n\t"{SLACK[10:30]}" +\n\t"{SLACK[30:]}"\n',
     [SLACK[10:30], SLACK[30:]], "slack_token"),
    ("split-py-backslash", "a.py", f'key = "{OPENAI[:25]}" \\\n    "{OPENAI[25:]}"\n',
     [OPENAI[:25], OPENAI[25:]], "openai_key"),
    ("split-password", "a.py", 'DB_PASSWORD = "Xk9-mP2" + ".vL7q_Rt4!"\n', ["Xk9-mP2", ".vL7q_Rt4!"],
     "password"),
    # Docker and Kubernetes
    ("docker-auth", "config.json",
     f'{{\n  "auths": {{\n    "registry.io": {{\n      "auth": "{DOCKER_AUTH}"\n    }}\n  }}\n}}\n',
     [DOCKER_AUTH], "docker_auth"),
    ("docker-auth-compact", ".dockercfg", f'{{"https://index.docker.io/v1/":{{"auth":"{DOCKER_AUTH}",'
     '"email":"ops@shop.io"}}\n', [DOCKER_AUTH], "docker_auth"),
    ("k8s-data", "secret.yaml",
     f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {K8S_B64}\n",
     [K8S_B64], "k8s_secret"),
    ("k8s-data-before-kind", "secret.yml",
     f"apiVersion: v1\ndata:\n  token: \"{K8S_B64}\"\nkind: Secret\nmetadata:\n  name: t\n",
     [K8S_B64], "k8s_secret"),
    ("k8s-stringdata-block", "secret.yaml",
     f"kind: Secret\nstringData:\n  app.ini: |\n    [db]\n    pass = {PW}\n  user: app\n", [PW],
     "k8s_secret"),
    ("k8s-list-item", "all.yaml",
     f"items:\n- apiVersion: v1\n  kind: Secret\n  data:\n    key: {K8S_B64}\n", [K8S_B64],
     "k8s_secret"),
    ("k8s-flow-map", "secret.yaml", f"kind: Secret\ndata: {{password: {K8S_B64}, user: YWRtaW4=}}\n",
     [K8S_B64], "k8s_secret"),
    ("k8s-json", "secret.json",
     f'{{"kind": "Secret", "data": {{"password": "{K8S_B64}"}}}}\n', [K8S_B64], "k8s_secret"),
    # private keys: the whole block
    ("pem-file", "server.key", PEM + "\n", PEM_BODY, "private_key"),
    ("pem-in-yaml", "tls.yaml", "tls:\n  key: |\n    " + PEM.replace("\n", "\n    ") + "\n",
     PEM_BODY, "private_key"),
    ("pem-escaped-json", "sa.json", '{"private_key": "' + PEM.replace("\n", "\\n") + '\\n"}\n',
     PEM_BODY, "private_key"),
    # .env, config and code assignments
    ("env-quoted", ".env", f'DB_PASSWORD="{PW}"\n', [PW], "password"),
    ("env-export", "deploy.sh", f"export API_SECRET={PW}\n", [PW], "credential"),
    ("env-dotenv-local", ".env.local", f"NEXTAUTH_SECRET={B64_KEY}\n", [B64_KEY], "credential"),
    ("dockerfile-env", "Dockerfile", f"ENV DB_PASSWORD={PW}\n", [PW], "password"),
    ("docker-run-e", "run.sh", f"docker run -e POSTGRES_PASSWORD={PW} postgres\n", [PW],
     "password"),
    ("py-assign", "settings.py", f'password = "{PW}"\n', [PW], "password"),
    ("py-annotated", "settings.py", f'db_password: str = "{PW}"\n', [PW], "password"),
    ("py-dict", "settings.py", f'{{"PASSWORD": "{PW}", "HOST": "db"}}\n', [PW], "password"),
    ("py-environ-set", "conf.py", f'os.environ["API_KEY"] = "{OPENAI[8:40]}"\n', [OPENAI[8:40]],
     "credential"),
    ("js-object", "cfg.js", f"export default {{ apiKey: '{OPENAI[8:40]}' }};\n", [OPENAI[8:40]],
     "credential"),
    ("go-short-assign", "main.go", f'dbPassword := "{PW}"\n', [PW], "password"),
    ("json-password", "config.json", f'{{"db": {{"password": "{PW}"}}}}\n', [PW], "password"),
    ("yaml-unquoted", "app.yaml", f"database:\n  password: {PW}\n", [PW], "password"),
    ("yaml-list-env", "compose.yml", f"    environment:\n      - REDIS_PASSWORD={PW}\n", [PW],
     "password"),
    ("ini-password", "app.ini", f"[smtp]\npassword = {PW}\n", [PW], "password"),
    ("toml-password", "settings.toml", f'[db]\npassword = "{PW}"\n', [PW], "password"),
    ("properties", "application.properties", f"spring.datasource.password={PW}\n", [PW],
     "password"),
    ("ado-connection-string", "appsettings.json",
     f'{{"Db": "Server=tcp:db,1433;User ID=app;Password={PW};Encrypt=True;"}}\n', [PW], "password"),
    ("libpq-dsn", "db.py", f'connect("host=db user=app password={PW} dbname=shop")\n', [PW],
     "password"),
    ("php-define", "wp-config.php", f"define( 'DB_PASSWORD', '{PW}' );\n", [PW], "password"),
    ("xml-element", "settings.xml", f"<server><id>repo</id><password>{PW}</password></server>\n",
     [PW], "password"),
    ("xml-key-value", "web.config", f'<add key="StripeApiKey" value="{OPENAI[8:40]}" />\n',
     [OPENAI[8:40]], "credential"),
    ("terraform", "main.tf", f'  master_password = "{PW}"\n', [PW], "password"),
    ("curl-user", "check.sh", f"curl -u admin:{PW} https://nexus.internal/\n", [PW], "basic_auth"),
    ("basic-header", "api.md", f"Authorization: Basic {DOCKER_AUTH}\n", [DOCKER_AUTH],
     "basic_auth"),
    ("bearer-opaque", "api.sh", f'curl -H "Authorization: Bearer {B64_KEY[:40]}" https://x/\n',
     [B64_KEY[:40]], "bearer_token"),
    ("api-key-header", "api.sh", f'curl -H "X-API-Key: {OPENAI[8:40]}" https://x/\n',
     [OPENAI[8:40]], "credential"),
    ("prose-comment", "db.py", f"# the staging password is {PW}\n", [PW], "password"),
    ("netrc", ".netrc", f"machine api.internal login bot password {PW}\n", [PW], "password"),
    ("notebook-escaped", "train.ipynb", f'  "source": ["api_key = \\"{OPENAI[8:40]}\\"\\n"],\n',
     [OPENAI[8:40]], "credential"),
    ("terraform-variable", "variables.tf",
     f'variable "db_password" {{\n  type    = string\n  default = "{PW}"\n}}\n', [PW], "password"),
    ("compose-quoted-list", "compose.yml", f'      - "DB_PASSWORD={PW}"\n', [PW], "password"),
    ("makefile", "Makefile", f"API_TOKEN ?= {OPENAI[8:40]}\n", [OPENAI[8:40]], "credential"),
    ("rust-const", "main.rs", f'const API_KEY: &str = "{OPENAI[8:40]}";\n', [OPENAI[8:40]],
     "credential"),
    ("ruby-or-assign", "env.rb", f"ENV['DB_PASSWORD'] ||= '{PW}'\n", [PW], "password"),
    ("redis-requirepass", "compose.yml", f"    command: redis-server --requirepass {PW}\n", [PW],
     "password"),
    ("mysql-p", "backup.sh", f"mysqldump -u root -p{PW} shop > dump.sql\n", [PW], "password"),
    ("sshpass", "deploy.sh", f"sshpass -p '{PW}' ssh ops@host\n", [PW], "password"),
    ("sql-create-user", "init.sql", f"CREATE USER app WITH PASSWORD '{PW}';\n", [PW], "password"),
    ("powershell", "deploy.ps1",
     f'$pw = ConvertTo-SecureString "{PW}" -AsPlainText -Force\n', [PW], "password"),
    ("twilio-positional", "sms.py",
     f'client = Client("AC{TEAMS_HEX}", "{TEAMS_HEX[::-1]}")\n', [TEAMS_HEX[::-1]], "twilio_key"),
    ("kubeconfig-client-key", "kubeconfig",
     f"users:\n- name: admin\n  user:\n    client-key-data: {B64_KEY * 3}\n", [B64_KEY * 3],
     "credential"),
    ("google-oauth-secret", "client.json",
     '{"client_secret": "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"}\n',
     ["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"], "google_oauth_secret"),
    # found by a detect-secrets plugin alone (acms has no rule for Artifactory keys)
    ("artifactory-via-detect-secrets", "pull.sh",
     f'curl -H "X-JFrog-Art-Api: AKCp8{OPENAI[8:60]}" https://jfrog.internal/\n', [OPENAI[8:60]],
     "artifactory_token"),
    # high-entropy values under secret-looking keys in config files
    ("yaml-signing-key", "auth.yaml", f"auth:\n  session_seed: {B64_KEY}\n", [B64_KEY],
     "high_entropy"),
    ("toml-cookie-secret", "app.toml", f'cookie_secret = "{B64_KEY}"\n', [B64_KEY], "credential"),
    ("json-hex-secret", "keys.json", f'{{"hmac_key": "{HEX_SECRET}"}}\n', [HEX_SECRET],
     "high_entropy"),
    ("rails-secret-hex", "secrets.yml", f"production:\n  secret_key_base: {HEX_SECRET}\n",
     [HEX_SECRET], "credential"),
    ("py-bytes-key", "crypto.py", f'ENCRYPTION_KEY = b"{B64_KEY}"\n', [B64_KEY], "credential"),
]

# (id, path, text, value that must survive)
DECOYS: list[tuple[str, str, str, str]] = [
    # in code an unquoted name after a secret word is a variable (detect-secrets' keyword rule takes
    # Go's right-hand side with or without quotes): scrubbing it broke the file's parse
    ("go-compare-variable", "auth.go", "\treturn ok && password == credPass\n", "credPass"),
    ("go-assign-variable", "user.go", "\tuser.Password = hashed\n", "hashed"),
    ("aws-example-id", "s.py", 'AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"\n', "AKIAIOSFODNN7EXAMPLE"),
    ("aws-example-secret", "c.ini",
     "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("placeholder-your", ".env.example", "OPENAI_API_KEY=your-api-key-here\n", "your-api-key-here"),
    ("placeholder-angle", "README.md", "export GITHUB_TOKEN=<your-github-token>\n",
     "<your-github-token>"),
    ("placeholder-xxxx", ".env.example", "STRIPE_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx\n",
     "sk_live_xxxxxxxxxxxxxxxxxxxxxxxx"),
    ("placeholder-var", "compose.yml", "      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}\n",
     "${POSTGRES_PASSWORD}"),
    ("placeholder-helm", "secret.yaml",
     "kind: Secret\ndata:\n  password: {{ .Values.db.password | b64enc }}\n",
     "{{ .Values.db.password | b64enc }}"),
    ("placeholder-gha", "ci.yml", "        token: ${{ secrets.GITHUB_TOKEN }}\n",
     "${{ secrets.GITHUB_TOKEN }}"),
    ("environ-lookup", "s.py", 'PASSWORD = os.environ["DB_PASSWORD"]\n', 'os.environ["DB_PASSWORD"]'),
    ("getenv", "s.py", 'api_key = os.getenv("API_KEY", "")\n', 'os.getenv("API_KEY", "")'),
    ("process-env", "c.js", "const token = process.env.GITHUB_TOKEN;\n", "process.env.GITHUB_TOKEN"),
    ("git-sha", "v.py", 'COMMIT = "3f2a9c1b7e8d4f6a0b5c2e9d8f7a6b5c4d3e2f1a"\n',
     "3f2a9c1b7e8d4f6a0b5c2e9d8f7a6b5c4d3e2f1a"),
    ("sha256-digest", "Dockerfile",
     "FROM python@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n",
     "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
    ("sha256-const", "v.py",
     'ARCHIVE_SHA256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"\n',
     "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
    ("integrity", "package-lock.json",
     '"integrity": "sha512-' + base64.b64encode(bytes(range(64))).decode() + '",\n',
     "sha512-" + base64.b64encode(bytes(range(64))).decode()),
    ("uuid", "c.json", '{"tenant_id": "6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b"}\n',
     "6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b"),
    ("uuid-token-name", "c.py", 'idempotency_key = "6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b"\n',
     "6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b"),
    ("base64-png", "assets.py",
     'LOGO = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="\n',
     "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="),
    ("base64-text", "fixtures.py",
     f'BODY = "{base64.b64encode(b"Your order has shipped and will arrive soon.").decode()}"\n',
     base64.b64encode(b"Your order has shipped and will arrive soon.").decode()),
    ("version", "pyproject.toml", 'version = "2.0.0-rc.1+build.20240611"\n',
     "2.0.0-rc.1+build.20240611"),
    ("url-no-credentials", "s.py", 'CACHE = "redis://cache.internal:6379/0"\n',
     "redis://cache.internal:6379/0"),
    ("url-port-path", "s.py", 'API = "http://localhost:8080/users/@me"\n',
     "http://localhost:8080/users/@me"),
    ("https-url", "README.md", "See https://api.example.org/v1/users?page=2\n",
     "https://api.example.org/v1/users?page=2"),
    ("url-username-placeholder", "docs.md",
     "proxy: https://username:password@proxy.example.com\n", "username:password"),
    ("slack-placeholder", "docs.md",
     "https://hooks.slack.com/services/XXXXXXXXX/XXXXXXXXXXX/XXXXXXXXXXXXXXXXXXXXXXXX\n",
     "XXXXXXXXXXXXXXXXXXXXXXXX"),
    ("publishable-key", "pay.js", "const stripe = Stripe('pk_live_51Hq8vR2kLm9Tz1Nb7Wc3Yh6J');\n",
     "pk_live_51Hq8vR2kLm9Tz1Nb7Wc3Yh6J"),
    ("secret-name-ref", "deploy.yaml", "      secretName: tls-frontend-cert\n", "tls-frontend-cert"),
    ("configmap", "cm.yaml", "kind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n  api_url: https://x.io\n",
     "LOG_LEVEL: debug"),
    ("token-type", "oauth.py", 'TOKEN_TYPE = "Bearer"\n', '"Bearer"'),
    ("password-field", "forms.py", 'password_field = "password"\n', '"password"'),
    ("password-url", "urls.py", 'PASSWORD_RESET_URL = "/account/password/reset/"\n',
     "/account/password/reset/"),
    ("env-var-name", "c.py", "SECRET_KEY_ENV = 'AWS_SECRET_ACCESS_KEY'\n", "AWS_SECRET_ACCESS_KEY"),
    ("tokenizer", "nlp.py", 'tokenizer = "cl100k_base"\n', "cl100k_base"),
    ("max-tokens", "llm.py", "max_tokens = 4096\n", "4096"),
    ("format-template", "auth.py", "auth_str = f'{username}:{password}'\n", "{username}:{password}"),
    ("kwarg-variable", "db.py", "connect(user=user, password=password)\n", "password=password"),
    ("arn", "main.tf", 'arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-Ab12Cd"\n',
     "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-Ab12Cd"),
    ("ssh-public-key", "users.yaml",
     "ssh_public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIRk3mQ9vLx2Tz7WcN4bYs8HdFq1Jp6Ge0Ua5Oi ops\n",
     "AAAAC3NzaC1lZDI1NTE5AAAAIRk3mQ9vLx2Tz7WcN4bYs8HdFq1Jp6Ge0Ua5Oi"),
    ("alphabet", "b32.py", "_b32alphabet = b'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'\n",
     "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
    ("public-ip", "dns.py", 'DNS = "8.8.8.8"\n', "8.8.8.8"),
    ("setting-name", "emr.py", "EMRFS_SSE_KEY = 'fs.s3.enableServerSideEncryption'\n",
     "fs.s3.enableServerSideEncryption"),
]


@pytest.mark.parametrize(("path", "text", "fragments", "kind"),
                         [c[1:] for c in CAUGHT], ids=[c[0] for c in CAUGHT])
def test_each_kind_is_caught_where_it_is_put(path: str, text: str, fragments: list[str],
                                             kind: str) -> None:
    out = scrub(text, path)
    left = [f for f in fragments if f in out.text]
    assert left == [], out.text
    assert f"[REDACTED:{kind}]" in out.text, out.text


@pytest.mark.parametrize(("path", "text", "value"), [d[1:] for d in DECOYS],
                         ids=[d[0] for d in DECOYS])
def test_decoys_are_kept(path: str, text: str, value: str) -> None:
    out = scrub(text, path)
    assert value in out.text, out.findings


def test_decoys_leave_the_text_untouched() -> None:
    changed = [d[0] for d in DECOYS if scrub(d[2], d[1]).text != d[2]]
    assert changed == []


def test_findings_point_at_the_value() -> None:
    text = f'import os\n\nTOKEN = "{GH}"\n'
    (f,) = scan(text, "a.py")
    assert f == Finding("github_token", text.index(GH), text.index(GH) + len(GH), 3)
    out = scrub(text, "a.py")
    assert isinstance(out, Scrubbed) and out.findings == (f,)
    assert out.text == 'import os\n\nTOKEN = "[REDACTED:github_token]"\n'
    assert out.kinds == {"github_token": 1}


def test_pem_block_keeps_its_line_count() -> None:
    text = f"a = 1\n{PEM}\nb = 2\n"
    out = scrub(text, "k.txt")
    assert out.text.count("\n") == text.count("\n")
    assert out.text.splitlines()[1] == "[REDACTED:private_key]"
    assert out.text.splitlines()[-1] == "b = 2"
    assert "BEGIN" not in out.text and "END RSA" not in out.text


def test_unterminated_pem_runs_over_its_base64_lines_only() -> None:
    text = "key = '''\n-----BEGIN PRIVATE KEY-----\n" + "\n".join(PEM_BODY[:2]) + "\n\nx = 1\n"
    out = scrub(text, "k.py")
    assert all(b not in out.text for b in PEM_BODY[:2])
    assert out.text.endswith("\n\nx = 1\n") and out.text.count("\n") == text.count("\n")


def test_crlf_line_endings_are_kept() -> None:
    text = f"a = 1\r\n{PEM.replace(chr(10), chr(13) + chr(10))}\r\nb = 2\r\n"
    out = scrub(text, "k.txt")
    assert out.text.count("\r\n") == text.count("\r\n")
    assert len(out.text.splitlines()) == len(text.splitlines())


def test_minified_line_is_scanned_in_linear_time() -> None:
    filler = "var a=function(b){return b+1};" * 400
    text = filler + f'var c={{password:"{PW}",k:"{GOOGLE}"}};' + filler + "\n"
    out = scrub(text, "app.min.js").text
    assert PW not in out and GOOGLE not in out and len(out) < len(text)


def test_placeholders_are_typed_by_kind() -> None:
    text = f'a = "{GH}"\nb = "{STRIPE}"\nurl = "redis://:{REDIS_PW}@h:6379"\n'
    kinds = [f.kind for f in scan(text, "x.py")]
    assert kinds == ["github_token", "stripe_key", "url_credentials"]
    out = scrub(text, "x.py").text
    assert out == ('a = "[REDACTED:github_token]"\nb = "[REDACTED:stripe_key]"\n'
                   'url = "redis://:[REDACTED:url_credentials]@h:6379"\n')


ALL_CAUGHT = "\n".join(c[2] for c in CAUGHT)


@pytest.mark.parametrize("path", ["", "x.py", "x.yaml", "x.md", ".env"])
def test_scrub_is_idempotent(path: str) -> None:
    once = scrub(ALL_CAUGHT, path).text
    assert scrub(once, path).text == once
    assert scan(once, path) == []


def test_every_case_is_idempotent_and_keeps_lines() -> None:
    for _, path, text, _, _ in CAUGHT:
        once = scrub(text, path).text
        assert once.count("\n") == text.count("\n")
        assert scrub(once, path).text == once, path


# ------------------------------------------------------------------------------------ corpus


def _corpus() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "secrets_corpus.py"
    spec = importlib.util.spec_from_file_location("secrets_corpus_for_tests", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_corpus_full_recall_and_decoys_kept(tmp_path: Path) -> None:
    manifest = _corpus().build(tmp_path, seed=7)
    assert len(manifest.secrets) >= 80 and len({s.kind for s in manifest.secrets}) >= 20
    assert len(manifest.decoys) >= 40
    outputs: dict[str, str] = {}
    for rel in {s.file for s in manifest.secrets} | {d.file for d in manifest.decoys}:
        text = (tmp_path / rel).read_text(encoding="utf-8")
        out = scrub(text, rel).text
        assert out.count("\n") == text.count("\n")
        assert scrub(out, rel).text == out
        outputs[rel] = out
    missed = [(s.kind, s.placement) for s in manifest.secrets
              if any(f in outputs[s.file] for f in s.fragments)]
    assert missed == []
    redacted = [d.value for d in manifest.decoys if d.value not in outputs[d.file]]
    assert len(redacted) <= 0.05 * len(manifest.decoys), redacted


def test_corpus_is_deterministic(tmp_path: Path) -> None:
    corpus = _corpus()
    a, b = corpus.Corpus(11), corpus.Corpus(11)
    a.build()
    b.build()
    assert a.files == b.files and a.manifest == b.manifest


# ------------------------------------------------------------------------------------ properties

PIECES = [GH, SLACK, PEM, DOCKER_AUTH, REDIS_PW, "password = ", "token: ", "api_key=", '"', "'",
          " ", "\n", "\r\n", "\r", "Bearer ", "redis://u:", "@host", "-----BEGIN PRIVATE KEY-----",
          "-----END PRIVATE KEY-----", "[REDACTED:jwt]", "x", "export ", "kind: Secret\n",
          "data:\n", "  k: ", " + ", "\\\n", "ghp_", "://", "\x0b", "\u2028"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=14),
       st.sampled_from(["", "a.py", "b.yaml", ".env", "c.md"]))
def test_scrub_is_idempotent_on_random_mixtures(pieces: list[str], path: str) -> None:
    text = "".join(pieces)
    once = scrub(text, path).text
    assert scrub(once, path).text == once
    assert once.count("\n") == text.count("\n")
    assert len(once.splitlines()) == len(text.splitlines())


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400), st.sampled_from(["", "a.py", "b.json", ".env", "c.md", "d.sh"]))
def test_scrub_never_raises_and_keeps_the_line_count(text: str, path: str) -> None:
    out = scrub(text, path)
    assert out.text.count("\n") == text.count("\n")
    assert len(out.text.splitlines()) == len(text.splitlines())
    for f in out.findings:
        assert 0 <= f.start < f.end <= len(text)
        assert f.line == text.count("\n", 0, f.start) + 1
    assert scrub(out.text, path).text == out.text


def test_a_quoted_password_in_go_is_still_caught() -> None:
    """Beside the decoys above: the value in quotes is a literal, whatever the language."""
    text = '\tpassword := "Zx9#kLm2pQw"\n\tdb.Password = "s3cr3t-Hunter2!"\n'
    assert [text[f.start:f.end] for f in scan(text, "auth.go")] == ["Zx9#kLm2pQw", "s3cr3t-Hunter2!"]
