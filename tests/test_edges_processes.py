"""Edges that say what happened, through real processes: ``acms`` subprocesses, ``acms serve`` on
127.0.0.1, a read-only index (a read-only bind mount in a private mount namespace, and ``chmod -R
a-w`` for a process without the capability that lets root write anyway), and a full disk (a small
tmpfs, mounted for the test).

Every refusal is one line on stderr (or the v0 envelope / an HTTP 400), never a traceback, and the
index answers afterwards as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, copy_of_indexed

ACMS = str(Path(sys.executable).parent / "acms")
REQUEST = {"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "intent": "parse header",
           "budgets": {"tokens_max": 800, "time_ms": 20000}, "request_id": "edge"}
ROOT = os.geteuid() == 0


def acms(*args: str, cwd: Path | None = None, stdin: bytes | None = None, prefix: tuple[str, ...] = (),
         timeout: float = 120) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*prefix, ACMS, *args], cwd=cwd, input=stdin, capture_output=True, timeout=timeout,
                          check=False)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode("utf-8", "replace"),
                                       done.stderr.decode("utf-8", "replace"))


def one_line_error(out: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    """The last stderr line is ``acms: error: …`` with every needle; exit ``code``; no traceback."""
    assert out.returncode == code, (out.returncode, out.stdout[-2000:], out.stderr[-2000:])
    assert "Traceback" not in out.stderr, out.stderr[-3000:]
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith("acms: error: "), out.stderr
    for needle in needles:
        assert needle in line, (needle, line)
    return line


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, _indexed_sample_template: Path) -> Path:
    return copy_of_indexed(_indexed_sample_template, tmp_path_factory.mktemp("edges"))


# -- input: one line, exit 2, never the whole value back -------------------------------------------
def test_render_refuses_bad_bytes_deep_nesting_and_a_key_given_twice(project: Path) -> None:
    garbage = bytes(range(256)) * 4 + os.urandom(512)
    deep = b"[" * 100_000 + b"]" * 100_000
    twice = json.dumps(REQUEST)[:-1].encode() + b', "privacy_mode": "block", "privacy_mode": "allow"}'
    for body, why in ((garbage, "is not UTF-8 text"), (deep, "more than 64 levels deep"),
                      (twice, "has the key 'privacy_mode' twice")):
        out = acms("render", "-", "-C", str(project), stdin=body)
        one_line_error(out, 2, why)
        assert json.loads(out.stdout)["error"]["code"] == "INVALID_REQUEST"


def test_a_task_of_one_mebibyte_is_answered_and_a_longer_one_is_refused_without_its_text(project: Path) -> None:
    task = ("parse_header fails on a line without a colon\n" + "Traceback (most recent call last):\n"
            '  File "pkg/mod.py", line 22, in parse_header\n' * 20_000)[: 1 << 20]
    out = acms("render", "-", "-C", str(project), stdin=json.dumps({**REQUEST, "intent": task}).encode())
    assert out.returncode == 0, out.stderr[-2000:]
    reply = json.loads(out.stdout)
    assert any(f["source_ref"].startswith("pkg/mod.py") for f in reply["fragments"])
    assert any("ranking read its first" in w for w in reply["metrics"]["warnings"])

    out = acms("assemble", "-", "--budget", "800", "--format", "json", "-C", str(project), stdin=task.encode())
    assert out.returncode == 0 and any(f["source_ref"].startswith("pkg/mod.py")
                                       for f in json.loads(out.stdout)["fragments"]), out.stderr[-2000:]

    longer = task + "x"
    out = acms("render", "-", "-C", str(project), stdin=json.dumps({**REQUEST, "intent": longer}).encode())
    line = one_line_error(out, 2, "intent: is 1,048,577 characters; the limit is 1,048,576")
    assert len(out.stderr) < 400 and len(out.stdout) < 1000 and "Traceback (most" not in line


def test_a_config_with_a_key_twice_or_absurd_nesting_is_exit_6(tmp_path: Path) -> None:
    root = tmp_path / "sample"
    shutil.copytree(FIXTURES / "sample_project", root)
    for text, why in (("hot_days = 3\nhot_days = 4\n", "Cannot overwrite a value"),
                      ("x = " + "[" * 100_000 + "]" * 100_000 + "\n", "more than 64 levels deep")):
        (root / "acms.toml").write_text(text)
        one_line_error(acms("search", "parse", "-C", str(root)), 6, "acms.toml", why)


# -- what happened, said in every format -----------------------------------------------------------
def test_an_empty_or_unfocused_context_says_why_in_markdown_text_and_json(project: Path) -> None:
    out = acms("assemble", "parse header", "--focus", "parse_headr", "--budget", "600", "-C", str(project))
    note = out.stdout.splitlines()[1]
    assert note.startswith("> ") and "the focus 'parse_headr' matches no entity in the index" in note
    assert "did you mean: pkg.mod.Parser.parse_header" in note

    many = [arg for i in range(20) for arg in ("--focus", f"no_such_{i}_" + "x" * 300)]
    out = acms("assemble", "parse header", *many, "--budget", "300", "-C", str(project))  # notes fit the budget
    assert out.returncode == 0 and "… and 17 more focus names" in out.stdout, out.stderr[-500:]
    assert max(map(len, out.stderr.splitlines())) < 700  # warnings are clipped, not 20 names of 300

    out = acms("assemble", "parse header", "--path", "nomatch/**", "--format", "text", "-C", str(project))
    assert out.returncode == 0 and out.stdout.splitlines()[1].startswith(
        "No context: the path filter 'nomatch/**' matches none of the")

    out = acms("assemble", "zzqqxx vvbbnnmm", "--format", "json", "-C", str(project))
    reply = json.loads(out.stdout)
    assert not reply["fragments"]
    assert reply["metrics"]["warnings"][0].startswith("No context: nothing in the index matches the task's words")

    out = acms("assemble", "parse header", "--language", "rust", "-C", str(project))
    assert "No context: the filters left none of the" in out.stdout


def test_an_update_is_refused_as_an_update_by_acms_sparql(project: Path) -> None:
    for update in ("INSERT DATA { <urn:a> <urn:b> <urn:c> }", "PREFIX x: <http://x/>\nDELETE WHERE { ?s ?p ?o }",
                   "# a comment\nCLEAR ALL", "WITH <urn:g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }"):
        line = one_line_error(acms("sparql", update, "-C", str(project)), 3)
        assert line == "acms: error: read-only: updates are not allowed here"
    out = acms("sparql", 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p "INSERT DATA" }', "-C", str(project))
    assert out.returncode == 0, out.stderr


# -- the HTTP server ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def served(project: Path) -> Iterator[str]:
    with serving(project) as url:
        yield url


@contextlib.contextmanager
def serving(project: Path, prefix: tuple[str, ...] = ()) -> Iterator[str]:
    """``acms serve`` on a free port of 127.0.0.1, until the block ends."""
    proc = subprocess.Popen([*prefix, ACMS, "serve", "-C", str(project), "--port", "0", "--no-watch"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        match = re.search(r"serving (http://127\.0\.0\.1:\d+)", line)
        assert match, line
        deadline = time.monotonic() + 60
        while True:  # the URL is printed once the port is bound; requests are served once uvicorn runs
            try:
                with urllib.request.urlopen(match.group(1) + "/health", timeout=5):
                    break
            except OSError:
                assert time.monotonic() < deadline, "acms serve did not answer /health"
                time.sleep(0.05)
        yield match.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()


def post(url: str, body: bytes, ctype: str = "application/json") -> tuple[int, str]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": ctype}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_http_render_answers_bad_input_with_400_and_takes_a_long_task(served: str) -> None:
    deep = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    twice = json.dumps(REQUEST)[:-1].encode() + b', "privacy_mode": "block", "privacy_mode": "allow"}'
    for body, why in ((os.urandom(300) + b"\xff", "not UTF-8"), (deep, "64 levels"), (twice, "twice")):
        status, text = post(served + "/v0/render", body)
        assert status == 400, (status, text[:300])
        assert why in json.loads(text)["error"]["message"]
    status, text = post(served + "/v0/render", json.dumps({**REQUEST, "focus": ["parse_headr"]}).encode())
    assert status == 200 and "did you mean: pkg.mod.Parser.parse_header" in json.loads(text)["metrics"]["warnings"][0]
    task = ("parse header \u00e9\u4e2d\n" * 80_000)[: 1 << 20]  # 1 MiB of characters, 2.4 MB as escaped JSON
    status, text = post(served + "/v0/render", json.dumps({**REQUEST, "intent": task}).encode())
    assert status == 200 and json.loads(text)["fragments"], text[:300]


def test_http_query_parameter_refuses_an_update_as_an_update(served: str) -> None:
    status, text = post(served + "/sparql", b"query=" + urllib.parse.quote("DROP ALL").encode(),
                        "application/x-www-form-urlencoded")
    assert status == 400 and "read-only: updates are not allowed here" in text, (status, text)


# -- a read-only index -------------------------------------------------------------------------------
READERS = (("search", "parse header"), ("assemble", "parse header", "--budget", "500"),
           ("describe", "pkg.mod.Parser"), ("history", "pkg.mod.Parser"), ("sparql", "ASK { ?s ?p ?o }"),
           ("export", "--format", "turtle"), ("stats",))


def _read_only_mount(index: Path) -> tuple[str, ...]:
    """A prefix that runs a command with ``index`` bind-mounted read-only in its own mount namespace."""
    if not ROOT or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare for a private read-only bind mount")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"unshare -m is not permitted here: {probe.stderr.decode().strip()}")
    script = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"'
    return ("unshare", "-m", "sh", "-c", script, str(index))


def _without_dac_override() -> tuple[str, ...]:
    """A prefix that runs a command as root without the capabilities that ignore file permissions."""
    if not ROOT or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv (as another user, permissions already apply)")
    drop = "-dac_override,-dac_read_search,-fowner"
    return ("setpriv", f"--bounding-set={drop}", f"--inh-caps={drop}", "--")


@pytest.fixture()
def copy(project: Path, tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    shutil.copytree(project, root)
    return root


@pytest.mark.parametrize("how", ["read-only mount", "chmod a-w"])
def test_a_read_only_index_is_read_by_every_reader_and_refused_by_writers(copy: Path, how: str) -> None:
    index = copy / ".acms"
    if how == "read-only mount":
        prefix = _read_only_mount(index)
    else:
        prefix = _without_dac_override()
        subprocess.run(["chmod", "-R", "a-w", str(index)], check=True)
    try:
        for args in READERS if how == "read-only mount" else READERS[:2]:  # the same code path: two suffice
            out = acms(*args, "-C", str(copy), prefix=prefix)
            assert out.returncode == 0 and out.stdout.strip() and "Traceback" not in out.stderr, (args, out.stderr)
        request = json.dumps(REQUEST).encode()
        out = acms("render", "-", "-C", str(copy), stdin=request, prefix=prefix)
        assert out.returncode == 0 and json.loads(out.stdout)["fragments"], out.stderr
        (copy / "pkg" / "util.py").write_text((copy / "pkg" / "util.py").read_text() + "\ndef late(): pass\n")
        out = acms("assemble", "normalize", "-C", str(copy), prefix=prefix)  # refresh=auto cannot write: it says so
        assert out.returncode == 0 and "stale: 1 file changed on disk since indexed (pkg/util.py)" in out.stdout
        one_line_error(acms("index", str(copy), prefix=prefix), 4, "read-only")
        if how == "read-only mount":  # a server holds the index in shared mode: it reads it too
            with serving(copy, prefix) as url:
                status, text = post(url + "/v0/render", json.dumps(REQUEST).encode())
                assert status == 200 and json.loads(text)["fragments"], text[:300]
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(index)], check=True)


# -- a full disk -------------------------------------------------------------------------------------
@pytest.fixture()
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 8 MiB tmpfs of the test's own (root and mount needed), unmounted afterwards."""
    if not ROOT or shutil.which("mount") is None:
        pytest.skip("needs root and mount for a small tmpfs")
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path, leave_kib: int) -> None:
    """Fill ``disk`` up to ``leave_kib`` KiB of free space."""
    (disk / "fill").unlink(missing_ok=True)
    stat = os.statvfs(disk)
    size = max(0, stat.f_bavail * stat.f_frsize - leave_kib * 1024)
    with open(disk / "fill", "wb") as fh:
        try:
            fh.write(b"\0" * size)
        except OSError:
            pass


