"""The repository a Dagster instance belongs to.

A Dagster instance holds one repository's sweeps: its runs (tagged by campaign), the unit
partitions of each campaign (``<campaign>_units``, whose obsolete keys a plan deletes) and the
materializations of ``symbol_graph``, ``code/<module>`` and the campaign assets. A sweep of
another repository on the same instance would delete the first one's partitions, run its units
and overwrite its assets' history. So, like a state directory (``fleet.home.claim_home``), an
instance records the repository it belongs to the first time a sweep (or ``fleet serve``) uses
it, and :func:`claim_instance` refuses it, in one line naming both, for any other repository.

The record is kept in the instance's own key-value storage (``daemon_cursor_storage``, a table
of the run storage), not in a file beside ``dagster.yaml``: an instance on dagster-postgres,
shared by every worker, carries it too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from fleet.errors import ConfigError
from fleet.home import HOME_DIR, HomeMismatch, RepoIdentity, belongs_elsewhere, identify

if TYPE_CHECKING:
    from dagster import DagsterInstance

__all__ = ["OWNER_KEY", "claim_instance", "instance_repository"]

OWNER_KEY = "fleet/repository"


def instance_repository(instance: DagsterInstance) -> RepoIdentity | None:
    """The repository ``instance`` belongs to, ``None`` before a sweep claimed it."""
    raw = instance.daemon_cursor_storage.get_cursor_values({OWNER_KEY}).get(OWNER_KEY)
    if not raw:
        return None
    try:
        data = json.loads(raw)
        return RepoIdentity(str(data["root"]), str(data.get("first_commit", "")),
                            str(data.get("remote", "")))
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"the Dagster instance {instance.root_directory}: its {OWNER_KEY} "
                          f"record is not a repository record ({exc})") from exc


def claim_instance(instance: DagsterInstance, repo: Path | str) -> RepoIdentity:
    """Make ``instance`` the Dagster instance of the repository ``repo`` is in: record it the
    first time (and again when the repository moved); raise :class:`HomeMismatch` (one line
    naming both, and what to do) when the instance belongs to another repository."""
    current = identify(repo)
    recorded = instance_repository(instance)
    if recorded is not None and belongs_elsewhere(recorded, current):
        own = Path(current.root) / HOME_DIR / "dagster"
        raise HomeMismatch(
            f"the Dagster instance {instance.root_directory} (DAGSTER_HOME) belongs to the "
            f"repository {recorded.describe()}, not to {current.describe()}: its runs, unit "
            f"partitions and asset history are that repository's; unset DAGSTER_HOME to use "
            f"{own} (the repository's own) or give this repository another DAGSTER_HOME")
    mine = RepoIdentity(current.root, current.first_commit, current.remote)
    if recorded != mine:
        record = {"root": mine.root, "first_commit": mine.first_commit, "remote": mine.remote}
        instance.daemon_cursor_storage.set_cursor_values({OWNER_KEY: json.dumps(record)})
    return current
