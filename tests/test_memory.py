"""The C library's allocator calls acms makes between phases, and the parent-death signal of its helpers."""

from __future__ import annotations

import platform
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from acms import memory

GLIBC = sys.platform == "linux" and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not GLIBC, reason="malloc_trim and mallopt are glibc's")
def test_the_allocator_calls_are_found_without_starting_a_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """``malloc_trim`` and ``mallopt`` come from the symbols the process has loaded: found (or trimming
    silently stops), and no ``ldconfig`` is run to find the C library."""
    memory._libc_function.cache_clear()

    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a process was started: {args}")

    monkeypatch.setattr(subprocess.Popen, "__init__", no_process)
    try:
        assert memory._libc_function("malloc_trim") is not None
        assert memory._libc_function("mallopt") is not None
        assert memory._libc_function("no_such_function_in_libc") is None
        memory.release_freed()
    finally:
        memory._libc_function.cache_clear()


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG is Linux's")
def test_a_helper_asks_to_die_with_its_parent() -> None:
    script = ("import ctypes, signal\n"
              "from acms.lifetime import die_with_parent\n"
              "die_with_parent()\n"
              "got = ctypes.c_int()\n"
              "ctypes.CDLL(None).prctl(2, ctypes.byref(got))  # PR_GET_PDEATHSIG\n"
              "print(got.value)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert int(done.stdout) == signal.SIGKILL


@pytest.mark.skipif(platform.system() != "Linux", reason="MemAvailable and cgroups are Linux's")
def test_the_memory_available_is_the_kernels_and_no_more_than_the_machine_has() -> None:
    """What decides whether a large refresh is one batch or streamed (``IndexRun._mode``)."""
    lines = Path("/proc/meminfo").read_text().splitlines()
    total = next(int(line.split()[1]) * 1024 for line in lines if line.startswith("MemTotal:"))
    free = memory.available_bytes()
    assert free is not None and 0 < free <= total
