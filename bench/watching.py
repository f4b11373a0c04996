"""Shared by the benchmarks: ``acms watch`` running on a project, answering the reads it relays."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from acms.cli.relay import socket_path


def answering_at(project: Path) -> Path | None:
    """Where a watcher of ``project``'s index (``.acms``) answers (``acms.cli.relay``)."""
    return socket_path(project / ".acms")


@contextmanager
def watching(acms: Sequence[str], project: Path, timeout: float = 60.0) -> Iterator[subprocess.Popen[str]]:
    """``acms watch -C project`` (``acms``: how to run acms), once its answering socket is there;
    stopped with SIGTERM on the way out."""
    proc = subprocess.Popen([*acms, "watch", "-C", str(project)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    try:
        deadline = time.monotonic() + timeout
        while not (sock := answering_at(project)) or not sock.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise SystemExit(f"acms watch did not start answering: {proc.communicate()[1][-2000:]}")
            time.sleep(0.05)
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
