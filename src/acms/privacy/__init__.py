"""Find secrets in file text and scrub them before anything is stored or shown.

Why this exists: acms keeps file text in its graph and hands it to LLM agents, so a secret that
reaches the store in clear has already leaked. :func:`scrub` is meant to run at ingest, on every
file's text, so no secret is ever stored; :func:`scan` says where the secrets are without changing
anything.

The package, one job per module: ``files`` (what kind of file a path is), ``decoys`` (values that
stand for a secret without being one), ``accept`` (secret names and the checks a match must pass),
``providers`` and ``rules`` (the shapes matched on a line), ``trigger`` (which lines can hold a
secret at all), ``literals`` (tokens split across string literals), ``blocks`` (shapes that span
lines), ``adapter`` (detect-secrets), ``scrubber`` (scan and scrub), ``names`` (secret-looking file
and folder names), ``at_rest`` (the stored texts follow the index's policy).

Two detectors run together, and a span either of them flags is replaced:

* ``detect-secrets`` (Yelp's maintained scanner), used in-process through its plugins'
  ``analyze_line`` and its heuristic filters (never by writing files or running its CLI). Its
  entropy plugins flag any random-looking quoted string, so their hits pass acms's decoy filter
  (hashes, UUIDs, base64 of text or images, example keys) unless a secret-looking name is assigned.
* acms's own rules for what it misses: credentials in URLs of any scheme, webhooks (Slack, Discord,
  Teams), provider tokens, secrets split across adjacent or concatenated string literals (joined,
  then scanned by every line rule), Docker ``auth`` fields, Kubernetes ``Secret`` data, whole PEM
  private key blocks, ``.env``/config/code assignments to secret-looking names, secret words with
  a generated-looking value in comments, docstrings and documents, command-line flags, Markdown
  and CSV password columns, and high-entropy values under secret-looking keys.

Guarantees that callers rely on (all tested):

* a secret value becomes ``[REDACTED:kind]`` (the kind says what it was, e.g. ``github_token``);
* the text keeps its line count (no line break is ever removed), so ``path:line`` provenance of
  everything after a secret stays right;
* scrubbing twice changes nothing: no rule fires on a ``[REDACTED:...]`` marker, and the lines
  that a replacement changed are scanned again until nothing new turns up;
* it never raises on arbitrary text, and its cost is linear in the text's size: the expensive
  detectors only see lines (and on a long line, windows) that a cheap trigger says could hold a
  secret (``bench/secret_recall.py`` measures seconds per MB at 1, 5 and 50 MB).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acms.privacy.model import MARK, Finding, Scrubbed

if TYPE_CHECKING:
    from acms.privacy.scrubber import scan, scrub

__all__ = ["MARK", "Finding", "Scrubbed", "scan", "scrub"]


def __getattr__(name: str) -> object:
    """``scan`` and ``scrub`` load the detectors on first use: the walker imports this package for
    secret-looking file names, and the read path must not pay for the scrubber's regexes."""
    if name in ("scan", "scrub"):
        from acms.privacy import scrubber

        return getattr(scrubber, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
