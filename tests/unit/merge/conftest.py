"""The warm merge server tests' socket directory (test_merge_server.py,
test_merge_server_faults.py; helpers in _server_support.py)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet.merge import _client
from tests.unit.merge._server_support import _alive, _kill_servers, _wait


@pytest.fixture
def folder(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private socket directory for this test's servers (short: AF_UNIX paths stop at 108
    bytes), the server turned on; every server started there is killed at the end."""
    path = Path(tempfile.mkdtemp(prefix="fms-", dir="/tmp"))
    monkeypatch.setenv(_client.ENABLE_ENV, "1")
    monkeypatch.setenv(_client.DIR_ENV, str(path))
    monkeypatch.setenv(_client.IDLE_ENV, "120")
    try:
        yield path
    finally:
        killed = _kill_servers(path)
        shutil.rmtree(path, ignore_errors=True)
        left = [pid for pid in killed if not _wait(lambda: not _alive(pid), 10)]  # noqa: B023
        assert left == []
