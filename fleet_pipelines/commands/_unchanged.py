"""The sweep's index and plan runs skipped when nothing they read has changed since the last
one that succeeded on this state directory (issue 14: a second sweep of an unchanged repository
submitted an index run and a plan run per campaign, ~3-6 CPU-s of run worker each, to
re-materialize the same data versions).

A run is skipped only when all of these equal what was recorded right after the last such run:

- its inputs, read before it ran: the base branch's head commit (of a repository by URL, the
  remote's, fetched first), the fleet's code (the source, query and campaign files of
  ``fleet``, ``assets`` and ``fleet_pipelines``, the tree-sitter / libcst / Dagster versions,
  the interpreter), the settings that choose the repository, the store, the Dagster deployment
  and the forge, the environment that picks a diagnostics tool (``PATH``, ``FLEET_TOOLS_DIR``,
  ``FLEET_TEST_PYTHON``), and for a plan the loaded campaign (its whole spec);
- what it left, read after it ran: the saved graph file (size, mtime, inode) - for a plan
  whether it exists; for a plan, the campaign's finding records (fingerprint, status, filed
  issue: a suppression or a finding whose issue was never filed re-plans), its registered
  partitions, and the storage ids of the latest ``findings`` / ``work_units`` materializations on
  this Dagster instance (another instance, a wipe or a materialization from the UI re-plans);
  for the index on a shared store, the module summary it published;

and Dagster's latest ``symbol_graph`` materialization has the head commit as its data version,
so what the UI shows stays current: nothing was re-materialized, nothing turned stale. A plan run
re-indexes first, so it also records the index as done for its commit.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assets import SYMBOL_GRAPH
from assets.graph import GRAPH_FILE, graph_dir, load_summary, published_summary
from fleet.errors import FleetError
from fleet.forge import branch_commit

if TYPE_CHECKING:
    from dagster import AssetKey, DagsterInstance

    from assets import CampaignAssets
    from fleet_pipelines.resources import FleetSettings, StoreResource

__all__ = ["Unchanged", "code_version"]

_PACKAGES = ("fleet", "assets", "fleet_pipelines")
_SUFFIXES = {".py", ".so", ".scm", ".yaml", ".yml", ".json", ".sql"}
_DISTRIBUTIONS = ("dagster", "libcst", "tree-sitter", "tree-sitter-python")
_ENV = ("PATH", "FLEET_TOOLS_DIR", "FLEET_TEST_PYTHON")
_SETTINGS = ("home", "repo", "base_branch", "deployment", "store_url", "forge", "github_repo",
             "github_url", "url", "remote")
RECORDS = "sweep-records"
"""Under the state directory: one JSON record per skippable run (index, one per campaign)."""


@cache
def code_version() -> str:
    """A digest of the fleet's code as this process runs it (read once per process)."""
    import importlib

    digest = hashlib.sha256(sys.version.encode())
    for name in _DISTRIBUTIONS:
        try:
            digest.update(f"{name}={metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name}=none".encode())
    for package in _PACKAGES:
        root = Path(importlib.import_module(package).__file__ or "").parent
        for path in sorted(p for p in root.rglob("*") if p.suffix in _SUFFIXES
                           and "__pycache__" not in p.parts and p.is_file()):
            digest.update(str(path.relative_to(root.parent)).encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=repr).encode()).hexdigest()


