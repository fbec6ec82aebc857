"""The warm merge server: a per-user process that has imported libcst and the merge's modules
once, so that a git-conflicted file does not pay their import in every driver process.

The driver (:mod:`fleet.merge._client`) starts it detached when none answers; it then takes the
lock ``merge-<hash>.lock`` (one server per version of the code: a second one exits at once),
merges a small sample to import everything the structural stage needs, and only then listens
on ``merge-<hash>.sock`` (so a client never waits for a server that is still starting). Each
request is served by a child forked for it (crash isolation; nothing carried from one merge to
the next): the child reads the request, checks the code key, chdirs, takes the client's
environment and standard streams and runs the driver's own ``main(argv)``, then sends the exit
status. The server exits after ``idle`` seconds without a request, on SIGTERM/SIGINT, or on a
``stop`` request (``fleet merge-driver --stop-server``).

Run in the foreground (tests)::

    python -S -c "import sys; sys.path.insert(0, ROOT); from fleet.merge._server import main;
        raise SystemExit(main(sys.argv[2:]))" ROOT FOLDER IDLE_SECONDS
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import select
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
import tokenize
import traceback
from typing import NoReturn

from fleet.merge._client import MAGIC, READY_TIMEOUT, code_key, decode_request, paths, private_dir

__all__ = ["main", "serve"]

# Warm-up: lines conflict on the imports and inside a class, with comments, a docstring, a
# decorator and strings, so that the structural stage's paths (tokenize's patterns, libcst's
# code generation) are compiled once in the server, not in every request's child.
_SAMPLE = '''"""A module."""

import os
from typing import Any  # a comment


@decorator(1)
class C(Base):
    """A class."""

    x: int = 1

    def f(self, a, b=2):
        # body
        return f"{a} {b}" + 'x'

    def g(self):
        return [1, 2, 3]


def h(*args: Any, **kwargs: Any) -> None:
    if args:
        print(args, kwargs)
    else:
        pass
'''
_MAX_REQUEST = 1 << 20


def _log(message: str) -> None:
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    print(f"{stamp} fleet merge server [{os.getpid()}]: {message}", flush=True)


def _warm() -> None:
    """Merge a small conflicted Python sample in this process: every module the structural
    stage needs (libcst included) is imported before the first request."""
    from fleet.merge import driver

    ours = _SAMPLE.replace("import os\n", "import os\nimport re\n").replace("b=2", "b=3")
    ours = ours.replace("    x: int = 1\n", "    x: int = 1\n    y = 'y'\n")
    theirs = _SAMPLE.replace("import os\n", "import os\nimport sys\n").replace("1, 2", "1, 4")
    theirs = theirs.replace("print(args, kwargs)", "print(args,  kwargs)  # twice")
    with tempfile.TemporaryDirectory(prefix="fleet-merge-warm-") as tmp:
        files = [os.path.join(tmp, name) for name in ("base.py", "ours.py", "theirs.py")]
        for name, text in zip(files, (_SAMPLE, ours, theirs), strict=True):
            with open(name, "w", encoding="utf-8") as handle:
                handle.write(text)
        status = driver.main([*files, "warm.py"], use_server=False)
    for text in (_SAMPLE, ours, theirs):  # tokenize's patterns (lru-cached) when it did not run
        list(tokenize.generate_tokens(io.StringIO(text).readline))
    _log(f"warmed up (sample merge exit {status})")


def main(argv: list[str]) -> int:
    """``FOLDER IDLE_SECONDS``: serve until idle, stopped or killed (see the module docstring)."""
    if len(argv) != 2:
        print("usage: _server FOLDER IDLE_SECONDS", file=sys.stderr)
        return 2
    if sys.flags.no_site and "site" not in sys.modules:  # started with -S: libcst needs site
        import site

        site.main()
    return serve(argv[0], float(argv[1]))


def serve(folder: str, idle: float) -> int:
    if not private_dir(folder, create=False):  # the driver made it; gone means not wanted
        _log(f"{folder} is not a private directory of ours: not serving")
        return 1
    key = code_key()
    sock_path, lock_path, log_path = paths(folder, key)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(log, 1)  # started by the driver or by hand, the server writes to its log
    os.dup2(log, 2)
    os.close(log)
    lock = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        import fcntl

        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server of this code is starting or running
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode())
    try:
        _warm()
    except Exception:
        # Holding the lock without listening: drivers merge in their own processes and start
        # no other server of this code until the idle time has passed (no start at every file).
        _log(f"warm-up failed, not serving for {idle:g} s:\n{traceback.format_exc()}")
        time.sleep(idle)
        return 1
    if code_key() != key:
        _log("the code changed while starting: not serving it")
        return 1
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # Bound under a name of its own and moved into place once listening, so the path never
    # names a socket that refuses connections (a driver that came in between would merge in its
    # own process); bound in place where the longer name does not fit in an AF_UNIX address.
    staging = f"{sock_path}.{os.getpid()}"
    folder, name = os.path.split(sock_path)
    for entry in os.listdir(folder or "."):
        if entry.startswith(name + "."):  # a killed server's: we hold the lock
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, entry))
    try:
        listener.bind(staging)
    except OSError:
        staging = sock_path
        with contextlib.suppress(FileNotFoundError):
            os.unlink(sock_path)  # a dead server's: we hold the lock
        listener.bind(sock_path)
    os.chmod(staging, 0o600)
    listener.listen(128)
    if staging != sock_path:
        os.replace(staging, sock_path)  # a dead server's is replaced: we hold the lock
    listener.setblocking(False)
    inode = os.stat(sock_path).st_ino
    _log(f"serving {sock_path} (idle timeout {idle:g} s)")
    try:
        return _loop(listener, key, idle)
    finally:
        listener.close()
        try:
            if os.stat(sock_path).st_ino == inode:
                os.unlink(sock_path)
        except OSError:
            pass
        os.close(lock)


def _loop(listener: socket.socket, key: str, idle: float) -> int:
    stopping: list[int] = []
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGTERM, lambda signum, frame: stopping.append(signum))
    signal.signal(signal.SIGINT, lambda signum, frame: stopping.append(signum))
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # wakes select to reap
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    gc.collect()
    gc.freeze()  # children share the warm heap copy-on-write: the collector leaves it alone
    children: set[int] = set()
    last = time.monotonic()
    served = 0
    while not stopping:
        while children:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                children.clear()
                break
            if pid == 0:
                break
            children.discard(pid)
            last = time.monotonic()
        left = idle - (time.monotonic() - last)
        if not children and left <= 0:
            _log(f"idle for {idle:g} s after {served} requests: exiting")
            return 0
        ready, _, _ = select.select([listener.fileno(), wake_r], [], [], max(left, 0.05))
        if wake_r in ready:
            while True:
                try:
                    if not os.read(wake_r, 512):
                        break
                except BlockingIOError:
                    break
        if listener.fileno() in ready and not stopping:
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            pid = os.fork()
            if pid == 0:
                _child(conn, listener, (wake_r, wake_w), key)
            conn.close()
            children.add(pid)
            served += 1
            last = time.monotonic()
    _log(f"stopped by signal {stopping[0]} after {served} requests")
    return 0


def _receive(conn: socket.socket) -> tuple[bytes, list[int]]:
    """One request's payload and the descriptors passed with it; ValueError if malformed."""
    fds: list[int] = []
    data = b""
    head = len(MAGIC) + 4
    while len(data) < head:
        chunk, ancdata, flags, _ = conn.recvmsg(65536, socket.CMSG_SPACE(3 * 4))
        for level, kind, raw in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                usable = len(raw) - len(raw) % 4
                fds += [int.from_bytes(raw[i : i + 4], sys.byteorder) for i in range(0, usable, 4)]
        if flags & socket.MSG_CTRUNC:
            raise ValueError("descriptors truncated")
        if not chunk:
            raise ValueError("end of stream in the header")
        data += chunk
    if not data.startswith(MAGIC):
        raise ValueError("not this protocol version")
    size = int.from_bytes(data[len(MAGIC) : head], "big")
    if size > _MAX_REQUEST:
        raise ValueError("request too large")
    while len(data) < head + size:
        chunk = conn.recv(head + size - len(data))
        if not chunk:
            raise ValueError("end of stream in the payload")
        data += chunk
    return data[head:], fds


