"""A second set of placements, written after the scrubber's rules and never used to change them: its
recall is the figure to trust (``bench/secret_placements.py``'s was measured while rules were added).

Same shapes of value (``secret_placements.Gen``), other ways of placing them: keyword arguments of
SDK clients, tuples of basic auth, tokens in clone URLs, Lua's ``..``, ``os.Setenv``, Maven's
``settings.xml``, ``.my.cnf``, ``.pgpass``, CSV files of accounts, package.json scripts, HCL provider
blocks, and decoys of the same families.

    python bench/secret_heldout.py [--seeds 5]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent


if str(_HERE) not in sys.path:  # bench/ is sys.path[0] when run as a script, not when a test loads it by path
    sys.path.insert(0, str(_HERE))
import secret_placements as sp  # a sibling script: the generated corpus


Gen, Placement, Secret = sp.Gen, sp.Placement, sp.Secret
HELD_OUT: list[Callable[[Any], Any]] = []


def held(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    HELD_OUT.append(fn)
    return fn


@held
def sdk_kwarg(g: Any) -> Any:
    k = g.openai()
    return Placement("sdk_kwarg", "ai/client.py", f'from openai import OpenAI\n\nclient = OpenAI(api_key="{k}")\n',
                     [Secret("openai_key", [k])], ["from openai import OpenAI"])


@held
def requests_basic_tuple(g: Any) -> Any:
    pw = g.password()
    return Placement("requests_basic_tuple", "ops/jenkins.py",
                     f'r = requests.post(JOB_URL, auth=("jenkins-bot", "{pw}"), timeout=10)\n',
                     [Secret("password", [pw])], ["timeout=10"])


@held
def ftp_url(g: Any) -> Any:
    pw = g.mixed(14)
    return Placement("ftp_url", "ops/mirror.py", f'urlopen("ftp://mirror:{pw}@ftp.internal/pub/latest.tar.gz")\n',
                     [Secret("url_credentials", [pw])], ["ftp.internal/pub/latest.tar.gz"])


@held
def header_dict(g: Any) -> Any:
    k = g.mixed(32)
    return Placement("header_dict", "ops/status.py", f'HEADERS = {{"X-Auth-Token": "{k}", "Accept": "application/json"}}\n',
                     [Secret("credential", [k])], ['"Accept": "application/json"'])


@held
def spring_nested_yaml(g: Any) -> Any:
    pw = g.password()
    return Placement("spring_nested_yaml", "src/main/resources/application-prod.yml",
                     f"spring:\n  datasource:\n    url: jdbc:postgresql://db/shop\n    password: {pw}\n",
                     [Secret("password", [pw])], ["jdbc:postgresql://db/shop"])


@held
def ansible_become(g: Any) -> Any:
    pw = g.password()
    return Placement("ansible_become", "inventory/group_vars/web.yml",
                     f"ansible_user: deploy\nansible_become_pass: {pw}\n",
                     [Secret("password", [pw])], ["ansible_user: deploy"])


@held
def aws_configure(g: Any) -> Any:
    s = g.aws_secret()
    return Placement("aws_configure", "ops/bootstrap.sh", f"aws configure set aws_secret_access_key {s}\n",
                     [Secret("aws_secret_access_key", [s])], ["aws configure set"])


@held
def git_clone_token(g: Any) -> Any:
    t = g.gitlab()
    return Placement("git_clone_token", "ops/fetch.sh", f"git clone https://oauth2:{t}@gitlab.internal/shop/api.git\n",
                     [Secret("gitlab_token", [t])], ["gitlab.internal/shop/api.git"])


@held
def pgpass_heredoc(g: Any) -> Any:
    pw = g.password()
    return Placement("pgpass_heredoc", "ops/pg_setup.sh",
                     f"cat > ~/.pgpass <<EOF\ndb.internal:5432:shop:app:{pw}\nEOF\nchmod 600 ~/.pgpass\n",
                     [Secret("password", [pw])], ["chmod 600 ~/.pgpass"])


@held
def js_nullish_default(g: Any) -> Any:
    k = g.mixed(40)
    return Placement("js_nullish_default", "api/src/auth.js", f'const jwtSecret = process.env.JWT_SECRET ?? "{k}";\n',
                     [Secret("credential", [k])], ["process.env.JWT_SECRET"])


@held
def go_setenv(g: Any) -> Any:
    t = g.slack()
    return Placement("go_setenv", "internal/notify/notify_test.go", f'func init() {{ os.Setenv("SLACK_TOKEN", "{t}") }}\n',
                     [Secret("slack_token", [t])], ["func init()"])


@held
def java_props_put(g: Any) -> Any:
    pw = g.password()
    return Placement("java_props_put", "src/main/java/shop/Mailer.java",
                     f'props.put("mail.smtp.password", "{pw}");\n', [Secret("password", [pw])], ['props.put('])


@held
def csharp_network_credential(g: Any) -> Any:
    pw = g.password()
    return Placement("csharp_network_credential", "Shop/Mailer.cs",
                     f'var smtp = new SmtpClient {{ Credentials = new NetworkCredential("mailer", "{pw}") }};\n',
                     [Secret("password", [pw])], ["new SmtpClient"])


@held
def ruby_stripe(g: Any) -> Any:
    k = g.stripe()
    return Placement("ruby_stripe", "config/initializers/stripe.rb", f'Stripe.api_key = "{k}"\n',
                     [Secret("stripe_key", [k])], ["Stripe.api_key"])


@held
def php_array_key(g: Any) -> Any:
    k = g.mixed(32)
    return Placement("php_array_key", "application/config/config.php", f"<?php\n$config['encryption_key'] = '{k}';\n",
                     [Secret("credential", [k])], ["$config['encryption_key']"])


@held
def rust_const(g: Any) -> Any:
    k = g.mixed(36)
    return Placement("rust_const", "src/config.rs", f'pub const API_TOKEN: &str = "{k}";\n',
                     [Secret("credential", [k])], ["pub const API_TOKEN: &str"])


@held
def md_inline_export(g: Any) -> Any:
    t = "hvs." + g.mixed(24)
    return Placement("md_inline_export", "docs/vault.md", f"Log in with `export VAULT_TOKEN={t}` first.\n",
                     [Secret("vault_token", [t])], ["Log in with"])


@held
def md_credentials_sentence(g: Any) -> Any:
    pw = g.password()
    return Placement("md_credentials_sentence", "docs/qa.md", f"Credentials for the test DB: user `qa`, pass `{pw}`.\n",
                     [Secret("password", [pw])], ["Credentials for the test DB"])


@held
def dockerfile_index_url(g: Any) -> Any:
    t = g.pypi()
    return Placement("dockerfile_index_url", "docker/worker.Dockerfile",
                     f"RUN pip install --index-url https://__token__:{t}@pypi.internal/simple shop-worker\n",
                     [Secret("pypi_token", [t])], ["shop-worker"])


@held
def hcl_provider(g: Any) -> Any:
    t = g.github()
    return Placement("hcl_provider", "infra/github.tf", f'provider "github" {{\n  owner = "shop"\n  token = "{t}"\n}}\n',
                     [Secret("github_token", [t])], ['owner = "shop"'])


@held
def my_cnf(g: Any) -> Any:
    pw = g.password()
    return Placement("my_cnf", "ops/my.cnf", f"[client]\nuser=backup\npassword={pw}\n",
                     [Secret("password", [pw])], ["user=backup"])


@held
def properties_jwt(g: Any) -> Any:
    k = g.mixed(40)
    return Placement("properties_jwt", "config/security.properties", f"jwt.secret={k}\njwt.ttl=3600\n",
                     [Secret("credential", [k])], ["jwt.ttl=3600"])


@held
def package_json_script(g: Any) -> Any:
    pw = g.mixed(16)
    return Placement("package_json_script", "api/package.json",
                     f'{{\n  "scripts": {{\n    "migrate": "DATABASE_URL=mysql://root:{pw}@db/shop knex migrate:latest"\n  }}\n}}\n',
                     [Secret("url_credentials", [pw])], ["knex migrate:latest"])


@held
def csv_accounts(g: Any) -> Any:
    pw = g.password()
    return Placement("csv_accounts", "fixtures/accounts.csv", f"service,user,password\nsmtp,mailer,{pw}\n",
                     [Secret("password", [pw])], ["service,user,password"])


@held
def lua_concat(g: Any) -> Any:
    t = g.github()
    a, b = t[:15], t[15:]
    return Placement("lua_concat", "scripts/gh.lua", f'local token = "{a}" .. "{b}"\n',
                     [Secret("github_token", [a, b])], ["local token"])


@held
def trailing_comment_pw(g: Any) -> Any:
    pw = g.password()
    return Placement("trailing_comment_pw", "ops/db.py", f"conn = connect(DSN)  # pw: {pw}\n",
                     [Secret("password", [pw])], ["conn = connect(DSN)"])


@held
def maven_settings(g: Any) -> Any:
    pw = g.mixed(20)
    return Placement("maven_settings", "ops/settings.xml",
                     f"<settings><servers><server><id>internal</id><username>ci</username>"
                     f"<password>{pw}</password></server></servers></settings>\n",
                     [Secret("password", [pw])], ["<id>internal</id>"])


@held
def decoys_heldout(g: Any) -> Any:
    d = ["password = getpass.getpass()", "token = secrets.token_hex(32)", "API_KEY=${API_KEY}",
         '# password: see 1Password "Shop DB"', "aws_secret_access_key = <from vault>",
         "git clone https://github.com/shop/api.git", "Authorization: Bearer <token>",
         "jwt.secret=${JWT_SECRET}", "local token = os.getenv('GITHUB_TOKEN')",
         'props.put("mail.smtp.auth", "true");']
    return Placement("decoys_heldout", "docs/heldout-decoys.md", "\n\n".join(d) + "\n", decoys=d)



# A second held-out set, written after the rules for the first set's misses and measured once.
HELD_OUT_2: list[Callable[[Any], Any]] = []


def held2(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    HELD_OUT_2.append(fn)
    return fn


@held2
def py_environ_setdefault(g: Any) -> Any:
    k = g.mixed(32)
    return Placement("py_environ_setdefault", "svc/boot.py", f'os.environ.setdefault("API_TOKEN", "{k}")\n',
                     [Secret("credential", [k])], ['os.environ.setdefault("API_TOKEN"'])


@held2
def py_dataclass_default(g: Any) -> Any:
    k = g.mixed(32)
    return Placement("py_dataclass_default", "svc/conf.py",
                     f"@dataclass\nclass Conf:\n    api_key: str = \"{k}\"\n    timeout: int = 30\n",
                     [Secret("credential", [k])], ["timeout: int = 30"])


@held2
def toml_source_url(g: Any) -> Any:
    t = g.pypi()
    return Placement("toml_source_url", "pyproject.toml",
                     f'[[tool.poetry.source]]\nname = "internal"\nurl = "https://__token__:{t}@pypi.internal/simple"\n',
                     [Secret("pypi_token", [t])], ['name = "internal"'])


@held2
def k8s_env_name_value(g: Any) -> Any:
    pw = g.password()
    return Placement("k8s_env_name_value", "k8s/deploy.yaml",
                     f"      env:\n        - name: DB_PASSWORD\n          value: \"{pw}\"\n        - name: LOG_LEVEL\n"
                     f"          value: info\n", [Secret("password", [pw])], ["- name: LOG_LEVEL"])


@held2
def json_header_pair(g: Any) -> Any:
    k = g.mixed(36)
    return Placement("json_header_pair", "config/hooks.json",
                     f'{{"headers": [["Authorization", "Bearer {k}"], ["Accept", "*/*"]]}}\n',
                     [Secret("bearer_token", [k])], ['["Accept", "*/*"]'])


@held2
def sh_export_quoted(g: Any) -> Any:
    pw = g.password()
    return Placement("sh_export_quoted", "scripts/env.sh", f"export PGPASSWORD='{pw}'\n",
                     [Secret("password", [pw])], ["export PGPASSWORD="])


@held2
def gitconfig_extraheader(g: Any) -> Any:
    pw = g.mixed(16)
    b = __import__("base64").b64encode(f"ci:{pw}".encode()).decode()
    return Placement("gitconfig_extraheader", "ops/gitconfig",
                     f"[http]\n\textraheader = AUTHORIZATION: basic {b}\n", [Secret("basic_auth", [b])], ["[http]"])


@held2
def spring_value_default(g: Any) -> Any:
    pw = g.password()
    return Placement("spring_value_default", "src/main/java/shop/DbConfig.java",
                     f'@Value("${{db.password:{pw}}}")\nprivate String password;\n',
                     [Secret("password", [pw])], ["private String password;"])


@held2
def kotlin_build_config(g: Any) -> Any:
    k = g.mixed(32)
    return Placement("kotlin_build_config", "app/build.gradle.kts",
                     f'buildConfigField("String", "MAPS_API_KEY", "\\"{k}\\"")\n',
                     [Secret("credential", [k])], ['buildConfigField("String"'])


@held2
def go_header_set(g: Any) -> Any:
    k = g.mixed(40)
    return Placement("go_header_set", "internal/api/client.go",
                     f'req.Header.Set("Authorization", "Bearer {k}")\n', [Secret("bearer_token", [k])], ["req.Header.Set("])


@held2
def c_define(g: Any) -> Any:
    k = g.mixed(32)
    return Placement("c_define", "firmware/secrets.h", f'#define API_KEY "{k}"\n#define API_HOST "api.internal"\n',
                     [Secret("credential", [k])], ['#define API_HOST "api.internal"'])


@held2
def cpp_const_string(g: Any) -> Any:
    k = g.mixed(32)
    return Placement("cpp_const_string", "src/auth.cc", f'const std::string kClientSecret = "{k}";\n',
                     [Secret("credential", [k])], ["const std::string kClientSecret"])


@held2
def ruby_env_fetch_default(g: Any) -> Any:
    k = g.hexkey(64)
    return Placement("ruby_env_fetch_default", "config/secrets.rb", f'SECRET_KEY_BASE = ENV.fetch("SECRET_KEY_BASE", "{k}")\n',
                     [Secret("credential", [k])], ['ENV.fetch("SECRET_KEY_BASE"'])


@held2
def elixir_config(g: Any) -> Any:
    k = g.chars(sp.B64, 64)
    return Placement("elixir_config", "config/prod.exs", f'config :shop, ShopWeb.Endpoint,\n  secret_key_base: "{k}"\n',
                     [Secret("credential", [k])], ["config :shop, ShopWeb.Endpoint"])


@held2
def md_api_key_colon(g: Any) -> Any:
    k = g.mixed(32)
    return Placement("md_api_key_colon", "docs/partners.md", f"## Partner sandbox\n\nAPI key: {k}\n",
                     [Secret("credential", [k])], ["## Partner sandbox"])


@held2
def html_password_input(g: Any) -> Any:
    pw = g.password()
    return Placement("html_password_input", "web/admin/login.html",
                     f'<input type="password" name="password" value="{pw}">\n', [Secret("password", [pw])],
                     ['<input type="password" name="password"'])


@held2
def sql_identified_by_double(g: Any) -> Any:
    pw = g.password()
    return Placement("sql_identified_by_double", "db/users.sql", f'ALTER USER app IDENTIFIED BY "{pw}";\n',
                     [Secret("password", [pw])], ["ALTER USER app"])


@held2
def powershell_env(g: Any) -> Any:
    k = g.mixed(32)
    return Placement("powershell_env", "ops/env.ps1", f'$env:API_TOKEN = "{k}"\n', [Secret("credential", [k])],
                     ["$env:API_TOKEN"])


@held2
def tfvars(g: Any) -> Any:
    pw = g.password()
    return Placement("tfvars", "infra/prod.tfvars", f'db_password = "{pw}"\nregion = "eu-west-1"\n',
                     [Secret("password", [pw])], ['region = "eu-west-1"'])


@held2
def notebook_markdown_prose(g: Any) -> Any:
    pw = g.password()
    return Placement("notebook_markdown_prose", "notebooks/report.ipynb",
                     f'{{"cells": [{{"cell_type": "markdown", "source": ["The warehouse password is {pw}\\n"]}}]}}\n',
                     [Secret("password", [pw])], ['"cell_type": "markdown"'])


@held2
def dockerfile_arg_default(g: Any) -> Any:
    t = g.npm()
    return Placement("dockerfile_arg_default", "web/Dockerfile", f"ARG NPM_TOKEN={t}\nRUN npm ci\n",
                     [Secret("npm_token", [t])], ["RUN npm ci"])


@held2
def perl_my(g: Any) -> Any:
    pw = g.password()
    return Placement("perl_my", "scripts/legacy.pl", f"my $password = '{pw}';\n", [Secret("password", [pw])],
                     ["my $password ="])


@held2
def r_setenv(g: Any) -> Any:
    k = g.openai()
    return Placement("r_setenv", "analysis/setup.R", f'Sys.setenv(OPENAI_API_KEY = "{k}")\n',
                     [Secret("openai_key", [k])], ["Sys.setenv("])


@held2
def decoys_heldout_2(g: Any) -> Any:
    d = ['@Value("${db.password}")', "#define PASSWORD_MAX_LEN 64", '<input type="password" name="password">',
         'ENV.fetch("SECRET_KEY_BASE")', 'Sys.getenv("OPENAI_API_KEY")',
         'req.Header.Set("Authorization", "Bearer "+token)', "ARG NPM_TOKEN", "my $password = <STDIN>;",
         "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:", 'buildConfigField("String", "API_HOST", "\\"api.internal\\"")']
    return Placement("decoys_heldout_2", "docs/heldout-decoys-2.md", "\n\n".join(d) + "\n", decoys=d)

def main() -> None:
    from acms.privacy import scrub

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--set", type=int, choices=(1, 2), default=2, help="which held-out set")
    args = ap.parse_args()
    placements = HELD_OUT if args.set == 1 else HELD_OUT_2
    caught = planted = kept = decoys = 0
    rows: dict[str, list[int]] = {}
    missed: list[str] = []
    for seed in range(1, args.seeds + 1):
        g = Gen(1000 + seed)
        for fn in placements:
            p = fn(g)
            out = scrub(p.text, p.path).text
            row = rows.setdefault(p.kind, [0, 0, 0, 0])
            for s in p.secrets:
                planted += 1
                row[1] += 1
                if any(f in out for f in s.fragments):
                    missed.append(f"{p.kind}: {p.text.strip()[:90]}")
                else:
                    caught += 1
                    row[0] += 1
            for d in p.decoys:
                decoys += 1
                row[3] += 1
                if d in out:
                    kept += 1
                    row[2] += 1
                else:
                    missed.append(f"{p.kind} decoy redacted: {d}")
    print("| held-out placement | secrets caught | decoys kept |")
    print("| --- | ---: | ---: |")
    for kind, (c, n, k, d) in rows.items():
        print(f"| {kind} | {f'{c}/{n}' if n else '-'} | {f'{k}/{d}' if d else '-'} |")
    print()
    print(f"held-out recall: {caught}/{planted} = {100 * caught / planted:.1f} %; decoys kept {kept}/{decoys} "
          f"(false-positive rate {100 * (decoys - kept) / decoys:.1f} %)")
    for m in dict.fromkeys(missed):
        print("  ", m)


if __name__ == "__main__":
    from docs_page import run  # bench/ is sys.path[0] when run as a script

    run(main, "secret_heldout")  # --write-docs: this run's tables onto docs/benchmarks.md
