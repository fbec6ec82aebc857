"""Shared fixtures: real git repositories, real PostgreSQL databases, a real SQLite store, the
bubblewrap sandbox, and the CI rule that a skip is a failure (CI provides every service, so a
skipped test there is a missing install step)."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet.store import Store, open_store
from sandbox import Sandbox

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_REPO = ROOT / "examples" / "acme-monorepo"
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.longrepr = f"skipped in CI, which must provide everything: {reason}"


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "fleet test",
        "GIT_AUTHOR_EMAIL": "test@fleet.invalid",
        "GIT_COMMITTER_NAME": "fleet test",
        "GIT_COMMITTER_EMAIL": "test@fleet.invalid",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def commit_files(repo: Path, files: dict[str, str], message: str) -> Path:
    """Write ``files`` (relative path -> text) into ``repo`` and commit them all."""
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return repo


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """An empty git repository with one commit on ``main``."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("test repo\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    return repo


@pytest.fixture
def acme_repo(tmp_path: Path) -> Path:
    """A git copy of examples/acme-monorepo (one commit on ``main``); the original is untouched."""
    repo = tmp_path / "acme"
    shutil.copytree(
        EXAMPLE_REPO, repo, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache")
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "acme base")
    return repo


@pytest.fixture(scope="session")
def pg_admin_dsn() -> str:
    """DSN of a PostgreSQL database whose role may CREATE DATABASE (``FLEET_TEST_PG_DSN``)."""
    dsn = os.environ.get("FLEET_TEST_PG_DSN")
    if not dsn:
        pytest.skip("FLEET_TEST_PG_DSN is not set (.ci/run starts PostgreSQL and sets it)")
    return dsn


@pytest.fixture
def pg_dsn(pg_admin_dsn: str) -> Iterator[str]:
    """A fresh, empty database for one test, dropped afterwards."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = f"fleet_t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_admin_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(pg_admin_dsn)
    params["dbname"] = name
    try:
        yield make_conninfo(**params)  # type: ignore[arg-type]
    finally:
        with psycopg.connect(pg_admin_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def store_url(tmp_path: Path) -> str:
    """A real SQLite fleet store file in the test's tmp dir (the embedded default)."""
    return f"sqlite:///{tmp_path / 'fleet.db'}"


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    """The store at ``store_url``, opened for the test and closed after it."""
    with open_store(store_url) as opened:
        yield opened


@pytest.fixture
def bwrap() -> Sandbox:
    """The bubblewrap sandbox (fast and real); skipped only where bwrap is not installed."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    from sandbox import make_sandbox

    return make_sandbox("bwrap")