def _exit_when_gone(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.recv(1)
    os._exit(1)


def _child(
    conn: socket.socket, listener: socket.socket, wake: tuple[int, int], key: str
) -> NoReturn:
    """Serve one request in a forked child and exit (never returns to the server's loop)."""
    log = 2
    try:
        log = os.dup(2)
        listener.close()
        signal.set_wakeup_fd(-1)
        for fd in wake:
            os.close(fd)
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        conn.settimeout(READY_TIMEOUT)
        peer = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        if struct.unpack("3i", peer)[1] != os.getuid():  # the 0700 directory already says so
            _log("refused a request from another user")
            os._exit(0)
        fds: list[int] = []
        try:
            payload, fds = _receive(conn)
            command, their_key, cwd, argv, environ = decode_request(payload)
        except ValueError:
            for fd in fds:
                os.close(fd)
            conn.sendall(b"V")
            os._exit(0)
        if command == "stop":
            os.kill(os.getppid(), signal.SIGTERM)
            conn.sendall(b"T")
            os._exit(0)
        if command != "merge" or their_key != key or len(fds) != 3:
            conn.sendall(b"V")  # another version of the code: the client merges itself
            _log(f"refused a {command!r} request: another version of the code")
            os._exit(0)
        conn.sendall(b"R")
        if conn.recv(1) != b"G":
            os._exit(0)
        conn.settimeout(None)
        # The driver sends nothing more and waits: an end of stream means it was killed (git
        # aborted, ^C). Stop too, as the driver's own process would have, rather than write
        # OURS after git has moved on.
        threading.Thread(target=_exit_when_gone, args=(conn,), daemon=True).start()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(cwd)
        os.environb.clear()
        os.environb.update(environ)
        from fleet.merge import driver

        start = time.monotonic()
        status = driver.main(argv, use_server=False)
        sys.stdout.flush()
        sys.stderr.flush()
        took = (time.monotonic() - start) * 1000
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
        name = argv[3] if len(argv) > 3 else argv[1] if len(argv) > 1 else "?"
        line = f"{stamp} fleet merge server [{os.getpid()}]: served {name} exit {status} in"
        with contextlib.suppress(OSError):  # logged before the answer: the client reads it next
            os.write(log, f"{line} {took:.1f} ms\n".encode("utf-8", "replace"))
        null = os.open(os.devnull, os.O_RDWR)
        for target in (0, 1, 2):  # the driver's streams end with the driver, not this child
            os.dup2(null, target)
        conn.sendall(b"S" + bytes([status & 0xFF]))
    except BaseException:  # a child's fault: logged; the client merges in its own process
        with contextlib.suppress(OSError):
            os.write(log, traceback.format_exc().encode("utf-8", "replace"))
    finally:
        os._exit(0)
