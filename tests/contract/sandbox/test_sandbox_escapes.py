"""Escape attempts: every one must fail in every isolating backend (bwrap, gvisor, microvm)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox import Limits, Sandbox

pytestmark = pytest.mark.sandbox

PY = sys.executable


class _HostListeners:
    """A TCP and a UDP socket on the host's 127.0.0.1 recording whatever reaches them."""

    def __init__(self) -> None:
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.tcp.settimeout(0.2)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.settimeout(0.2)
        self.hits: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.tcp.accept()
                self.hits.append("tcp")
                conn.close()
            except OSError:
                pass
            try:
                self.udp.recvfrom(100)
                self.hits.append("udp")
            except OSError:
                pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.tcp.close()
        self.udp.close()


@pytest.fixture
def listeners() -> Iterator[_HostListeners]:
    served = _HostListeners()
    yield served
    served.close()


NET_PROBE = """
import json, socket, sys
tcp_port, udp_port = int(sys.argv[1]), int(sys.argv[2])
out = {}
def attempt(name, fn):
    try:
        fn()
        out[name] = "reached"
    except OSError as exc:
        out[name] = type(exc).__name__
def tcp(host, port):
    s = socket.create_connection((host, port), timeout=2)
    s.close()
def udp(host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.connect((host, port))
    s.send(b"escape")
    s.close()
attempt("tcp_host_loopback", lambda: tcp("127.0.0.1", tcp_port))
attempt("tcp_outside", lambda: tcp("1.1.1.1", 53))
attempt("tcp_outside_http", lambda: tcp("93.184.215.14", 80))
attempt("dns", lambda: socket.getaddrinfo("pypi.org", 443))
attempt("udp_outside_dns", lambda: udp("8.8.8.8", 53))
try:  # may "succeed" into the sandbox's own loopback: the host listener must not receive it
    udp("127.0.0.1", udp_port)
except OSError:
    pass
print(json.dumps(out))
"""


@pytest.mark.backends("isolating")
def test_no_network_to_host_loopback_or_outside(
    box: Sandbox, worktree: Path, listeners: _HostListeners
) -> None:
    tcp_port = listeners.tcp.getsockname()[1]
    udp_port = listeners.udp.getsockname()[1]
    res = box.run([PY, "-c", NET_PROBE, str(tcp_port), str(udp_port)], worktree, timeout=120)
    assert res.ok, res.stderr
    attempts = json.loads(res.stdout.strip().splitlines()[-1])
    assert set(attempts) == {
        "tcp_host_loopback",
        "tcp_outside",
        "tcp_outside_http",
        "dns",
        "udp_outside_dns",
    }
    assert all(v != "reached" for v in attempts.values()), attempts
    assert listeners.hits == []


