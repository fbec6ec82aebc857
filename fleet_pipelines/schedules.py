"""A nightly sweep ``@schedule`` per campaign (dynamic partitions cannot use
``build_schedule_from_partitioned_job``): it plans; the planner sensor then runs the batches.
The cron comes from the campaign file's ``schedule`` (else 02:00 UTC every night)."""


from collections.abc import Sequence

from dagster import (
    RunRequest,
    ScheduleDefinition,
    ScheduleEvaluationContext,
    SkipReason,
    schedule,
)

from assets import CampaignAssets
from fleet_pipelines.jobs import plan_job_name
from fleet_pipelines.resources import StoreResource

__all__ = ["NIGHTLY", "build_schedules", "nightly_schedule"]

NIGHTLY = "0 2 * * *"


def nightly_schedule(c: CampaignAssets, cron: str = NIGHTLY) -> ScheduleDefinition:
    job_name = plan_job_name(c)

    @schedule(name=f"{job_name}_schedule", cron_schedule=cron, job_name=job_name,
              execution_timezone="UTC", description=f"Nightly sweep of {c.campaign}.")
    def nightly(context: ScheduleEvaluationContext, store: StoreResource
                ) -> RunRequest | SkipReason:
        if store.killed():
            return SkipReason("kill switch engaged")
        stamp = context.scheduled_execution_time
        key = stamp.isoformat() if stamp is not None else None
        return RunRequest(run_key=key, tags={"fleet/campaign": c.campaign,
                                             "fleet/trigger": "nightly"})

    return nightly


def build_schedules(campaigns: Sequence[CampaignAssets]) -> list[ScheduleDefinition]:
    return [nightly_schedule(c, c.spec.schedule or NIGHTLY) for c in campaigns]
