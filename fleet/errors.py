"""The one exception hierarchy of fleet-pipelines.

Expected outcomes (a refused lease, a conflicted merge, a rejected patch) are values, not
exceptions. Exceptions are for bugs, bad input that cannot be used at all, and infrastructure
faults; driver errors (sqlite3, psycopg, git, HTTP clients) are translated into these at the edge.
"""

from __future__ import annotations

__all__ = ["ConfigError", "FleetError", "ForgeError", "GitError", "KillSwitchEngaged", "StoreError"]


class FleetError(Exception):
    """Root of every error raised on purpose by fleet-pipelines."""


class ConfigError(FleetError):
    """A configuration or input file is invalid. The message names the file, line and field."""


class StoreError(FleetError):
    """The store (SQLite or PostgreSQL) failed: connection, schema, or a refused statement."""


class GitError(FleetError):
    """A git command failed; the message carries the command and git's stderr."""


class KillSwitchEngaged(FleetError):
    """The kill switch is on: the current loop, sensor or step must stop."""


class ForgeError(FleetError):
    """A forge (GitHub) request failed: bad credentials, a missing repository, a refused push or
    a rejected API call. The message carries the request and the forge's answer."""
