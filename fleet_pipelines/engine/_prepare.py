"""What a fleet celery worker does before a task: its mirror synced from the remote and the
symbol graph of the base branch in its own ``FLEET_HOME`` — only for the steps that read them,
and the graph indexed only when it is not already this process's index of the same commit.

A step that reads neither (``verified_patches``: the ledger's verdicts only) skips both. The
index of a base commit is kept while the commit and the saved files stay the ones this process
wrote (their size and mtime): a new base commit, or a graph written by anything else (another
process, a step of this one that re-indexed), indexes again. The mirror is always fetched for
the steps that need it (a branch pushed since is part of what they read)."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["MIRRORLESS_STEPS", "Prepared", "needs_mirror", "prepare", "step_keys", "warm"]

log = logging.getLogger("fleet.worker")
MIRRORLESS_STEPS = ("verified_patches",)
"""Asset names whose steps read neither the mirror nor the graph (assets/campaign.py)."""


@dataclass(frozen=True)
class Prepared:
    synced: bool
    indexed: bool
    sync_s: float = 0.0
    index_s: float = 0.0


_indexed: dict[tuple[str, str, str], tuple[tuple[int, int], ...]] = {}
"""(home, mirror, base commit) -> the (size, mtime_ns) of the graph files this process saved."""


def step_keys(args: Sequence[Any]) -> list[str] | None:
    """The step keys of a dagster-celery ``execute_plan`` task's arguments, None when they are
    not those (then the task is prepared as a step that needs everything)."""
    if not args or not isinstance(args[0], dict):
        return None
    try:
        from assets._dagster_private import ExecuteStepArgs, unpack_value

        unpacked = unpack_value(args[0], as_type=ExecuteStepArgs)
    except Exception:
        return None
    return list(unpacked.step_keys_to_execute or []) or None


def needs_mirror(keys: Sequence[str] | None) -> bool:
    """Whether the steps ``keys`` (None: unknown) read the worker's mirror or graph."""
    if keys is None:
        return True
    return not all(k.rsplit("__", 1)[-1] in MIRRORLESS_STEPS for k in keys)


def _stamps(home: Path) -> tuple[tuple[int, int], ...]:
    from assets.graph import GRAPH_FILE, SUMMARY_FILE, graph_dir

    out = []
    for path in (graph_dir(home) / GRAPH_FILE, graph_dir(home) / SUMMARY_FILE):
        try:
            st = path.stat()
        except FileNotFoundError:
            return ()
        out.append((st.st_size, st.st_mtime_ns))
    return tuple(out)


def prepare(url: str, home: Path, base: str, keys: Sequence[str] | None) -> Prepared:
    """Sync ``home``'s mirror of ``url`` and index ``base`` into ``home`` when the steps
    ``keys`` need them (None: unknown steps, they do), reusing this process's index of the same
    base commit while its files are untouched."""
    if not needs_mirror(keys):
        return Prepared(synced=False, indexed=False)
    from fleet.forge.remote import Remote, sync

    t0 = time.perf_counter()
    mirror = sync(Remote.parse(url), home)
    return _index_base(mirror, home, base, time.perf_counter() - t0)


def _index_base(mirror: Path, home: Path, base: str, sync_s: float) -> Prepared:
    """Index ``base`` of the synced ``mirror`` into ``home`` unless this process's index of the
    same base commit is there untouched."""
    from assets.graph import index
    from fleet.forge import branch_commit

    t1 = time.perf_counter()
    key = (str(home), str(mirror), branch_commit(mirror.resolve(), base))
    stamps = _stamps(home)
    if stamps and _indexed.get(key) == stamps:
        return Prepared(synced=True, indexed=False, sync_s=sync_s)
    index(mirror, home, base)
    _indexed.clear()  # one home, one graph: only the latest index is current
    _indexed[key] = _stamps(home)
    t2 = time.perf_counter()
    log.info("mirror synced in %.2f s, base %s indexed in %.2f s", sync_s, key[2][:12], t2 - t1)
    return Prepared(synced=True, indexed=True, sync_s=sync_s, index_s=t2 - t1)


def warm(url: str, home: Path, base: str) -> Prepared:
    """What a worker does once before it takes its first task, while it is idle anyway: the
    base branch's index (so a first task on the same base commit finds it current) and the
    modules a step task imports (the code location's module, its assets, the unit stage; not
    its definitions, which are built from the store on the first task). Without it every
    worker's first task of a sweep spends that time with the batch's run waiting."""
    import importlib

    from fleet.forge.remote import Remote, sync

    t0 = time.perf_counter()
    mirror = sync(Remote.parse(url), home)  # a remote that cannot be cloned: FleetError, refused
    try:  # the mirror synced once: indexed from it, not synced again
        prepared = _index_base(mirror, home, base, time.perf_counter() - t0)
    except Exception as exc:  # the first task indexes (and reports) it instead
        log.warning("base %s not indexed ahead of the first task: %s", base, exc)
        prepared = Prepared(synced=True, indexed=False)
    # and what the steps import lazily (the agents' libcst codemods: ~2.8 CPU-s in a worker's
    # first batch otherwise), with alembic's script directory (_preload, as the fork server),
    # without the cyclic collector and then frozen (fleet_pipelines._startup)
    from fleet_pipelines._startup import heavy_imports

    with heavy_imports():
        for name in ("fleet_pipelines.definitions", "assets.campaign", "fleet.unit",
                     "fleet_pipelines.engine._preload"):
            importlib.import_module(name)
    return prepared
