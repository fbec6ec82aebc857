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


@pytest.fixture(scope="session", autouse=True)
def _isolated_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """What a fresh machine lacks and what parallel workers must not share: a ``DAGSTER_HOME``
    of this session's own (``make`` exports the repository's ``.fleet/dagster``), and a git
    identity when the user has none configured (a global config beside the user's own)."""
    saved = {k: os.environ.get(k) for k in ("DAGSTER_HOME", "GIT_CONFIG_GLOBAL")}
    home = tmp_path_factory.mktemp("dagster_home")
    os.environ["DAGSTER_HOME"] = str(home)
    identity = subprocess.run(["git", "config", "user.email"], capture_output=True, check=False)
    if identity.returncode != 0:
        config = tmp_path_factory.mktemp("git") / "gitconfig"
        user = Path.home() / ".gitconfig"
        config.write_text((user.read_text() if user.is_file() else "")
                          + "\n[user]\n\tname = fleet test\n\temail = test@fleet.invalid\n")
        os.environ["GIT_CONFIG_GLOBAL"] = str(config)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


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


def three_repositories(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    """Issue 21's sequence: A (``main``) and B (``master``) with ``files``, C a clone of A
    without ``billing/``."""
    repos = {}
    for name, branch in (("A", "main"), ("B", "master")):
        repo = tmp_path / name
        repo.mkdir()
        git(repo, "init", "-q", "-b", branch)
        repos[name] = commit_files(repo, files, f"{name}: initial")
    git(tmp_path, "clone", "-q", str(repos["A"]), str(tmp_path / "C"))
    repos["C"] = tmp_path / "C"
    git(repos["C"], "rm", "-q", "-r", "billing")
    git(repos["C"], "commit", "-q", "-m", "C: no billing")
    return repos


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
def pg_admin_dsn() -> Iterator[str]:
    """DSN of a PostgreSQL database whose role may CREATE DATABASE: ``FLEET_TEST_PG_DSN`` when
    set, else a throwaway cluster this test session (or xdist worker) starts from the installed
    server binaries and removes at the end (``tests/_pgcluster.py``)."""
    dsn = os.environ.get("FLEET_TEST_PG_DSN")
    if dsn:
        yield dsn
        return
    from tests._pgcluster import start_cluster

    try:
        cluster = start_cluster()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    try:
        yield cluster.dsn
    finally:
        cluster.destroy()


@pytest.fixture(scope="session")
def pg_template(pg_admin_dsn: str) -> Iterator[str]:
    """The name of one empty template database per session, cloned by every ``pg_dsn``
    (``CREATE DATABASE ... TEMPLATE``: no connection ever opens it, so cloning never waits).
    Unique per session: several sessions and xdist workers may share one server."""
    import psycopg

    name = f"fleet_tpl_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_admin_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0 ENCODING \'UTF8\'')
    try:
        yield name
    finally:
        with psycopg.connect(pg_admin_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_dsn(pg_admin_dsn: str, pg_template: str) -> Iterator[str]:
    """A fresh, empty database for one test (a clone of the session's template), dropped
    afterwards."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = f"fleet_t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_admin_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{pg_template}"')
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