def test_a_full_disk_under_export_and_index_is_one_line_and_the_old_state_is_kept(small_disk: Path) -> None:
    root = small_disk / "sample"
    shutil.copytree(FIXTURES / "sample_project", root)
    assert acms("index", str(root)).returncode == 0
    before = acms("search", "normalize", "-C", str(root), "--refresh", "off").stdout
    assert "pkg.util.normalize" in before

    (small_disk / "old.ttl").write_text("old\n")
    fill(small_disk, 0)
    one_line_error(acms("export", "--format", "turtle", "-o", str(small_disk / "old.ttl"), "-C", str(root)),
                   4, "no space left on device")
    assert (small_disk / "old.ttl").read_text() == "old\n"
    assert not [p for p in small_disk.iterdir() if p.name.endswith(".partial")]

    util = root / "pkg" / "util.py"
    for n, leave in enumerate((0, 256, 512)):  # each reaches a different write of the run
        fill(small_disk, leave)
        util.write_text(util.read_text() + f"\ndef added_{n}() -> int:\n    return {n}\n")
        out = acms("index", str(root))
        if out.returncode != 0:
            one_line_error(out, 4, "o space left on device")
        after = acms("search", "normalize", "-C", str(root), "--refresh", "off", "--wait", "10")
        assert after.returncode == 0 and "pkg.util.normalize" in after.stdout, after.stderr
    (small_disk / "fill").unlink()
    assert acms("index", str(root)).returncode == 0
    found = acms("search", "added_2", "-C", str(root), "--refresh", "off").stdout
    assert "pkg.util.added_2" in found


