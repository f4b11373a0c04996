"""Reads answered by a running ``acms watch``, over a Unix socket only this user can reach.

Why: a command started on its own pays for the engine before its first query (imports, the store
opened, the caches mapped, the tokenizer loaded: ~0.7 s of ``acms assemble``'s ~1.3 s on a standard
library), and the first read after an edit pays for the refresh too. ``acms watch`` holds all of that
warm and follows the project, so ``acms assemble`` hands it the request and prints its answer.

The answer is the one the command would print on its own: the watcher runs the same code over the same
index. It declines, and the command runs on its own, whenever that could differ: another protocol or
acms version, another project root, other settings (``fingerprint``: what shapes an answer), or an error
(the command on its own reports it exactly as it always does). A command whose work an error may come
after (``acms sparql``: a query stopped at its time or memory limit) or whose errors are part of its
output (``acms render``: the JSON envelope) gets the error as the command would print it, rather than
run the work again. Nothing else connects: the socket is the user's alone (in a directory of mode
0700, itself 0600, and on Linux the peer's user is checked).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import socketserver
import stat
import struct
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from acms import __version__
from acms.config import Settings
from acms.errors import AcmsError

__all__ = ["Answering", "ask", "fingerprint", "socket_path"]

PROTOCOL = 1
MAX_SOCKET_PATH = 100  # bytes: a Unix socket's path is limited to 104 (macOS) or 108 (Linux)
CONNECT_SECONDS = 1.0
# The setting that shapes no answer: how a watcher gathers saves.
NOT_ANSWERS = frozenset({"watch_debounce_ms"})

Handler = Callable[[dict[str, Any]], dict[str, Any]]


def socket_path(location: Path | str, *, create: bool = False) -> Path | None:
    """Where the watcher of the index at ``location`` listens: a socket named for the index directory, in
    a directory only this user can enter (``create``: made if missing, by the watcher). Not in the index
    directory: a project copied while a watcher runs (``cp -r``, ``shutil.copytree``) would meet a file it
    cannot copy. None for a remote store, where no such directory is to be had, or a path too long."""
    if not isinstance(location, Path) or not hasattr(socket, "AF_UNIX"):
        return None
    folder = _private_dir(create)
    if folder is None:
        return None
    path = folder / f"{hashlib.sha256(os.fsencode(location.resolve())).hexdigest()[:24]}.sock"
    return path if len(os.fsencode(path)) <= MAX_SOCKET_PATH else None


def _private_dir(create: bool) -> Path | None:
    """``$XDG_RUNTIME_DIR/acms``, else ``acms-UID`` in the temporary directory (as ssh-agent's): this user's,
    and no one else may enter it (refused otherwise)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    folder = Path(runtime) / "acms" if runtime else Path(tempfile.gettempdir()) / f"acms-{os.getuid()}"
    try:
        if create:
            folder.mkdir(mode=stat.S_IRWXU, exist_ok=True)
        st = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        return None
    return folder


def fingerprint(settings: Settings) -> str:
    """The settings that shape an answer, as text both sides compare."""
    values = {k: v for k, v in asdict(settings).items() if k not in NOT_ANSWERS}
    return json.dumps(values, sort_keys=True, default=str)


def ask(location: Path | str, message: dict[str, Any], wait: float) -> dict[str, Any] | None:
    """The watcher's answer to ``message`` (``{"stdout": …, "stderr": [lines]}``, and ``"exit"``: the exit
    code of an error the command reports as its own, ``acms.cli.common.failure``), or None: no watcher
    listens, it declined, or it broke off (the caller then runs the command itself). ``wait``: seconds
    the answer may take (a refresh waiting for another writer included)."""
    path = socket_path(location)
    if path is None or not path.exists():
        return None
    data = json.dumps({"protocol": PROTOCOL, "version": __version__, **message}).encode("utf-8")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(CONNECT_SECONDS)
            conn.connect(os.fspath(path))
            conn.settimeout(wait)
            conn.sendall(data)
            conn.shutdown(socket.SHUT_WR)
            reply = json.loads(b"".join(iter(lambda: conn.recv(1 << 16), b"")))
    except (OSError, ValueError):
        return None
    if not isinstance(reply, dict) or not isinstance(reply.get("stdout"), str) or \
            not all(isinstance(line, str) for line in reply.get("stderr", [])) or \
            not isinstance(reply.get("exit", 0), int) or isinstance(reply.get("exit"), bool):
        return None
    return reply


class Answering:
    """The watcher's side: answers on ``socket_path(location)`` for the project at ``root`` read with
    ``settings``, one thread per connection; ``handlers``: command name -> its answer to a message.
    ``on_answer(command, seconds, exit_code)`` hears of each answer given (an error the command reports
    as its own has its exit code; 0 otherwise)."""

    def __init__(self, location: Path | str, root: Path, settings: Settings, handlers: dict[str, Handler],
                 on_answer: Callable[[str, float, int], object] | None = None) -> None:
        self.path = socket_path(location, create=True)
        self.root, self.fingerprint, self.handlers = str(root), fingerprint(settings), handlers
        self.on_answer = on_answer or (lambda _command, _seconds, _exit: None)
        self._server: socketserver.ThreadingUnixStreamServer | None = None
        self._inode: int | None = None

    def start(self) -> str:
        """Listen in a thread; "" once listening, else why not (another process answers here, a path too
        long for a socket, a directory this process cannot write)."""
        if self.path is None:
            return "the index is remote, or no private directory for a socket could be made"
        if self.path.exists() or self.path.is_symlink():
            if _answered(self.path):
                return f"another acms process answers at {self.path}"
            self.path.unlink(missing_ok=True)  # left by a watcher that was killed
        owner = self

        class Handle(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                owner._handle(self.connection, self.rfile, self.wfile)

        class Server(socketserver.ThreadingUnixStreamServer):
            daemon_threads = True

        try:
            server = Server(os.fspath(self.path), Handle)
            os.chmod(self.path, stat.S_IRUSR | stat.S_IWUSR)
            self._inode = os.lstat(self.path).st_ino
        except OSError as exc:
            return f"cannot listen at {self.path}: {exc.strerror or exc}"
        self._server = server
        threading.Thread(target=server.serve_forever, name="acms-answering", daemon=True).start()
        return ""

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None or self.path is None:
            return
        server.shutdown()
        server.server_close()
        try:
            if os.lstat(self.path).st_ino == self._inode:  # not a later watcher's
                self.path.unlink()
        except OSError:
            pass

    def _handle(self, conn: socket.socket, rfile: Any, wfile: Any) -> None:
        if not _same_user(conn):
            return
        start = time.perf_counter()
        try:
            message = json.loads(rfile.read())
            reply = self._answer(message) if isinstance(message, dict) else {"declined": "not a message"}
        except (ValueError, KeyError, TypeError):  # not what a command sends
            reply = {"declined": "not a message"}
        try:
            wfile.write(json.dumps(reply).encode("utf-8"))
        except OSError:  # the command gave up waiting: it runs on its own
            return
        if "stdout" in reply:
            self.on_answer(str(message["command"]), time.perf_counter() - start, int(reply.get("exit", 0)))

    def _answer(self, message: dict[str, Any]) -> dict[str, Any]:
        handler = self.handlers.get(str(message.get("command")))
        if handler is None or message.get("protocol") != PROTOCOL or message.get("version") != __version__:
            return {"declined": "another protocol or acms version"}
        if message.get("root") != self.root or message.get("settings") != self.fingerprint:
            return {"declined": "another project root or other settings"}
        try:
            return handler(message)
        except (AcmsError, OSError) as exc:  # the command on its own reports it, as it always does
            return {"declined": f"error: {exc}"}


def _answered(path: Path) -> bool:
    """Whether a process listens at ``path`` (a socket file outlives a watcher killed with -9)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(CONNECT_SECONDS)
            conn.connect(os.fspath(path))
        return True
    except OSError:
        return False


def _same_user(conn: socket.socket) -> bool:
    """The peer runs as this process's user (Linux's SO_PEERCRED; elsewhere the socket's mode decides)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    try:
        _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    except OSError:
        return False
    return uid == os.getuid()
