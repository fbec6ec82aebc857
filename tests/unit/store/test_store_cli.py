"""The store commands as a user runs them: real subprocesses of ``fleet`` on a real SQLite file,
and ``fleet serve`` answering a plain ``requests`` client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

from fleet.store import open_store


def fleet(tmp_path: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FLEET_STORE_URL": f"sqlite:///{tmp_path / 'fleet.db'}"}
    out = subprocess.run(
        [sys.executable, "-m", "fleet_pipelines.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    if check:
        assert out.returncode == 0, out.stderr
    return out


def test_memory_commands(tmp_path: Path) -> None:
    first = fleet(tmp_path, "memory", "add", "Never touch billing/", "--tag", "constraint")
    fleet(tmp_path, "memory", "add", "Freeze on Friday", "--tag", "deadline")
    listed = fleet(tmp_path, "memory", "list").stdout
    assert "[constraint] Never touch billing/" in listed and "Freeze on Friday" in listed
    assert "Freeze" not in fleet(tmp_path, "memory", "list", "--tag", "constraint").stdout
    fleet(tmp_path, "memory", "remove", first.stdout.strip())
    assert "billing" not in fleet(tmp_path, "memory", "list").stdout
    assert fleet(tmp_path, "memory", "remove", "999", check=False).returncode == 1


def test_ledger_show_and_verify(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as store:
        store.ledger.append("lease.granted", {"symbol": "a.py::X"}, unit="u1", campaign="c1")
        store.ledger.append("verdict", {"gate": "tests"}, unit="u2", campaign="c1")
    shown = fleet(tmp_path, "ledger", "show", "--unit", "u2").stdout
    assert "verdict" in shown and "lease.granted" not in shown
    assert len(fleet(tmp_path, "ledger", "show", "--campaign", "c1").stdout.splitlines()) == 2
    assert fleet(tmp_path, "ledger", "show", "--kind", "nope").stdout == ""
    assert "ledger verifies: 2 events" in fleet(tmp_path, "ledger", "verify").stdout
    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as store, store.db.write() as tx:
        tx.raw("DROP TRIGGER ledger_no_update")
        tx.raw('UPDATE ledger SET payload = \'{"gate":"none"}\' WHERE seq = 2')
    broken = fleet(tmp_path, "ledger", "verify", check=False)
    assert broken.returncode == 1 and "seq 2: hash does not match" in broken.stdout


def test_token_create_and_serve(tmp_path: Path) -> None:
    out = fleet(tmp_path, "token", "create", "--scope", "leases", "--name", "agent-7")
    token = out.stdout.strip()
    assert token.startswith("fleet_") and "scopes leases" in out.stderr
    assert fleet(tmp_path, "token", "create", "--scope", "root", check=False).returncode == 2
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "FLEET_STORE_URL": f"sqlite:///{tmp_path / 'fleet.db'}"}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fleet_pipelines.cli",
            "serve",
            "--port",
            str(port),
            "--repo",
            str(tmp_path),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(base + "/openapi.json", timeout=1)
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline and server.poll() is None
                time.sleep(0.1)
        got = requests.post(
            base + "/v1/leases/acquire",
            json={"file_path": "src/app.py", "symbol": "App.run"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=10,
        )
        assert got.status_code == 200 and got.json()["acquired"] is True
        assert requests.post(base + "/v1/leases/acquire", json={}, timeout=10).status_code == 401
    finally:
        server.terminate()
        server.communicate(timeout=10)
