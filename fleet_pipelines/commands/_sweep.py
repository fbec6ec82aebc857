"""The sweep engine behind ``fleet sweep`` and ``fleet demo``: real Dagster runs on the instance
at ``$DAGSTER_HOME`` (SQLite by default), in the order the sensors would launch them:
index -> per campaign plan -> fix batches (partition ranges) -> integrate + hand over."""

from __future__ import annotations

import hashlib
import os
import re
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dagster import AssetKey, BetaWarning, DagsterInstance, Definitions, PreviewWarning

from assets import SYMBOL_GRAPH, CampaignAssets, pending_units
from assets._dagster_private import ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG
from assets.campaign import agents_per_batch
from assets.graph import asset_key_parts
from fleet.errors import FleetError, KillSwitchEngaged
from fleet.home import store_key
from fleet.locks import hold, try_lock
from fleet.protocols import Ledger
from fleet.unit import UnitResult, latest_results, load_units, untouched_findings
from fleet_pipelines.commands._instance import INSTANCE_LOCK, InstanceUnavailable, instance_for
from fleet_pipelines.commands._unchanged import Unchanged
from fleet_pipelines.definitions import build_campaigns, build_definitions, current_summary
from fleet_pipelines.jobs import (
    IN_PROCESS_TAGS,
    fix_job_name,
    index_job_name,
    integrate_job_name,
    plan_job_name,
)
from fleet_pipelines.resources import FleetSettings, StoreResource
from fleet_pipelines.sensors import batches, needs_integration

if TYPE_CHECKING:
    from fleet.campaigns.spec import Campaign

Say = Callable[[str], None]
# The sweep prints its own progress; Dagster's per-event console log goes to the instance only.
QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}


class RunFailed(FleetError):
    """A Dagster run of the sweep failed; the message names the job and the failing step."""


@dataclass
class CampaignReport:
    campaign: str
    findings: int = 0
    fixed: int = 0
    new_units: int = 0
    units: dict[str, dict[str, Any]] = field(default_factory=dict)
    integration: dict[str, Any] | None = None
    change_url: str = ""
    self_merge: str = ""
    batches: int = 0
    fix_s: float = 0.0
    integrated: bool = False  # this sweep ran the integration (new verified or superseded units)


@dataclass
class SweepReport:
    campaigns: list[CampaignReport]
    wall_s: float
    runs: int
    dagster_home: str


def _raised(error: Any, cls: type[BaseException]) -> bool:
    """``error`` (Dagster's serialized error, a step's or its causes') is an instance of
    ``cls``: the kill switch is known by its exception class, never by its message."""
    while error is not None:
        if error.cls_name == cls.__name__:
            return True
        error = error.cause
    return False


def _execute(defs: Definitions, job: str, instance: DagsterInstance,
             tags: dict[str, str] | None = None,
             selection: Sequence[AssetKey] | None = None) -> None:
    from fleet_pipelines.engine import current

    submitted = current()  # fleet sweep / demo: submitted to the instance (engine/)
    if submitted is not None:
        result: Any = submitted.run(job, tags, selection, QUIET)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BetaWarning)
            warnings.simplefilter("ignore", PreviewWarning)
            result = defs.resolve_job_def(job).execute_in_process(
                instance=instance, tags={**(tags or {}), **IN_PROCESS_TAGS},
                raise_on_error=False, run_config=QUIET,
                asset_selection=selection)
    _judge(result, job)


def _execute_batches(defs: Definitions, job: str, instance: DagsterInstance,
                     batches: Sequence[dict[str, str]], done: Callable[[int], None],
                     window: int | None = None) -> None:
    """Run ``job`` once per tag set; ``done(i)`` after the i-th ends. On a distributed executor
    the batches are submitted ahead, so the workers take them side by side: at most ``window``
    of them in progress at once (all, without one)."""
    from collections import deque

    from fleet_pipelines.engine import current

    submitted = current()
    if submitted is None or not submitted.distributed(job):
        for i, tags in enumerate(batches, 1):
            _execute(defs, job, instance, tags)
            done(i)
        return
    limit = max(1, window or len(batches))
    running: deque[str] = deque()
    finished = 0

    def wait_oldest() -> None:
        nonlocal finished
        _judge(submitted.wait(running.popleft()), job)
        finished += 1
        done(finished)

    for tags in batches:
        while len(running) >= limit:
            wait_oldest()
        running.append(submitted.start(job, tags, None, QUIET))
    while running:
        wait_oldest()


