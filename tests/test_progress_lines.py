"""Progress lines off a terminal (``acms.cli.progress.LineProgress``): the ETA is measured from the
phase's first report, so work done before it (the LSA fit before the first batch of vectors) does not
inflate it (the standard library printed "eta 484s" at 5 % for a phase that took 44 s)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from acms.cli import progress as progress_mod
from acms.cli.progress import LineProgress


def test_eta_counts_from_the_first_report(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    clock = iter([0.0, 0.0, 30.0, 31.0, 41.0])  # init, start, first report after a 30 s fit, then 1 s, 10 s
    monkeypatch.setattr(progress_mod.time, "monotonic", lambda: next(clock))
    lines = LineProgress(every=0.0)
    lines.start("embeddings")
    lines.update(0, 1000)
    lines.update(100, 1000)   # 100 in 1 s: 900 left is 9 s (not (31 s / 100) * 900 = 279 s)
    lines.update(500, 1000)   # 500 in 11 s: 500 left is 11 s
    assert capsys.readouterr().err.splitlines() == [
        "acms: embeddings 0/1000", "acms: embeddings 100/1000 (10%), eta 9s", "acms: embeddings 500/1000 (50%), eta 11s"]


def test_a_first_index_off_a_terminal_reports_every_phase_the_fit_included(tmp_path: Path) -> None:
    """``acms index --progress`` in a pipe (a log, an agent): one line as each phase ends, the LSA fit a
    phase of its own with its steps counted (it was the one silent stretch of a first index)."""
    from acms.embeddings.lsa import FIT_STEPS

    root = tmp_path / "proj"
    shutil.copytree(Path(__file__).parent / "fixtures" / "sample_project", root)
    out = subprocess.run([sys.executable, "-m", "acms", "index", str(root), "--progress"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    ended = dict(re.findall(r"^acms: (\w+)(?: (\d+/\d+))? done \(", out.stderr, re.M))
    assert ["listing", "indexing", "copies", "tiers", "secrets", "caches", "fitting", "embeddings", "vectors"] == list(ended)
    assert ended["fitting"] == f"{FIT_STEPS}/{FIT_STEPS}"
    done, total = ended["embeddings"].split("/")
    assert done == total and int(total) > 0
