"""An index run's phases give freed memory back to the system after a phase that allocated much or ran
long, not after each of a one-file refresh's few-millisecond phases (each trim walks the heap)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from acms.config import Settings
from acms.service.indexing import context
from acms.service.indexing.context import RunContext
from acms.store.oxigraph import in_memory


def test_memory_is_given_back_after_a_busy_or_long_phase_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trims: list[str] = []
    run = RunContext(tmp_path, in_memory(), Settings())
    for name in ("short", "busy", "long"):
        monkeypatch.setattr(context, "release_freed", lambda name=name: trims.append(name))
        with run.phase(name):
            if name == "busy":  # containers enough for a young collection at any threshold
                held = [[i] for i in range(200_000)]
                del held
            elif name == "long":
                time.sleep(context.LONG_PHASE)
    assert trims == ["busy", "long"]
    assert set(run.report.timings) == {"short", "busy", "long"}