class Unchanged:
    """The sweep's record of its skippable runs on the state directory ``settings.home``."""

    def __init__(self, settings: FleetSettings, instance: DagsterInstance,
                 store: StoreResource, say: Callable[[str], None]) -> None:
        self.settings, self.instance, self.store, self.say = settings, instance, store, say
        self.home = Path(settings.home)

    def index(self, run: Callable[[], None]) -> int:
        """``run()`` (the index run) unless the index is unchanged; the runs made (0 or 1)."""
        inputs = self._inputs()
        if inputs is None:  # no base commit to key on: the run says what is wrong
            run()
            return 1
        if self._load("index") == {"inputs": inputs, "left": self._index_left()} and (
                self._graph_version() == inputs["commit"]):
            self.say(f"index unchanged (base {inputs['commit'][:12]} indexed by this fleet "
                     "code, graph and Dagster's symbol_graph current): no index run")
            return 0
        run()
        self._save("index", {"inputs": inputs, "left": self._index_left()})
        return 1

    def plan(self, c: CampaignAssets, run: Callable[[], None]) -> int:
        """``run()`` (campaign ``c``'s plan run) unless nothing it reads changed; the runs made
        (0 or 1)."""
        inputs = self._inputs()
        if inputs is None:
            run()
            return 1
        inputs["campaign"] = _digest(repr(c.spec))
        name = self._plan_record(c)
        if self._load(name) == {"inputs": inputs, "left": self._plan_left(c)} and (
                self._graph_version() == inputs["commit"]):
            self.say(f"[{c.campaign}] unchanged since its last plan (base "
                     f"{inputs['commit'][:12]}, campaign, fleet code, findings and units as "
                     "they were): no plan run")
            return 0
        run()
        self._save(name, {"inputs": inputs, "left": self._plan_left(c)})
        # the plan run re-indexed first: the index of this commit is done too
        index_inputs = {k: v for k, v in inputs.items() if k != "campaign"}
        self._save("index", {"inputs": index_inputs, "left": self._index_left()})
        return 1

    def _inputs(self) -> dict[str, Any] | None:
        try:  # a repository by URL: the remote's head now (a run's first step syncs it too)
            repo = self.settings.checkout() if self.settings.url else Path(self.settings.repo)
            commit = branch_commit(repo, self.settings.base_branch)
        except FleetError:
            return None
        settings = {k: str(getattr(self.settings, k)) for k in _SETTINGS}
        return {"commit": commit, "code": code_version(), "settings": settings,
                "env": {k: os.environ.get(k, "") for k in _ENV}}

    def _graph_file(self) -> list[int] | None:
        try:
            stat = (graph_dir(self.home) / GRAPH_FILE).stat()
        except FileNotFoundError:
            return None
        return [stat.st_size, stat.st_mtime_ns, stat.st_ino]

    def _index_left(self) -> dict[str, Any]:
        left: dict[str, Any] = {"graph": self._graph_file()}
        if self.store.shared():  # the other processes' definitions read the published one
            local = load_summary(graph_dir(self.home))
            left["published"] = local is not None and (
                published_summary(self.store.store()) == local)
        return left

    def _plan_left(self, c: CampaignAssets) -> dict[str, Any]:
        records = self.store.store().findings.list(campaign=c.campaign)
        partitions = self.instance.get_dynamic_partitions(c.partitions.name or "")
        return {
            "graph": self._graph_file() is not None,
            "findings": _digest(sorted((r.finding.fingerprint, r.status, r.issue_ref or "")
                                       for r in records)),
            "partitions": _digest(sorted(partitions)),
            "materialized": [self._latest(c.key("findings")), self._latest(c.key("work_units"))],
        }

    def _latest(self, key: AssetKey) -> int | None:
        records = self.instance.fetch_materializations(key, limit=1).records
        return records[0].storage_id if records else None

    def _graph_version(self) -> str | None:
        event = self.instance.get_latest_materialization_event(SYMBOL_GRAPH)
        if event is None or event.asset_materialization is None:
            return None
        return (event.asset_materialization.tags or {}).get("dagster/data_version")

    def _plan_record(self, c: CampaignAssets) -> str:
        return f"plan-{c.prefix[:40]}-{hashlib.sha256(c.campaign.encode()).hexdigest()[:8]}"

    def _load(self, name: str) -> dict[str, Any] | None:
        try:
            data: dict[str, Any] = json.loads((self.home / RECORDS / f"{name}.json").read_text())
        except (OSError, ValueError):
            return None
        return data

    def _save(self, name: str, record: dict[str, Any]) -> None:
        path = self.home / RECORDS / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{name}.{os.getpid()}.tmp")  # readers never see half a record
        tmp.write_text(json.dumps(record, sort_keys=True))
        os.replace(tmp, path)
