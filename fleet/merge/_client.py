"""The driver's side of the warm merge server (:mod:`fleet.merge._server`).

When git's line merge conflicts, the driver asks a per-user server that has already imported
libcst and the merge's modules to run the same ``main(argv)`` for it: :func:`merge` passes its
argv, working directory, environment and its stdin/stdout/stderr (``SCM_RIGHTS``) over an
``AF_UNIX`` socket and gets the exit status back. ``None`` means "merge in this process": the
server is disabled (``FLEET_MERGE_SERVER=0``), absent (one is then started, detached, and this
merge does not wait for it), or unusable (it refuses, serves another version of the code, breaks
the protocol or dies mid-request).

This module is imported by the driver only after a line conflict and imports nothing but the
interpreter's own ``_socket`` (and ``fcntl`` when it starts a server): no ``socket``, ``json``,
``hashlib`` or ``subprocess``, which cost more than the request.

The socket lives in a private (0700, ours) directory: ``$FLEET_MERGE_SERVER_DIR``, else
``$XDG_RUNTIME_DIR/fleet``, else ``/tmp/fleet-merge-<uid>``. Its name holds a hash of the code
the server runs (:func:`code_key`: the interpreter, ``fleet/merge``'s sources' sizes and mtimes,
the ``site-packages`` folder's mtime), and the server checks the whole key on every request, so
a changed install is never served by a server of the old code.

Protocol (version 1), one request per connection: the client sends ``MAGIC``, the payload's
length (4 bytes, big-endian) and the payload (NUL-separated: command, key, cwd, argc, argv...,
environment entries ``NAME=value``), with its three file descriptors attached. For ``merge`` the
server's child answers ``R`` (ready) or ``V`` (another version: not used); the client answers
``G`` (go), and from then on the child owns the merge until it sends ``S`` and the status byte.
Any other byte, a timeout before ``R`` or an end of stream before the status: the client merges
in its own process.
"""

import os
import sys

TYPE_CHECKING = False  # typing's constant would import typing: start-up time
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "DIR_ENV",
    "ENABLE_ENV",
    "IDLE_ENV",
    "MAGIC",
    "code_key",
    "decode_request",
    "encode_request",
    "merge",
    "paths",
    "server_dir",
    "start_server",
    "stop_servers",
]

MAGIC = b"FLEETMERGE/1\n"
ENABLE_ENV = "FLEET_MERGE_SERVER"  # "0" (or off/no/false): never use nor start a server
DIR_ENV = "FLEET_MERGE_SERVER_DIR"  # where the socket, lock and log live (tests, benchmarks)
IDLE_ENV = "FLEET_MERGE_SERVER_IDLE"  # seconds without a request before the server exits
IDLE_DEFAULT = 600.0
READY_TIMEOUT = 3.0  # seconds for the server's child to answer R: a stopped server is skipped


def enabled(environ: "Mapping[str, str]") -> bool:
    return environ.get(ENABLE_ENV, "1").strip().lower() not in ("0", "no", "off", "false")


def package_root() -> str:
    """The folder that holds the ``fleet`` package this module belongs to."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def code_key(root: str | None = None) -> str:
    """What a server must run to serve this client: the interpreter, the protocol, the size and
    mtime of every source of ``fleet/merge`` and of the ``fleet`` modules it imports, and the
    mtime of the interpreter's ``site-packages`` (libcst's install). Without a hash library: the
    whole text is compared by the server, only the socket's name is a hash of it."""
    root = root or package_root()
    parts = [sys.executable, sys.version, MAGIC.decode().strip()]
    fleet = os.path.join(root, "fleet")
    files = [os.path.join(fleet, n) for n in ("__init__.py", "errors.py", "pyast.py")]
    merge_dir = os.path.join(fleet, "merge")
    files += sorted(
        os.path.join(merge_dir, name) for name in os.listdir(merge_dir) if name.endswith(".py")
    )
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    # Beside the interpreter, not sys.prefix: under -S a virtualenv's prefix is not set yet.
    prefix = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    files.append(os.path.join(prefix, "lib", f"python{version}", "site-packages"))
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            parts.append(f"{path}:-")
            continue
        parts.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(parts)


def _name(key: str) -> str:
    """FNV-1a, 64 bits, of the key: the socket's name (no hash module to import)."""
    value = 0xCBF29CE484222325
    for byte in key.encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"merge-{value:016x}"


def server_dir(environ: "Mapping[str, str]") -> str:
    given = environ.get(DIR_ENV, "")
    if given:
        return given
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if runtime:
        return os.path.join(runtime, "fleet")
    return f"/tmp/fleet-merge-{os.getuid()}"


def private_dir(folder: str, create: bool = True) -> bool:
    """Create ``folder`` (0700) if needed and ``create``; True if it is a directory of ours that
    nobody else can enter (otherwise another user could stand in for the server)."""
    try:
        if create:
            os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    is_dir = (st.st_mode & 0o170000) == 0o040000
    return is_dir and st.st_uid == os.getuid() and (st.st_mode & 0o077) == 0


def paths(folder: str, key: str) -> tuple[str, str, str]:
    """The server's socket, lock file and log for ``key`` in ``folder``."""
    stem = os.path.join(folder, _name(key))
    return stem + ".sock", stem + ".lock", stem + ".log"


