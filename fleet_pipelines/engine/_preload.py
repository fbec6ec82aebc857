"""What every run worker would otherwise load again: imported once in the forking run launcher's
fork server (``PRELOAD`` in run_launcher.py), before it forks any run worker.

``fleet_pipelines.definitions`` imports its heavy dependencies lazily, inside the steps (so that
``fleet`` and the code server start quickly), which left each forked run worker to import them
itself. Profiled on 4 December 2026 (a 4-unit submitted sweep, cProfile in each of its 5 run
workers, load ~6): networkx 0.5-0.8 s in each run that reads the graph (index, plan, fix),
libcst and its codemod framework ~1.5 s in each fix run, Dagster's SQLite storage modules, fsspec
and universal-pathlib ~0.15 s in every run; and 0.35-0.73 s in every run for Dagster's four
checks of the SQLite schema revision, each of which loads alembic's ~100 migration scripts again
(``check_alembic_revision`` -> ``ScriptDirectory.from_config(...).as_revision_number("head")``).

Here the modules are imported, and alembic's script directory of Dagster's storage is loaded
once and kept (:func:`keep_script_directories`): the migration scripts are files of the installed
Dagster, the same for the fork server's whole life, and a run worker only reads the head
revision from them (a schema upgrade is ``dagster instance migrate``, never a run's). This
module is imported only by the fork server and by a fleet celery worker while it warms up
(``_prepare.warm``: its first batch imported libcst's codemods, ~2.8 CPU-s, with the batch's run
waiting); the daemon, the code server and ``fleet`` itself are unchanged.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

from assets._dagster_private import STORAGE_MODULES, dagster_alembic_config
from fleet_pipelines._startup import heavy_imports

__all__ = ["MODULES", "keep_script_directories"]

# what the runs' steps import (fleet_pipelines/assets lazily): the graph, the plan, the agents
# and their codemods, the sandbox, the forges; Dagster's storage for the instance a run opens
# (``STORAGE_MODULES`` of assets._dagster_private, after these)
MODULES = (
    "networkx", "libcst", "libcst.codemod", "libcst.matchers", "libcst.metadata",
    "tree_sitter_python", "fsspec", "upath", "watchdog.observers.polling", *STORAGE_MODULES,
    "fleet.plan", "fleet.agents.codemod", "fleet.agents.select", "fleet.campaigns.codemods",
    "fleet.forge.local", "fleet.forge.github", "fleet.store.sqlite", "fleet.store.repo_scope",
    "sandbox.bwrap", "fleet_pipelines.compute_logs",
)

_lock = threading.Lock()
_kept: dict[tuple[type, str], Any] = {}


def keep_script_directories() -> None:
    """``alembic.script.ScriptDirectory.from_config`` in this process returns one loaded
    script directory per (class, script location, version locations) instead of reading and
    executing every migration script again on each call; Dagster's own is loaded now."""
    from alembic.script import ScriptDirectory

    if getattr(ScriptDirectory.from_config, "_fleet_kept", False):
        return
    original = ScriptDirectory.from_config.__func__  # type: ignore[attr-defined]

    def from_config(cls: type, config: Any) -> Any:
        key = (cls, f"{config.get_main_option('script_location')}|"
                    f"{config.get_main_option('version_locations')}")
        with _lock:
            script = _kept.get(key)
            if script is None:
                script = _kept[key] = original(cls, config)
        return script

    from_config._fleet_kept = True  # type: ignore[attr-defined]
    ScriptDirectory.from_config = classmethod(from_config)  # type: ignore[method-assign,assignment]
    # the revision map of Dagster's migrations (one script location for every storage), as
    # check_alembic_revision reads it
    ScriptDirectory.from_config(dagster_alembic_config()).as_revision_number("head")


def _preload() -> None:
    """The modules imported with the cyclic collector off, then every object frozen
    (``heavy_imports``; in the fork server the collector stays off: _collector_off): the forked
    run workers, which turn it on, never walk these objects."""
    with heavy_imports():
        for name in MODULES:
            try:
                importlib.import_module(name)
            except ImportError:  # an optional part not installed: the run imports what it needs
                continue
        keep_script_directories()


_preload()
