"""One step of ``candidate_patches``: a batch of units run concurrently, each unit's outcome
recorded as soon as it finishes (so event writes overlap the other units' work and the UI shows
progress), then one check result per gate for the step.

A unit's check evaluations (and ``verified_patches``' materializations) are logged as one Dagster
event batch, which ``fleet_pipelines.storage`` writes in one transaction; with batching off or
another storage they are stored one by one, with the same outcome."""

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from queue import Empty, Queue
from typing import Any

from dagster import (
    AssetCheckEvaluation,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    AssetMaterialization,
    AssetRecordsFilter,
    Output,
)

from assets._dagster_private import (
    AssetCheckEvaluationTargetMaterializationData,
    DagsterEvent,
    DagsterEventBatchMetadata,
    DagsterEventType,
    generate_event_batch_id,
)
from assets._metadata import (
    batch_metadata,
    readable_evidence,
    unit_metadata,
    verdict_description,
)
from fleet.types import WorkUnit
from fleet.unit import UnitEnv, UnitResult, run_units

__all__ = ["log_materializations", "run_batch"]


def run_batch(context: AssetExecutionContext, gates: Sequence[str], units: Sequence[WorkUnit],
              env: UnitEnv, parallel: int) -> Iterator[Any]:
    """Run ``units`` (at most ``parallel`` at once) and yield the step's events.

    Per unit: its partition's materialization (status, rejecting gate, verdicts, diff, cost,
    timings) and, in a batch, every gate's verdict as a check evaluation on that partition.
    """
    single = len(context.partition_keys) == 1
    done: Queue[UnitResult] = Queue()
    results: list[UnitResult] = []
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="batch") as pool:
        future = pool.submit(run_units, list(units), env, parallel, on_result=done.put)
        yield Output(None, metadata={"units": len(units)})
        while len(results) < len(units):
            try:
                result = done.get(timeout=0.5)
            except Empty:
                if future.done():
                    future.result()  # re-raises the fault that stopped the batch
                    break
                continue
            results.append(result)
            yield AssetMaterialization(asset_key=context.asset_key, partition=result.unit,
                                       metadata=unit_metadata(result))
            if not single:
                _log_unit_checks(context, gates, result)
        future.result()
    context.log.info(f"batch: {batch_metadata(results)}")
    yield from _step_checks(gates, results, single)
    if single:  # after the step's (WARN) result: the partition's latest verdict is the unit's
        for result in results:
            _log_unit_checks(context, gates, result)


def log_materializations(context: AssetExecutionContext,
                         partitions: Sequence[tuple[str, dict[str, Any]]]) -> None:
    """One materialization of ``context``'s asset per ``(partition, metadata)``, logged as one
    event batch (``verified_patches``: every verified unit of the batch at once)."""
    step = context.op_execution_context.get_step_execution_context()
    batch = generate_event_batch_id()
    for i, (partition, metadata) in enumerate(partitions):
        DagsterEvent.asset_materialization(
            step, AssetMaterialization(asset_key=context.asset_key, partition=partition,
                                       metadata=metadata),
            DagsterEventBatchMetadata(batch, i == len(partitions) - 1))


def _target(context: AssetExecutionContext, partition: str
            ) -> AssetCheckEvaluationTargetMaterializationData | None:
    """The materialization a unit's verdicts judge (the one just recorded), so the UI shows
    the partition's check as current rather than missing."""
    records = context.instance.fetch_materializations(
        AssetRecordsFilter(asset_key=context.asset_key, asset_partitions=[partition]), limit=1
    ).records
    if not records:
        return None
    rec = records[0]
    return AssetCheckEvaluationTargetMaterializationData(
        storage_id=rec.storage_id, run_id=rec.run_id, timestamp=rec.timestamp)


def _log_unit_checks(context: AssetExecutionContext, gates: Sequence[str],
                     result: UnitResult) -> None:
    """One check evaluation per gate on the unit's partition, logged as one event batch (the
    fleet's event log storage writes a batch in one transaction; others store them one by
    one). A gate that rejects the unit (or cannot judge it) fails with ERROR severity: the
    partition's check is red in the UI. These events bypass the step's blocking-check rule, so
    the verified units of the batch still reach ``verified_patches``."""
    target = _target(context, result.unit)
    evaluations = [
        AssetCheckEvaluation(
            asset_key=context.asset_key, check_name=f"candidate_patches_{v.gate}",
            passed=v.passed, partition=result.unit, severity=AssetCheckSeverity.ERROR,
            target_materialization_data=target, blocking=True,
            description=verdict_description(v.gate, v.status, v.evidence),
            metadata={"status": v.status, "evidence": readable_evidence(v.evidence)})
        for v in result.verdicts if v.gate in gates
    ]
    step = context.op_execution_context.get_step_execution_context()
    batch = generate_event_batch_id()
    for i, evaluation in enumerate(evaluations):
        DagsterEvent.from_step(
            DagsterEventType.ASSET_CHECK_EVALUATION, step, evaluation,
            message=f"Asset check '{evaluation.check_name}' on partition {result.unit} "
                    + ("passed." if evaluation.passed else "did not pass."),
            batch_metadata=DagsterEventBatchMetadata(batch, i == len(evaluations) - 1))


def _step_checks(gates: Sequence[str], results: Sequence[UnitResult], single: bool
                 ) -> Iterator[AssetCheckResult]:
    """One result per gate for the step (a check may yield once per step).

    This result judges the batch: passed when every judged unit was accepted, its description
    says how many the gate rejected. Its failures are WARN: a rejected patch is an expected
    outcome, not a failed run, and the verified units of the batch must still reach
    ``verified_patches``, which admits only units whose every gate passed (DESIGN.md: blocking
    checks record, ``verified_patches`` decides). Each unit's own verdict is on its partition
    with ERROR severity (``_log_unit_checks``; in a single-unit run, logged after this result,
    which Dagster records for the same partition)."""
    for gate in gates:
        verdicts = {r.unit: v for r in results for v in r.verdicts if v.gate == gate}
        rejected = sorted(k for k, v in verdicts.items() if not v.passed)
        accepted = len(verdicts) - len(rejected)
        metadata: dict[str, Any] = {"judged": len(verdicts), "accepted": accepted,
                                    "rejected_units": ", ".join(rejected)}
        if single and verdicts:
            only = next(iter(verdicts.values()))
            metadata.update(status=only.status, evidence=readable_evidence(only.evidence))
            description = verdict_description(gate, only.status, only.evidence)
        elif not verdicts:
            description = f"gate {gate} judged no unit of this batch"
        elif rejected:
            description = (f"gate {gate} rejected {len(rejected)} of {len(verdicts)} unit(s) of "
                           "this batch (each unit's verdict is on its partition)")
        else:
            description = f"gate {gate} accepted all {len(verdicts)} unit(s) of this batch"
        yield AssetCheckResult(check_name=f"candidate_patches_{gate}", passed=not rejected,
                               severity=AssetCheckSeverity.WARN, metadata=metadata,
                               description=description)