@pytest.mark.backends("isolating")
def test_host_secrets_are_invisible(
    box: Sandbox, worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = f"sk-ant-fleet-contract-{uuid.uuid4().hex}"
    secret = Path.home() / f".fleet-contract-secret-{uuid.uuid4().hex[:8]}"
    secret.write_text(token)
    monkeypatch.setenv("ANTHROPIC_API_KEY", token)
    try:
        script = (
            f"cat {secret} 2>/dev/null; echo; env; cat /etc/shadow 2>/dev/null | head -c 200; "
            f"echo LISTED=$(ls -a {Path.home()} 2>/dev/null | grep -c fleet-contract-secret)"
        )
        res = box.run(["/bin/sh", "-c", script], worktree, timeout=120)
    finally:
        secret.unlink()
    assert token not in res.stdout + res.stderr
    assert "ANTHROPIC_API_KEY" not in res.stdout
    assert "LISTED=0" in res.stdout
    assert "root:" not in res.stdout  # /etc/shadow is masked


@pytest.mark.backends("isolating")
def test_writes_outside_the_worktree_fail(box: Sandbox, worktree: Path) -> None:
    tag = uuid.uuid4().hex[:10]
    outside = worktree.parent / "outside"
    (worktree / "escape-link").symlink_to(outside)
    host_tmp = Path(tempfile.gettempdir()) / f"fleet-escape-{tag}"
    targets = [
        Path(f"/usr/fleet-escape-{tag}"),
        Path(f"/etc/fleet-escape-{tag}"),
        host_tmp,
        worktree.parent / f"parent-{tag}",
        outside / f"direct-{tag}",
    ]
    via_dotdot = f"../parent-dotdot-{tag}"
    via_link = f"escape-link/linked-{tag}"
    writes = [str(t) for t in targets] + [via_dotdot, via_link, f"inside-{tag}"]
    script = "; ".join(f"echo x > {w} 2>/dev/null" for w in writes) + "; true"
    res = box.run(["/bin/sh", "-c", script], worktree, timeout=120)
    assert res.reason.value == "exited"
    assert (worktree / f"inside-{tag}").read_text() == "x\n"  # the worktree is writable
    leaked = [t for t in targets if t.exists()]
    leaked += [
        p
        for p in (worktree.parent / f"parent-dotdot-{tag}", outside / f"linked-{tag}")
        if p.exists()
    ]
    for p in leaked:
        p.unlink()
    assert leaked == []


@pytest.mark.backends("isolating")
def test_host_processes_are_invisible(box: Sandbox, worktree: Path) -> None:
    marker = f"fleet-host-marker-{uuid.uuid4().hex[:8]}"
    host = subprocess.Popen(["/bin/sh", "-c", f"exec -a {marker} sleep 300"])
    try:
        script = "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done"
        res = box.run(["/bin/sh", "-c", script], worktree, timeout=120)
    finally:
        host.kill()
        host.wait()
    assert res.ok, res.stderr
    assert marker not in res.stdout
    visible = [line for line in res.stdout.splitlines() if line.strip()]
    assert 1 <= len(visible) < 10, visible  # only the sandbox's own few processes


def _host_is_fine() -> None:
    out = subprocess.run(["/bin/true"], timeout=10)
    assert out.returncode == 0


@pytest.mark.backends("fast_isolating")
def test_fork_bomb_is_stopped_by_a_limit(box: Sandbox, worktree: Path) -> None:
    limits = Limits(processes=64, memory_bytes=512 * 1024**2)
    res = box.run(
        ["/bin/bash", "-c", ":(){ :|:& };:; sleep 30"], worktree, timeout=60, limits=limits
    )
    assert res.reason.value == "killed_by_limit", (res.reason, res.wall_s, res.stderr[-300:])
    assert res.wall_s < 60
    _host_is_fine()


@pytest.mark.backends("isolating")
def test_memory_hog_is_killed_by_the_memory_limit(box: Sandbox, worktree: Path) -> None:
    hog = "b = bytearray(1024**3)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint('survived')"
    res = box.run([PY, "-c", hog], worktree, timeout=120, limits=Limits(memory_bytes=256 * 1024**2))
    assert res.reason.value == "killed_by_limit", (res.reason, res.exit_code, res.stderr[-300:])
    assert "survived" not in res.stdout
    if res.peak_memory_bytes is not None:
        assert res.peak_memory_bytes <= 300 * 1024**2
    _host_is_fine()


@pytest.mark.backends("isolating")
def test_cpu_time_limit(box: Sandbox, worktree: Path) -> None:
    res = box.run([PY, "-c", "while True: pass"], worktree, timeout=60, limits=Limits(cpu_s=1))
    assert res.reason.value == "killed_by_limit", res
    assert res.wall_s < 45


@pytest.mark.backends("isolating")
def test_file_size_limit(box: Sandbox, worktree: Path) -> None:
    res = box.run(
        ["/bin/sh", "-c", "head -c 5000000 /dev/zero > big.bin"],
        worktree,
        timeout=60,
        limits=Limits(file_bytes=1_000_000),
    )
    assert res.reason.value == "killed_by_limit", res
    assert (worktree / "big.bin").stat().st_size <= 1_000_000
