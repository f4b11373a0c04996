"""What the benches' acms processes run as: an installed acms, with its bytecode."""

from __future__ import annotations

import os
import sys


def as_installed() -> None:
    """Let the processes a bench starts (and this one's later imports) write and use bytecode, as an
    installed acms does (pip compiles it; Python writes it on a first import). A sandbox that sets
    ``PYTHONDONTWRITEBYTECODE`` made every acms command compile the modules it imported again, ~0.16 s
    a process, which no user pays. ``bench/refresh.py`` strips it from its children's environment too."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
