"""Secrets are removed at ingest, so no surface can return them: not the store, search, SPARQL,
export or assembly in any privacy mode. ``store_secrets`` is the explicit opt-in to keep them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from acms.store.oxigraph import OxigraphStore

# Fake values of real shapes (generated for this test; none is a live credential).
GITHUB = "ghp_" + "Zx8Qw2Lm4Np6Rt8Vb0Cd2Fg4Hj6Kl8Mn0Pq2"
SLACK_HOOK = "https://hooks.slack.com/services/T0A1B2C3D/B4E5F6G7H/" + "q8W9e0R1t2Y3u4I5o6P7a8S9"
REDIS_PASSWORD = "Vq7" + "mZt2pLx9KwR4"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzQ7Tk3Lm9NpX"
SECRETS = [GITHUB, SLACK_HOOK, REDIS_PASSWORD, AWS_SECRET, GITHUB[:16] + GITHUB[16:]]

FILES = {
    "app/settings.py": f'''"""Settings of the app."""
GITHUB_TOKEN = "{GITHUB}"
SLACK_WEBHOOK = "{SLACK_HOOK}"
REDIS_URL = "redis://:{REDIS_PASSWORD}@cache.internal:6379/0"


def connect_cache(url: str = REDIS_URL) -> str:
    """Open the cache connection."""
    return url
''',
    ".env.example": "",
    "deploy/app.env": f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}\nLOG_LEVEL=info\n",
    "app/split.py": f'TOKEN = "{GITHUB[:16]}" "{GITHUB[16:]}"\n\n\ndef token() -> str:\n    return TOKEN\n',
    "README.md": "# App\n\nConnect the cache with `connect_cache`.\n",
}


def acms(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "acms", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "leaky"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _leaks(text: str) -> list[str]:
    return [s[:12] + "…" for s in SECRETS if s in text]


def test_no_surface_returns_a_secret(project: Path) -> None:
    out = acms("index", str(project), "--json")
    assert out.returncode == 0, out.stderr
    removed = json.loads(out.stdout)["secrets_removed"]
    assert {"app/settings.py", "deploy/app.env", "app/split.py"} <= set(removed)
    root = str(project)
    surfaces = {
        "export turtle": acms("export", "-C", root, "--format", "turtle"),
        "export html": acms("export", "-C", root, "--format", "html"),
        "search": acms("search", "github token slack webhook redis password aws secret", "-C", root, "--json", "-k", "50"),
        "sparql": acms("sparql", "SELECT ?t WHERE { GRAPH ?g { ?f <https://w3id.org/acms/uko#text> ?t } }",
                       "-C", root, "--format", "json"),
    }
    for mode in ("allow", "redact", "block"):
        surfaces[f"assemble {mode}"] = acms("assemble", "github token slack webhook redis connection aws secret",
                                            "-C", root, "--budget", "4000", "--privacy", mode)
        surfaces[f"assemble {mode} json"] = acms("assemble", "settings token", "-C", root, "--budget", "4000",
                                                 "--privacy", mode, "--format", "json")
    for name, result in surfaces.items():
        assert result.returncode == 0, f"{name}: {result.stderr}"
        assert not _leaks(result.stdout + result.stderr), f"{name} leaked {_leaks(result.stdout)}"
    assert "[REDACTED:" in surfaces["sparql"].stdout
    store = OxigraphStore(project / ".acms" / "graph", read_only=True, wait=5)
    try:
        everything = "\n".join(str(q) for q in store.raw)
        flagged = store.select("SELECT ?p ?n WHERE { GRAPH ?g { ?f <https://w3id.org/acms/uko#path> ?p ; "
                               "<https://w3id.org/acms/uko#secretsRemoved> ?n } }")
    finally:
        store.close()
    assert not _leaks(everything)
    assert {r["p"].value for r in flagged} >= {"app/settings.py", "deploy/app.env"}


def test_line_numbers_survive_scrubbing(project: Path) -> None:
    """A placeholder keeps its line, so provenance after a secret is still right."""
    assert acms("index", str(project)).returncode == 0
    out = acms("assemble", "connect_cache open the cache connection", "-C", str(project), "--format", "json",
               "--budget", "2000")
    refs = [f["source_ref"] for f in json.loads(out.stdout)["fragments"] if f["entities"][0].endswith("connect_cache")]
    assert refs and refs[0].startswith("app/settings.py:7-")


def test_store_secrets_is_an_explicit_opt_in(project: Path) -> None:
    (project / "acms.toml").write_text("store_secrets = true\n")
    assert acms("index", str(project)).returncode == 0
    out = acms("sparql", "SELECT ?t WHERE { GRAPH ?g { ?f <https://w3id.org/acms/uko#text> ?t } }",
               "-C", str(project), "--format", "json")
    assert GITHUB in out.stdout
    (project / "acms.toml").write_text("store_secrets = false\n")  # turning it off re-reads every file
    assert acms("index", str(project)).returncode == 0
    out = acms("sparql", "SELECT ?t WHERE { GRAPH ?g { ?f <https://w3id.org/acms/uko#text> ?t } }",
               "-C", str(project), "--format", "json")
    assert GITHUB not in out.stdout


def test_the_planted_secret_corpus_leaves_through_no_surface(tmp_path: Path) -> None:
    """bench/secrets_corpus.py's project (83 fake secrets of 31 kinds, many placements): after
    `acms index`, none of them is in the store, an export or an assembly."""
    bench = Path(__file__).resolve().parents[2] / "bench" / "secrets_corpus.py"
    project = tmp_path / "corpus"
    subprocess.run([sys.executable, str(bench), str(project)], check=True, capture_output=True)
    manifest = json.loads((project / "manifest.json").read_text())
    (project / "manifest.json").unlink()
    values = [f for s in manifest["secrets"] for f in (s.get("fragments") or [s["value"]]) if f]
    assert len(manifest["secrets"]) >= 80
    assert acms("index", str(project)).returncode == 0
    store = OxigraphStore(project / ".acms" / "graph", read_only=True, wait=5)
    try:
        stored = "\n".join(q.object.value for q in store.raw if hasattr(q.object, "value"))
    finally:
        store.close()
    outputs = [stored, acms("export", "-C", str(project), "--format", "trig").stdout]
    outputs += [acms("assemble", "password token secret key webhook credentials", "-C", str(project),
                     "--budget", "8000", "--privacy", mode).stdout for mode in ("allow", "redact", "block")]
    leaked = sorted({v[:10] + "…" for v in values for out in outputs if v in out})
    assert not leaked, leaked
