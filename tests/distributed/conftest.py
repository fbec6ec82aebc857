"""One multi-worker deployment for the tests of this directory (tests/distributed/_cluster.py):
starting it (Redis, git daemon, the Dagster daemon, 3 workers) takes ~30-60 s, so they share it
(under ``make test``'s ``--dist loadgroup`` one per ``xdist_group``: two, side by side);
each test sweeps its own new findings, pushed to the remote first, so the earlier tests' units
are history to it. A batch whose worker died is put back on the queue by another worker once
its claim has lapsed (``FLEET_CELERY_CLAIM_TTL_S`` 6 s here, 30 by default, confirmed half a TTL
later, scans every 2 s: ``FLEET_CELERY_RESTORE_S``; fleet_pipelines/engine/_claims.py); the
visibility timeout, 600 s here, is only the last resort (it was the only way, at 60 s, until
claims); the dead worker's leases are free 30 s after its last heartbeat (``FLEET_LEASE_TTL_S``,
60 s by default; renewed every 10 s), and the batch delivered again waits for them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import commit_files, git
from tests.distributed._cluster import Cluster, start_cluster


def package(name: str, sleep_s: float = 0) -> dict[str, str]:
    """One package with one ``yaml.load`` (one unit of yaml-safe-load) and its test (which
    takes ``sleep_s`` more: a unit that is still running when a fault strikes)."""
    slow = f"    import time\n\n    time.sleep({sleep_s})\n" if sleep_s else ""
    return {
        f"{name}/__init__.py": "",
        f"{name}/load.py": "import yaml\n\n\ndef settings(text):\n    return yaml.load(text)\n",
        f"tests/test_{name}.py": (
            f"from {name}.load import settings\n\n\n"
            f"def test_{name}_settings():\n{slow}    assert settings('a: 1') == {{'a': 1}}\n"),
    }


def make_target(path: Path, packages: list[str]) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    files = {"README.md": "target\n", "tests/__init__.py": ""}
    for name in packages:
        files.update(package(name))
    return commit_files(path, files, "initial")


def add_packages(cluster: Cluster, packages: list[str], sleep_s: float = 0) -> None:
    """Commit new packages in the user's clone and push them to the remote's main (after
    pulling what the last integration published)."""
    repo = cluster.root / "user"
    git(repo, "pull", "-q", "--ff-only", "origin", "main")
    files: dict[str, str] = {}
    for name in packages:
        files.update(package(name, sleep_s))
    commit_files(repo, files, f"add {', '.join(packages)}")
    git(repo, "push", "-q", "origin", "main")


def _database(admin: str, template: str) -> str:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = f"fleet_c_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    params = conninfo_to_dict(admin)
    params["dbname"] = name
    return make_conninfo(**params)  # type: ignore[arg-type]


@pytest.fixture(scope="package")
def cluster(pg_admin_dsn: str, pg_template: str,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    root = tmp_path_factory.mktemp("cluster")
    target = make_target(root / "target", ["seed"])
    store, dagster = _database(pg_admin_dsn, pg_template), _database(pg_admin_dsn, pg_template)
    started = start_cluster(root, target, store, dagster, workers=3, visibility_s=600,
                            FLEET_CELERY_RESTORE_S="2", FLEET_CELERY_CLAIM_TTL_S="6",
                            FLEET_LEASE_TTL_S="30",
                            FLEET_BATCH_SIZE="1", FLEET_AGENTS="1")
    try:
        yield started
    finally:
        started.close()
