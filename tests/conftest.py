"""Shared fixtures: real git repositories, real PostgreSQL databases, a real SQLite store, the
bubblewrap sandbox, and the CI rule that a skip is a failure (CI provides every service, so a
skipped test there is a missing install step)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from fleet.store import Store, open_store
from sandbox import Sandbox

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_REPO = ROOT / "examples" / "acme-monorepo"
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
# The merge driver's warm server (fleet.merge._server) would outlive the tests that run the driver
# as a process: off for the suite; tests/unit/merge/test_merge_server*.py turn it on, each with
# its own socket directory, and stop what they start.
os.environ["FLEET_MERGE_SERVER"] = "0"

# Each test's CPU (its worker's and what it reaped), the most expensive printed at the end.
pytest_plugins = ["tests._cpu"]


# The tests that take a minute or more (the slowest of ``--durations`` on a clean clone in CI),
# longest first. They run before every other test, so parallel workers (``make test``: xdist,
# ``--dist loadgroup``, which hands each idle worker the next test) take them side by side while
# the short ones fill in around them: a longest-first greedy schedule, whose length is about the
# longest test's, not the sum of the ones that happened to be collected last on one worker. The
# rest keep their collection order; a name that matches nothing is harmless.
LONG_FIRST = (
    "tests/pipelines/test_concurrent_sweeps.py::test_five_sweeps_at_once_then_a_normal_sweep",
    "tests/distributed/test_faults.py::test_a_worker_killed_mid_unit",
    "tests/pipelines/test_fleet_demo_command.py::test_demo_twice",
    "tests/distributed/test_faults.py::test_the_broker_restarted_mid_sweep",
    "tests/distributed/test_faults.py::test_the_daemon_killed_mid_sweep_and_started_again",
    "tests/engine/test_run_retries.py::"
    "test_a_launch_lost_with_its_daemon_is_retried_and_the_sweep_ends_verified",
    "tests/engine/test_submitted_sweep.py::test_sweep_submits_runs_that_the_ui_can_reexecute",
    "tests/distributed/test_deployment.py::test_batches_run_on_the_workers",
    "tests/pipelines/test_state_per_repository.py::"
    "test_three_repositories_on_one_shared_postgres_store",
    "tests/engine/test_shared_instance.py::test_sweep_on_the_shared_instance_uses_its_daemon",
    "tests/pipelines/test_state_per_repository.py::"
    "test_three_repositories_from_one_directory_with_the_default_home",
    "tests/pipelines/test_concurrent_sweeps.py::test_five_processes_create_one_instance",
    "tests/contract/sandbox/test_sandbox_behaviour.py::"
    "test_real_pytest_run_over_acme_monorepo[microvm]",
    "tests/pipelines/test_shared_dagster_home.py::test_three_repositories_on_one_explicit_dagster_home",
    "tests/pipelines/test_sweep_github_claude.py::test_sweep_hands_over_through_github_once",
    # under 30 s in CI but 120-270 s in a run at load 10-18 (the others above took 2-5 times
    # their CI time there)
    "tests/pipelines/test_span.py::test_a_span_on_one_shared_postgres_store",
    "tests/unit/graph/test_graph_native_extractor.py::"
    "test_same_result_as_the_query_path_on_the_whole_stdlib",
    "tests/pipelines/test_span.py::test_a_span_sweeps_each_repository_with_its_own_state",
    "tests/e2e/test_dagster_ui_browser.py::test_lineage_and_a_partitions_check_results_in_the_ui",
    "tests/pipelines/test_pipeline_chain.py::test_the_whole_chain_then_nothing_new",
    "tests/integration/test_remote_workers.py::"
    "test_one_worker_fixes_another_integrates_from_the_remote",
    "tests/pipelines/test_sweep_github_claude.py::"
    "test_sweep_with_the_claude_agent_applies_its_one_scripted_edit",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {nodeid: i for i, nodeid in enumerate(LONG_FIRST)}

    def key(item: pytest.Item) -> int:  # (under loadgroup a grouped test's id ends "@group")
        nodeid = item.nodeid
        return rank.get(nodeid, rank.get(nodeid.rpartition("@")[0], len(rank)))

    items.sort(key=key)  # stable: the rest in their order


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
        collector: pytest.Collector) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """A test module's import (pytest's assertion rewriting) may write bytecode. pytest keeps
    the rewritten module in ``__pycache__`` only when ``sys.dont_write_bytecode`` is false, and
    this project's machines set ``PYTHONDONTWRITEBYTECODE``: every xdist worker parsed and
    rewrote all ~330 test modules and the plugins' packages again (collection 11.7-13.9 CPU-s
    a process, 5.3-5.9 with the rewritten modules cached). Only here: every other import, and
    every process the tests start, keeps the environment's setting."""
    if not isinstance(collector, pytest.Module):
        return (yield)
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = before


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.longrepr = f"skipped in CI, which must provide everything: {reason}"


def _ignored(signum: int) -> bool:
    """Whether this process ignores ``signum`` (the kernel's view: set from C too)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    return False


# Dagster maps SIGTERM to whatever SIGINT's handler is whenever it runs in process
# (``dagster/_utils/interrupts.py``), and pytest started as a background job has SIGINT ignored:
# every in-process run then ignored SIGTERM, and so did each process started after it. The
# tests run with Python's own SIGINT handler.
if _ignored(signal.SIGINT):
    signal.signal(signal.SIGINT, signal.default_int_handler)
_TERM_IGNORED_AT_START = _ignored(signal.SIGTERM)


@pytest.fixture(autouse=True)
def _termination_not_ignored() -> Iterator[None]:
    """A test that leaves SIGTERM ignored in its worker hands that to every process the
    worker's later tests start (ignored signals survive fork and exec): Dagster's log ``tail``
    processes and code servers then outlive SIGTERM, a run ends only after two 30 s waits and
    daemons leak (seen on 5 Dec when a worker ran the dispatch tests after such a test). Each
    test starts with SIGTERM as it found it."""
    yield
    if _ignored(signal.SIGTERM) and not _TERM_IGNORED_AT_START:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


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
    from tests._pgcluster import throwaway_database

    with throwaway_database(pg_admin_dsn, "fleet_t_", template=pg_template) as dsn:
        yield dsn


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