def batch_window(campaign: Campaign, agents: int, workers: int | None = None) -> int:
    """Batches of ``campaign`` in progress at once: each runs up to ``agents_per_batch`` units,
    and together they stay within the campaign's ``autonomy.max_parallel_agents``. On ``workers``
    celery workers (one batch at a time each) that are no more than that, a batch running per
    worker stays within it too, so one more per worker is launched ahead (its run starts while
    the worker still runs the last)."""
    cap = max(1, campaign.autonomy.max_parallel_agents // agents_per_batch(campaign, agents))
    return max(cap, 2 * workers) if workers and workers <= cap else cap


def _workers(job: str) -> int | None:
    from fleet_pipelines.engine import current

    engine = current()
    return engine.workers(job) if engine is not None else None


def _judge(result: Any, job: str) -> None:
    if not result.success:
        failures = [e for e in result.all_events if e.is_step_failure]
        detail = "; ".join(
            f"{e.step_key}: {e.step_failure_data.error.message.strip()[:600]}"
            for e in failures
        ) or _run_error(result)
        if any(_raised(e.step_failure_data.error, KillSwitchEngaged) for e in failures):
            raise KillSwitchEngaged(detail)
        raise RunFailed(f"run of {job} failed: {detail or 'see the Dagster UI'}")


def _run_error(result: Any) -> str:
    """Why a run failed where no step did (a resource that could not start, e.g. the remote
    of a repository by URL unreachable when the step syncs its mirror): the innermost cause of
    the run's failure event, in one line."""
    for event in result.all_events:
        error = getattr(event.event_specific_data, "error", None)
        if event.event_type_value in ("RUN_FAILURE", "PIPELINE_FAILURE") and error is not None:
            while error.cause is not None:
                error = error.cause
            return str(error.message).strip().splitlines()[0][:600]
    return ""


class SweepBusy(FleetError):
    """A campaign of the sweep is being swept by another process on the same state directory;
    the message names the campaign, the state directory and the process."""


def _lock_name(campaign: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(campaign).stem)[:40]
    return f"sweep-{stem}-{hashlib.sha256(campaign.encode()).hexdigest()[:8]}.lock"


@contextmanager
def campaign_locks(home: Path, campaigns: Sequence[str]) -> Iterator[None]:
    """Hold the sweep lock of every campaign on the state directory ``home`` for the block, or
    raise :class:`SweepBusy` (holding none) when another process holds one: two sweeps of one
    campaign would run the same units in the same worktrees and branches."""
    with ExitStack() as stack:
        for campaign in sorted(set(campaigns)):
            held = stack.enter_context(try_lock(home / "locks" / _lock_name(campaign),
                                                f"fleet sweep -c {campaign}"))
            if held is not None:
                raise SweepBusy(f"campaign {campaign} is already being swept on the state "
                                f"directory {home} (process {held.holder}): wait for it to "
                                "finish, then sweep again")
        yield


def sweep(settings: FleetSettings, instance: DagsterInstance, say: Say = print,
          campaigns: Sequence[Campaign] | None = None) -> SweepReport:
    """Run every campaign of ``settings`` over ``settings.repo`` end to end, holding each
    campaign's sweep lock on the state directory (:func:`campaign_locks`). ``campaigns``: those
    of ``settings`` as already loaded (``preflight``'s), else each file is read once here."""
    with campaign_locks(Path(settings.home), settings.campaigns):
        return _sweep(settings, instance, say, campaigns)


def _sweep(settings: FleetSettings, instance: DagsterInstance, say: Say,
           specs: Sequence[Campaign] | None = None) -> SweepReport:
    started = time.perf_counter()
    home = Path(settings.home)
    store = StoreResource(url=settings.store_url, repo=store_key(home, settings.repo))
    if settings.store_url == f"sqlite:///{home.resolve() / 'fleet.db'}":
        store.store().findings.adopt_unowned()  # this repository's own store, from before
    if store.killed():
        raise KillSwitchEngaged("kill switch engaged: `fleet stop --off` to resume")
    runs = 0
    say("indexing the repository")
    # one index at a time per state directory: the graph snapshot and the base-tree export are
    # written in place (a second sweep then finds the index done and re-indexes nothing)
    campaigns = build_campaigns(settings, specs)  # each campaign file read once for the sweep
    unchanged = Unchanged(settings, instance, store, say)  # runs whose inputs are as they were
    with hold(home / "locks" / "index.lock", f"indexing {settings.repo}"):
        old = (current_summary(settings) or {}).get("modules", {})
        runs += unchanged.index(lambda: _execute(build_definitions(settings, campaigns),
                                                 index_job_name(), instance,
                                                 selection=[SYMBOL_GRAPH]))
        new = (current_summary(settings) or {}).get("modules", {})  # (wherever it ran)
        # with the code module assets of the new index
        defs = build_definitions(settings, campaigns)
        changed = [AssetKey(asset_key_parts(m)) for m, info in sorted(new.items())
                   if old.get(m) != info]
        if changed:  # only the modules whose content or imports changed materialize again
            say(f"{len(changed)} code module asset(s) changed")
            _execute(defs, index_job_name(), instance, selection=changed)
            runs += 1
    reports = []
    for c in sorted(campaigns, key=lambda c: not _self_merges(c.spec)):
        name = c.campaign
        report = CampaignReport(campaign=name)
        say(f"[{name}] finding and planning")
        known = set(instance.get_dynamic_partitions(c.partitions.name or ""))
        runs += unchanged.plan(c, partial(_execute, defs, plan_job_name(c), instance))
        keys = instance.get_dynamic_partitions(c.partitions.name or "")
        report.new_units = len(set(keys) - known)
        records = store.store().findings.list(campaign=name)
        report.findings = sum(r.status in ("new", "known") for r in records)
        report.fixed = sum(r.status == "fixed" for r in records)
        pending = pending_units(store, c.spec, keys)
        ranges = batches(keys, pending, settings.batch_size)
        say(f"[{name}] {len(keys)} unit(s), {len(pending)} to run in {len(ranges)} batch(es)")
        t0 = time.perf_counter()

        def finished(i: int, name: str = name, pending: list[str] = pending,
                     total: int = len(ranges), spec: Campaign = c.spec) -> None:
            done = latest_results(store.ledger(), spec)
            say(f"[{name}] batch {i}/{total} done: "
                f"{sum(1 for k in pending if k in done)}/{len(pending)} unit(s) finished")

        _execute_batches(defs, fix_job_name(c), instance, [
            {ASSET_PARTITION_RANGE_START_TAG: first, ASSET_PARTITION_RANGE_END_TAG: last,
             "fleet/campaign": name} for first, last in ranges], finished,
            window=batch_window(c.spec, settings.agents, _workers(fix_job_name(c))))
        runs += len(ranges)
        report.fix_s = time.perf_counter() - t0
        report.batches = len(ranges)
        if needs_integration(store, name, keys, Path(settings.repo), settings.base_branch):
            say(f"[{name}] integrating the verified patches")
            _execute(defs, integrate_job_name(c), instance, {"fleet/campaign": name})
            runs += 1
            report.integrated = True
        _fill(report, store, c.spec, keys)
        reports.append(report)
    return SweepReport(reports, time.perf_counter() - started, runs,
                       os.environ.get("DAGSTER_HOME", ""))


def _self_merges(campaign: Campaign) -> bool:
    """Campaigns that may move the base branch go first, so the others plan on the result (and
    the next sweep finds their units unchanged)."""
    return campaign.autonomy.mode == "self_merge"


def _fill(report: CampaignReport, store: StoreResource, campaign: Campaign,
          keys: Sequence[str]) -> None:
    ledger = store.ledger()
    results = latest_results(ledger, campaign)
    integrations = ledger.events(kind="integration.finished", campaign=campaign.name)
    last = integrations[-1].payload if integrations else None
    semantic = set(last.get("semantic_conflicts", [])) if last else set()
    for key in keys:
        r = results.get(key)
        if key in semantic:
            report.units[key] = {"status": "semantic conflict", "gate": "",
                                 "why": "tests fail on the combination (requeued)", "paths": ""}
        elif r is not None:
            merged = bool(last and key in last.get("merged", []))
            status, why = outcome(r, ledger)
            report.units[key] = {"status": "verified, integrated" if merged else status,
                                 "gate": r.rejected_by or "", "why": why,
                                 "paths": ", ".join(r.paths)}
        else:
            report.units[key] = {"status": "pending", "gate": "", "why": "", "paths": ""}
    report.integration = last
    published = ledger.events(kind="pull_request.published", campaign=campaign.name)
    if published:
        report.change_url = str(published[-1].payload["ref"]["url"])
    merges = ledger.events(kind="change.self_merge", campaign=campaign.name)
    if merges and report.integrated:  # this sweep's hand-over, not an earlier one's
        payload = merges[-1].payload
        report.self_merge = str(payload.get("message") or payload["reason"])


def _line(text: str, limit: int = 320) -> str:
    """The first line of ``text``, cut at ``limit``: long enough for the interpreter's path and
    the failing test's id (WebOb: "[/.../bin/python] 18 test file(s) by the graph, imports
    and names: tests/test_response.py::test_set_cookie_expires_is_datetime_tz_and_max_age_is_None
    passed before and failed after" lost the test's name at 160)."""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return first if len(first) <= limit else first[:limit - 3] + "..."


def outcome(result: UnitResult, ledger: Ledger | None = None) -> tuple[str, str]:
    """A unit's row: its outcome and one line of why. A gate that could not judge
    (``unknown``, e.g. no test evidence) is ``unsure``, not ``rejected``: the unit is held back
    by the default-reject rule, not found wrong. An agent failure names its first failed step
    (read from ``ledger`` when given: e.g. the file libcst cannot parse)."""
    if result.status == "rejected":
        failed = next((v for v in result.verdicts if not v.passed), None)
        if failed is None:
            return "rejected", _line(result.detail)
        label = "unsure" if failed.status == "unknown" else "rejected"
        return label, f"{failed.gate} — {_line(failed.evidence)}"
    if result.status == "agent_failed":
        why = _line(result.detail)
        steps = ledger.events(unit=result.unit, kind="agent.step") if ledger is not None else []
        bad = next((e.payload for e in steps if e.payload.get("ok") is False), None)
        if bad is not None:
            path = (bad.get("arguments") or {}).get("path")
            step = _line(str(bad.get("result", "")))
            why = f"{path}: {step}" if path else step
        return "agent failed", why
    if result.status == "verified" and ledger is not None:
        units = load_units(ledger, result.campaign, [result.unit])
        if units:
            left = untouched_findings(result.patch, units[0].findings)
            if left:
                shown = ", ".join(f"{f.path}:{f.line}" for f in left[:3])
                return "verified", (f"{len(left)} of {len(units[0].findings)} finding(s) left as "
                                    f"they were: {shown}{', ...' if len(left) > 3 else ''}")
    return result.status.replace("_", " "), _line(result.detail)


__all__ = ["INSTANCE_LOCK", "CampaignAssets", "CampaignReport", "InstanceUnavailable", "RunFailed",
           "SweepBusy", "SweepReport", "campaign_locks", "instance_for", "outcome", "sweep"]
