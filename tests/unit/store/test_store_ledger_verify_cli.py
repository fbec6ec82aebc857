"""``fleet ledger verify`` and ``fleet ledger checkpoint`` as a user runs them (real
subprocesses, real SQLite files, a real git repository with hand-over notes): tampering is
found, and a store that is missing, empty, corrupted or holds unreadable rows gives one line --
never a traceback, never a fresh schema."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fleet.forge._git import add_note
from fleet.store import open_store
from fleet.store.checkpoint import NOTES_REF


def fleet(cwd: Path, *args: str, url: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FLEET_STORE_URL": url or f"sqlite:///{cwd / 'fleet.db'}"}
    return subprocess.run(
        [sys.executable, "-m", "fleet_pipelines.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )


def _one_line_error(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    return lines[0]


def _fill(tmp_path: Path, n: int) -> None:
    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as store:
        for i in range(n):
            store.ledger.append("step", {"i": i}, unit="u")


def _tamper(tmp_path: Path, *statements: str) -> None:
    with open_store(f"sqlite:///{tmp_path / 'fleet.db'}") as store, store.db.write() as tx:
        tx.raw("DROP TRIGGER ledger_no_update")
        tx.raw("DROP TRIGGER ledger_no_delete")
        for statement in statements:
            tx.raw(statement)


def test_a_checkpoint_file_finds_deleted_events(tmp_path: Path) -> None:
    _fill(tmp_path, 30)
    wrote = fleet(tmp_path, "ledger", "checkpoint", "--out", "head.txt")
    assert wrote.returncode == 0, wrote.stderr
    assert (tmp_path / "head.txt").read_text().startswith("fleet-ledger-checkpoint seq=30 ")
    ok = fleet(tmp_path, "ledger", "verify", "--against", "head.txt")
    assert ok.returncode == 0 and "30 events, 1 checkpoint(s) hold" in ok.stdout
    _tamper(tmp_path, "DELETE FROM ledger WHERE seq > 20")
    assert fleet(tmp_path, "ledger", "verify").returncode == 0  # the chain alone holds
    broken = fleet(tmp_path, "ledger", "verify", "--against", "head.txt")
    assert broken.returncode == 1
    assert "ends at seq 20 but had reached seq 30 (events deleted)" in broken.stdout


def test_verify_holds_the_ledger_against_the_hand_over_notes(
    tmp_path: Path, git_repo: Path
) -> None:
    _fill(tmp_path, 5)
    head = fleet(tmp_path, "ledger", "checkpoint").stdout.strip()
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=git_repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    add_note(git_repo, NOTES_REF, commit, head)
    url = f"sqlite:///{tmp_path / 'fleet.db'}"
    ok = fleet(git_repo, "ledger", "verify", url=url)  # the repository of the cwd
    assert ok.returncode == 0 and "1 checkpoint(s) hold" in ok.stdout, ok.stdout + ok.stderr
    _tamper(tmp_path, "DELETE FROM ledger WHERE seq > 3")
    broken = fleet(tmp_path, "ledger", "verify", "--repo", str(git_repo))
    assert broken.returncode == 1 and f"hand-over {commit[:12]}" in broken.stdout


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "no fleet store at"),
        (b"", "is empty (0 bytes)"),
        (b"PK\x03\x04 a zip file, not a database" * 50, "is not a SQLite database"),
        (b"SQLite format 3\x00" + bytes(range(256)) * 16, "file is not a database"),
    ],
)
def test_a_missing_empty_or_corrupted_store_is_one_line(
    tmp_path: Path, content: bytes | None, says: str
) -> None:
    path = tmp_path / "fleet.db"
    if content is not None:
        path.write_bytes(content)
    line = _one_line_error(fleet(tmp_path, "ledger", "verify"))
    assert says in line
    assert (path.read_bytes() if path.exists() else None) == content  # no schema was made
    assert says in _one_line_error(fleet(tmp_path, "ledger", "checkpoint"))


def test_a_truncated_real_store_is_one_line(tmp_path: Path) -> None:
    _fill(tmp_path, 200)
    path = tmp_path / "fleet.db"
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    out = fleet(tmp_path, "ledger", "verify")
    assert out.returncode in (1, 2) and "Traceback" not in out.stderr, out.stderr
    if out.returncode == 2:
        _one_line_error(out)


def test_a_non_json_payload_and_a_text_created_at_are_listed(tmp_path: Path) -> None:
    _fill(tmp_path, 4)
    _tamper(
        tmp_path,
        "UPDATE ledger SET payload = '{broken' WHERE seq = 2",
        "UPDATE ledger SET created_at = 'noon' WHERE seq = 3",
    )
    out = fleet(tmp_path, "ledger", "verify")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "seq 2: payload is not valid JSON" in out.stdout
    assert "seq 3: created_at is not a number: 'noon'" in out.stdout
    assert "2 problem(s) in 4 events" in out.stderr


def test_a_bad_checkpoint_file_is_one_line(tmp_path: Path) -> None:
    _fill(tmp_path, 2)
    (tmp_path / "bad.txt").write_text("seq=2 hash=nothex\n")
    assert "expected one line" in _one_line_error(
        fleet(tmp_path, "ledger", "verify", "--against", "bad.txt")
    )
    assert "cannot read it" in _one_line_error(
        fleet(tmp_path, "ledger", "verify", "--against", "missing.txt")
    )


def test_another_sqlite_database_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "fleet.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (x)")
    conn.close()
    before = path.read_bytes()
    assert "not a fleet store" in _one_line_error(fleet(tmp_path, "ledger", "verify"))
    assert path.read_bytes() == before  # not switched to WAL, no schema added