def test_a_full_disk_while_the_lsa_model_is_saved_is_one_line_and_the_old_model_answers(
        _fully_indexed_sample_template: Path, tmp_path: Path) -> None:
    """The index's caches (the LSA model among them) on a full tmpfs of their own, the graph beside it."""
    if not ROOT or shutil.which("mount") is None:
        pytest.skip("needs root and mount for a small tmpfs")
    copy = copy_of_indexed(_fully_indexed_sample_template, tmp_path)  # its vectors and caches made by the run
    before = acms("search", "strip a string", "--mode", "vector", "-C", str(copy), "--refresh", "off").stdout
    assert "pkg.util.normalize" in before, before
    cache = copy / ".acms" / "cache"
    saved = tmp_path / "cache-saved"
    shutil.copytree(cache, saved)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(cache)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        shutil.copytree(saved, cache, dirs_exist_ok=True)
        assert acms("search", "strip a string", "--mode", "vector", "-C", str(copy), "--refresh", "off").stdout == before
        fill(cache, 0)
        one_line_error(acms("reindex", "--embeddings", "--quiet", "-C", str(copy)), 4, "no space left on device")
        after = acms("search", "strip a string", "--mode", "vector", "-C", str(copy), "--refresh", "off")
        assert after.returncode == 0 and after.stdout == before, after.stderr
    finally:
        subprocess.run(["umount", "-l", str(cache)], check=False)


def test_ctrl_c_is_one_line_and_exit_130_and_the_index_is_as_it_was(project: Path) -> None:
    """A writer interrupted while it waits for the index (another process holds it) says so in one line,
    exits 130 as a shell expects of SIGINT, and leaves the index answering as before."""
    import signal

    from acms.api import Index

    with Index.open(project, wait=10):  # the writer's lock, held by this process
        # SIGINT's default action in the child whatever the test runner's is (an ignored signal is inherited)
        proc = subprocess.Popen([ACMS, "index", str(project), "--wait", "60"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        waiting = project / ".acms" / "writer-waiting"
        deadline = time.monotonic() + 60

        def its_own() -> bool:  # the flag this process wrote: it waits for the lock now (not one left behind)
            try:
                return waiting.read_text(encoding="utf-8") == str(proc.pid)
            except OSError:
                return False

        while not its_own() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert its_own(), proc.communicate(timeout=5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("acms: interrupted: nothing half-written")
    assert not waiting.exists()
    assert "Parser" in acms("search", "parser", "-C", str(project), "-k", "3").stdout
