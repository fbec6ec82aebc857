"""Sensors, named ``<trigger>_sensor``; each honours the kill switch.

``planner_sensor``: for every campaign with no run in flight, launch the pending units (registered
partitions without a final result in the ledger) in batches, one run per contiguous partition
range of at most ``batch_size`` units; when no unit is pending and some were verified since the
last integration, launch the integration. ``pr_status_sensor``: read the state of every published
change back from the forge and record each change of state in the ledger.
"""


from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

from dagster import (
    DagsterRunStatus,
    DefaultSensorStatus,
    RunRequest,
    RunsFilter,
    SensorDefinition,
    SensorEvaluationContext,
    SkipReason,
    sensor,
)

from assets import CampaignAssets, pending_units
from assets._dagster_private import (
    ASSET_PARTITION_RANGE_END_TAG,
    ASSET_PARTITION_RANGE_START_TAG,
    UnresolvedAssetJobDefinition,
)
from fleet.forge import is_ancestor
from fleet.types import ChangeRef
from fleet_pipelines.jobs import fix_job_name, integrate_job_name
from fleet_pipelines.resources import ForgeResource, RepoResource, StoreResource

__all__ = [
    "IN_FLIGHT",
    "PUBLISHED",
    "STATUS",
    "batches",
    "build_sensors",
    "needs_integration",
    "planner",
    "pr_status",
]

IN_FLIGHT = [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING,
             DagsterRunStatus.STARTED]
PUBLISHED = "pull_request.published"
STATUS = "pull_request.status"


def batches(keys: Sequence[str], pending: Sequence[str], size: int) -> list[tuple[str, str]]:
    """``(first, last)`` partition ranges covering exactly ``pending``, in registration order
    (``keys``), each at most ``size`` long."""
    want = set(pending)
    out: list[tuple[str, str]] = []
    run: list[str] = []
    for key in [*keys, None]:
        if key is not None and key in want and len(run) < size:
            run.append(key)
            continue
        if run:
            out.append((run[0], run[-1]))
            run = []
        if key is not None and key in want:
            run.append(key)
    return out


def needs_integration(store: StoreResource, campaign: str,
                      planned: Collection[str] | None = None, repo: Path | None = None,
                      base_branch: str = "main") -> bool:
    """Some unit was verified after the campaign's last integration; or (given the currently
    ``planned`` unit keys and the ``repo``) the last integration merged a unit that is no longer
    planned and its branch is not in ``base_branch``: a re-plan (a changed campaign, findings
    fixed elsewhere) superseded that unit, and the integration branch must drop its patch. An
    integration already merged into the base (self-merge) is history, not redone."""
    ledger = store.ledger()
    finished = [e.seq for e in ledger.events(kind="unit.finished", campaign=campaign)
                if e.payload.get("status") == "verified"]
    integrated = ledger.events(kind="integration.finished", campaign=campaign)
    if planned is not None and repo is not None and integrated:
        last = integrated[-1].payload
        superseded = set(last.get("merged") or ()) - set(planned)
        if superseded and last.get("head") and not is_ancestor(repo, str(last["head"]),
                                                                base_branch):
            return True
    return bool(finished) and (not integrated or max(finished) > integrated[-1].seq)


def planner(campaigns: Sequence[CampaignAssets], batch_size: int,
            jobs: Sequence[UnresolvedAssetJobDefinition]) -> SensorDefinition:
    wanted = {fix_job_name(c) for c in campaigns} | {integrate_job_name(c) for c in campaigns}

    @sensor(name="planner_sensor", jobs=[j for j in jobs if j.name in wanted],
            minimum_interval_seconds=30,
            default_status=DefaultSensorStatus.STOPPED,
            description="Launch pending units in batches, then their integration.")
    def planner_sensor(context: SensorEvaluationContext, store: StoreResource,
                       repo: RepoResource) -> Iterator[RunRequest | SkipReason]:
        if store.killed():
            yield SkipReason("kill switch engaged")
            return
        launched = 0
        for c in campaigns:
            busy = context.instance.get_runs(
                RunsFilter(tags={"fleet/campaign": c.campaign}, statuses=IN_FLIGHT), limit=1)
            if busy:
                continue
            keys = context.instance.get_dynamic_partitions(c.partitions.name or "")
            pending = pending_units(store, c.spec, keys)
            tags = {"fleet/campaign": c.campaign, "fleet/trigger": "planner_sensor"}
            for first, last in batches(keys, pending, batch_size):
                launched += 1
                yield RunRequest(job_name=fix_job_name(c), tags={
                    **tags, ASSET_PARTITION_RANGE_START_TAG: first,
                    ASSET_PARTITION_RANGE_END_TAG: last})
            if not pending and needs_integration(store, c.campaign, keys, Path(repo.path),
                                                 repo.base_branch):
                launched += 1
                yield RunRequest(job_name=integrate_job_name(c), tags=tags)
        if not launched:
            yield SkipReason("nothing pending")

    return planner_sensor


def pr_status(campaigns: Sequence[CampaignAssets]) -> SensorDefinition:
    @sensor(name="pr_status_sensor", minimum_interval_seconds=60,
            default_status=DefaultSensorStatus.STOPPED,
            description="Read each published change's state back from the forge.")
    def pr_status_sensor(context: SensorEvaluationContext, store: StoreResource,
                         forge: ForgeResource) -> SkipReason:
        if store.killed():
            return SkipReason("kill switch engaged")
        ledger = store.ledger()
        last: dict[tuple[str, int], str] = {}
        for e in ledger.events(kind=STATUS):
            last[(str(e.payload["forge"]), int(e.payload["number"]))] = str(e.payload["state"])
        refs: dict[tuple[str, int], ChangeRef] = {}
        for e in ledger.events(kind=PUBLISHED):
            ref = ChangeRef(**e.payload["ref"])
            refs[(ref.forge, int(ref.number or 0))] = ref
        changed = 0
        client = forge.open(store.store())
        for key, ref in refs.items():
            state = client.status(ref)
            if last.get(key, ref.state) != state:
                changed += 1
                ledger.append(STATUS, {"forge": ref.forge, "number": ref.number,
                                       "branch": ref.branch, "state": state},
                              actor="pr_status_sensor")
        return SkipReason(f"{len(refs)} change(s) checked, {changed} changed state")

    return pr_status_sensor


def build_sensors(campaigns: Sequence[CampaignAssets], batch_size: int,
                  jobs: Sequence[UnresolvedAssetJobDefinition]) -> list[SensorDefinition]:
    return [planner(campaigns, batch_size, jobs), pr_status(campaigns)]
