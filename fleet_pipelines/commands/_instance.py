"""The sweep's Dagster instance, opened under a lock (created, migrated, claimed for one
repository), and a database behind its storage that refuses it said in one line: each of
dagster-postgres' retries as one line while it waits, then :class:`InstanceUnavailable` naming
the instance and the driver's reason, never the driver's traceback."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from dagster import DagsterInstance

from fleet.errors import FleetError
from fleet.locks import hold

__all__ = ["INSTANCE_LOCK", "InstanceUnavailable", "instance_for"]


class InstanceUnavailable(FleetError):
    """The Dagster instance's storage cannot be reached (its database down or refusing)."""


INSTANCE_LOCK = ".fleet-instance.lock"


def instance_for(dagster_home: Path, prepare: Callable[[Path], object] | None = None,
                 repo: Path | str | None = None) -> DagsterInstance:
    """The Dagster instance at ``dagster_home``, created (``prepare`` writes its
    ``dagster.yaml``) and its storages migrated under one lock: Dagster's SQLite storages
    create their tables and stamp their alembic revision when first opened, and two processes
    doing that at once leave two heads or fail on ``alembic_version``'s unique key. With
    ``repo``, the instance is claimed for that repository under the same lock
    (:func:`fleet_pipelines.instance_owner.claim_instance`: ``HomeMismatch`` for another's)."""
    from fleet_pipelines.instance_owner import claim_instance

    dagster_home.mkdir(parents=True, exist_ok=True)
    with hold(dagster_home / INSTANCE_LOCK, f"creating the Dagster instance {dagster_home}"):
        if prepare is not None:
            prepare(dagster_home)
        config = dagster_home / "dagster.yaml"
        if not config.exists():
            config.write_text("telemetry:\n  enabled: false\n")
        os.environ["DAGSTER_HOME"] = str(dagster_home)
        with _retries_in_one_line():
            try:
                instance = DagsterInstance.get()
            except Exception as exc:
                raise _unavailable(dagster_home, exc) from exc
            try:  # every storage's tables now, while the lock is held (some open lazily)
                instance.get_runs(limit=1)
                instance.get_dynamic_partitions("fleet-instance-check")
                instance.all_instigator_state()
                if repo is not None:
                    claim_instance(instance, repo)
            except BaseException as exc:
                instance.dispose()
                if isinstance(exc, Exception):
                    raise _unavailable(dagster_home, exc) from exc
                raise
    return instance


@contextmanager
def _retries_in_one_line() -> Iterator[None]:
    from fleet_pipelines.engine import OneLineRetries

    root, one_line = logging.getLogger(), OneLineRetries()
    root.addFilter(one_line)
    try:
        yield
    finally:
        root.removeFilter(one_line)


def _unavailable(dagster_home: Path, exc: Exception) -> Exception:
    """``InstanceUnavailable`` naming the instance when its storage's database refused it,
    else ``exc`` itself."""
    from fleet_pipelines.engine import storage_failure

    reason = storage_failure(exc)
    if reason is None:
        return exc
    return InstanceUnavailable(f"the Dagster instance {dagster_home} cannot open its storage "
                               f"({dagster_home / 'dagster.yaml'}): {reason}")