def encode_request(command: str, key: str, argv: list[str]) -> bytes:
    fields = [command.encode(), key.encode("utf-8", "surrogateescape"), os.getcwdb()]
    fields.append(str(len(argv)).encode())
    fields += [os.fsencode(arg) for arg in argv]
    fields += [name + b"=" + value for name, value in os.environb.items()]
    payload = b"\0".join(fields)
    return MAGIC + len(payload).to_bytes(4, "big") + payload


def decode_request(payload: bytes) -> tuple[str, str, bytes, list[str], dict[bytes, bytes]]:
    """(command, key, cwd, argv, environment) of a request's payload; ValueError if malformed."""
    fields = payload.split(b"\0")
    command, cwd, argc = fields[0].decode(), fields[2], int(fields[3])
    key = fields[1].decode("utf-8", "surrogateescape")
    if argc < 0 or len(fields) < 4 + argc:
        raise ValueError("truncated request")
    argv = [os.fsdecode(arg) for arg in fields[4 : 4 + argc]]
    environ = {}
    for entry in fields[4 + argc :]:
        name, sep, value = entry.partition(b"=")
        if not sep:
            raise ValueError("malformed environment entry")
        environ[name] = value
    return command, key, cwd, argv, environ


def _recv_exact(sock: "_Socket", size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _std_fds() -> tuple[list[int], list[int]]:
    """The three descriptors to pass (a closed one replaced by ``/dev/null``), and the ones
    opened here to close afterwards."""
    given, opened = [], []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            given.append(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            opened.append(null)
            given.append(null)
    return given, opened


def merge(argv: list[str]) -> int | None:
    """Run the driver's ``main(argv)`` in the warm server with this process's working directory,
    environment and standard streams; its exit status, or None when this process must merge
    itself (see the module docstring). Never raises, never waits for a server to start."""
    if not enabled(os.environ):
        return None
    try:
        import _socket

        key = code_key()
        folder = server_dir(os.environ)
        if not private_dir(folder):
            return None
        sock_path, _, _ = paths(folder, key)
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except (OSError, ValueError):
        return None
    opened: list[int] = []
    try:
        sock.settimeout(READY_TIMEOUT)
        try:
            sock.connect(sock_path)
        except (FileNotFoundError, ConnectionRefusedError):
            start_server(key, folder)
            return None
        fds, opened = _std_fds()
        rights = b"".join(fd.to_bytes(4, sys.byteorder) for fd in fds)
        request = encode_request("merge", key, argv)
        sent = sock.sendmsg([request], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
        if sent < len(request):
            sock.sendall(request[sent:])
        if _recv_exact(sock, 1) != b"R":
            return None
        sock.sendall(b"G")
        sock.settimeout(None)  # the child owns the merge now: as long as it takes
        reply = _recv_exact(sock, 2)
        if len(reply) != 2 or reply[:1] != b"S":
            return None
        return reply[1]
    except (OSError, ValueError):
        return None
    finally:
        sock.close()
        for fd in opened:
            os.close(fd)


def start_server(key: str, folder: str) -> bool:
    """Start the server for ``key`` detached (its own session, double fork, output to its log)
    unless one holds the lock (starting or running). Returns at once: True if one was started."""
    import fcntl

    _, lock_path, log_path = paths(folder, key)
    try:
        lock = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # a server of this code is starting or running
    finally:
        os.close(lock)  # the server takes the lock itself (two starting at once: one stays)
    idle = os.environ.get(IDLE_ENV, "") or str(IDLE_DEFAULT)
    boot = (
        "import sys; sys.path.insert(0, sys.argv[1]); from fleet.merge._server import main;"
        " raise SystemExit(main(sys.argv[2:]))"
    )
    command = [sys.executable, "-S", "-c", boot, package_root(), folder, idle]
    pid = os.fork()
    if pid == 0:  # pragma: no cover (a forked child: measured by the tests from outside)
        try:
            os.setsid()
            if os.fork() > 0:
                os._exit(0)
            null = os.open(os.devnull, os.O_RDWR)
            log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.dup2(null, 0)
            os.dup2(log, 1)
            os.dup2(log, 2)
            os.closerange(3, max(os.sysconf("SC_OPEN_MAX"), 3))  # git's pipes stay git's
            os.chdir("/")
            os.execv(sys.executable, command)
        finally:
            os._exit(127)
    os.waitpid(pid, 0)
    return True


def stop_servers(environ: "Mapping[str, str]") -> int:
    """Ask every merge server in this user's directory to exit (whatever code it runs); the
    number that acknowledged."""
    import _socket

    folder = server_dir(environ)
    if not private_dir(folder):
        return 0
    stopped = 0
    for name in sorted(os.listdir(folder)):
        if not (name.startswith("merge-") and name.endswith(".sock")):
            continue
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            sock.settimeout(READY_TIMEOUT)
            sock.connect(os.path.join(folder, name))
            sock.sendall(encode_request("stop", "", []))
            stopped += _recv_exact(sock, 1) == b"T"
        except OSError:
            pass
        finally:
            sock.close()
    return stopped


if TYPE_CHECKING:
    from _socket import socket as _Socket
