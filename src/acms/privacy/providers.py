"""Provider-prefixed token shapes (GitHub, Slack, Stripe, ...): one row per shape."""

from __future__ import annotations

import re
from collections.abc import Callable

from acms.privacy.accept import _mixed_ok, _token_ok


_Accept = Callable[[re.Match[str], str], bool]
# (kind, regex, accept, needles: lowercase substrings one of which the line must hold)
_PROVIDER_SPECS: tuple[tuple[str, str, _Accept | None, tuple[str, ...] | None], ...] = (
    ("jwt", r"(?<![\w\-])eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", _token_ok,
     ("eyj",)),
    ("anthropic_key", r"(?<![\w\-])sk-ant-[A-Za-z0-9_\-]{20,}", _token_ok, ("sk-ant-",)),
    ("openai_key", r"(?<![\w\-])sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}", _mixed_ok,
     ("sk-",)),
    ("stripe_key", r"(?<![\w\-])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", _token_ok,
     ("k_live_", "k_test_")),
    ("stripe_key", r"(?<![\w\-])whsec_[A-Za-z0-9+/=]{24,}", _token_ok, ("whsec_",)),
    ("github_token", r"(?<![\w\-])gh[pousr]_[A-Za-z0-9]{30,}", _token_ok,
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    ("github_token", r"(?<![\w\-])github_pat_[A-Za-z0-9_]{40,}", _token_ok, ("github_pat_",)),
    ("gitlab_token",
     r"(?<![\w\-])gl(?:pat|dt|rt|ptt|cbt|oas|ft|imt|soat|agent)-[A-Za-z0-9_\-]{20,}", _token_ok,
     ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-", "glft-", "glimt-", "glsoat-",
      "glagent-")),
    ("slack_webhook",
     r"(?<=hooks\.slack\.com/)(?:services|workflows|triggers)/[A-Za-z0-9_\-]+/[A-Za-z0-9_\-]+"
     r"(?:/[A-Za-z0-9_\-]+)?", _token_ok, ("hooks.slack.com/",)),
    ("slack_token", r"(?<![\w\-])xox[abposre]-(?:\d+-)*[A-Za-z0-9\-]{10,}", _token_ok, ("xox",)),
    ("slack_token", r"(?<![\w\-])xapp-\d-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+", _token_ok, ("xapp-",)),
    ("discord_webhook",
     r"(?:(?<=discord\.com/api/webhooks/)|(?<=discordapp\.com/api/webhooks/))\d{5,}"
     r"/[A-Za-z0-9_\-]{20,}", _token_ok, ("/api/webhooks/",)),
    ("teams_webhook", r"(?<=\.webhook\.office\.com/)webhookb2/[^\s'\"<>`]{20,}", _token_ok,
     ("webhook.office.com/",)),
    ("teams_webhook", r"(?<=outlook\.office\.com/)webhook/[^\s'\"<>`]{20,}", _token_ok,
     ("outlook.office.com/",)),
    ("google_api_key", r"(?<![\w\-])AIza[0-9A-Za-z_\-]{30,45}(?![0-9A-Za-z_\-])", _token_ok,
     ("aiza",)),
    ("aws_access_key_id",
     r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA)[A-Z0-9]{16}"
     r"(?![A-Za-z0-9])", _token_ok,
     ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "apka")),
    ("twilio_key", r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", _token_ok, ("sk",)),
    ("sendgrid_key", r"(?<![\w\-])SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}", _token_ok,
     ("sg.",)),
    ("npm_token", r"(?<![\w\-])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", _token_ok, ("npm_",)),
    ("pypi_token", r"(?<![\w\-])pypi-AgE[A-Za-z0-9_\-]{50,}", _token_ok, ("pypi-",)),
    ("vault_token", r"(?<![\w\-])hv[sbr]\.[A-Za-z0-9_\-]{24,}", _mixed_ok, ("hvs.", "hvb.", "hvr.")),
    ("shopify_token", r"(?<![\w\-])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", _token_ok,
     ("shpat_", "shpca_", "shppa_", "shpss_")),
    ("square_token", r"(?<![\w\-])sq0(?:atp|csp|idp)-[A-Za-z0-9_\-]{22,}", _token_ok, ("sq0",)),
    ("huggingface_token", r"(?<![\w\-])hf_[A-Za-z0-9]{34,}", _mixed_ok, ("hf_",)),
    ("digitalocean_token", r"(?<![\w\-])do[opr]_v1_[a-f0-9]{64}", _token_ok, ("_v1_",)),
    ("age_secret_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", _token_ok, ("age-secret-key-",)),
    ("mailchimp_key", r"(?<![\w\-])[0-9a-f]{32}-us\d{1,2}(?![\w])", _token_ok, ("-us",)),
    ("telegram_bot_token", r"(?<![\w\-:])\d{8,10}:AA[A-Za-z0-9_\-]{33}(?![\w\-])", _token_ok,
     (":aa",)),
    ("mailgun_key", r"(?<![\w\-])key-[0-9a-z]{32}(?![\w\-])", _mixed_ok, ("key-",)),
    ("newrelic_key", r"(?<![\w\-])NRA[KI]-[A-Z0-9]{27}(?![\w\-])", _token_ok, ("nrak-", "nrai-")),
    ("sentry_token", r"(?<![\w\-])sntry[su]_[A-Za-z0-9+/=_\-]{30,}", _token_ok, ("sntry",)),
    ("grafana_token", r"(?<![\w\-])glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", _token_ok, ("glsa_",)),
    ("postman_key", r"(?<![\w\-])PMAK-[a-f0-9]{24}-[a-f0-9]{34}", _token_ok, ("pmak-",)),
    ("doppler_token", r"(?<![\w\-])dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", _token_ok,
     ("dp.",)),
    ("linear_key", r"(?<![\w\-])lin_api_[A-Za-z0-9]{40}", _token_ok, ("lin_api_",)),
    ("atlassian_token", r"(?<![\w\-])ATATT3[A-Za-z0-9_\-=]{50,}", _token_ok, ("atatt3",)),
    ("databricks_token", r"(?<![\w\-])dapi[a-f0-9]{32}(?:-\d)?(?![\w])", _token_ok, ("dapi",)),
    ("terraform_token", r"(?<![\w\-])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}", _token_ok,
     (".atlasv1.",)),
    ("groq_key", r"(?<![\w\-])gsk_[A-Za-z0-9]{40,}", _mixed_ok, ("gsk_",)),
    ("replicate_token", r"(?<![\w\-])r8_[A-Za-z0-9]{37,}", _mixed_ok, ("r8_",)),
    ("google_oauth_secret", r"(?<![\w\-])GOCSPX-[A-Za-z0-9_\-]{28}", _token_ok, ("gocspx-",)),
    ("azure_client_secret", r"(?<![\w~.\-])[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}", _mixed_ok,
     ("q~",)),
    ("aws_session_token",
     r"(?<![\w+/])(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdz)[A-Za-z0-9+/=]{100,}", _token_ok,
     ("iqojb3jpz2lux2vj", "fwogzxivyxdz")),
    ("discord_bot_token",
     r"(?<![\w\-.])[MNO][A-Za-z\d_\-]{23,27}\.[A-Za-z\d_\-]{6}\.[A-Za-z\d_\-]{27,40}(?![\w\-])",
     _mixed_ok, None),
)
_SECRET_NEEDLES = ("pass", "pw", "secret", "token", "key", "cred", "auth", "dsn")
_ENTROPY_NEEDLES = ("key", "secret", "token", "salt", "seed", "sig", "hmac", "cookie", "session",
                    "cred", "pass", "pwd", "private", "auth", "nonce")
