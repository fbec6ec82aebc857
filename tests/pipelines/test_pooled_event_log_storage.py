"""The fleet's embedded Dagster instance (``fleet_pipelines.storage``): its ``dagster.yaml`` is
written once and a storage configuration is never overwritten; events it writes in batches (a
partition range's materializations, a unit's check evaluations) are the rows Dagster's stock
SQLite storage, and so the webserver, reads back; a run's own database is checkpointed after
every write, which the webserver's live view of a run watches."""

import os
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from dagster import (
    AssetCheckKey,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetKey,
    AssetsDefinition,
    BackfillPolicy,
    BetaWarning,
    DagsterInstance,
    Definitions,
    Output,
    PreviewWarning,
    StaticPartitionsDefinition,
    asset,
    define_asset_job,
)
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage
from dagster._core.storage.tags import (
    ASSET_PARTITION_RANGE_END_TAG,
    ASSET_PARTITION_RANGE_START_TAG,
)

from assets._batch import _log_unit_checks
from assets.campaign import NOTHING
from fleet.types import Verdict
from fleet.unit import UnitResult
from fleet_pipelines.storage import (
    EVENT_BATCH_SIZE,
    PooledSqliteEventLogStorage,
    ensure_instance_config,
)

PARTS = StaticPartitionsDefinition(["u1", "u2", "u3"])
KEY = AssetKey("candidate_patches")
GATES = ("applies", "parses")
# a gate per unit that rejects: u2's patch does not parse
VERDICTS = {k: (Verdict("applies", "accept", f"{k} applies"),
                Verdict("parses", "reject" if k == "u2" else "accept", f"{k} parse evidence"))
            for k in PARTS.get_partition_keys()}


def _thing() -> AssetsDefinition:
    """A batched step over three partitions, reporting like ``candidate_patches``."""
    # partitioned check specs and backfill policies are preview/beta in dagster 1.13
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BetaWarning)
        warnings.simplefilter("ignore", PreviewWarning)

        @asset(name="candidate_patches", partitions_def=PARTS, dagster_type=NOTHING,
               backfill_policy=BackfillPolicy.single_run(),
               check_specs=[AssetCheckSpec(f"candidate_patches_{g}", asset="candidate_patches",
                                           blocking=True, partitions_def=PARTS) for g in GATES])
        def thing(context: AssetExecutionContext
                  ) -> Iterator[Output[None] | AssetCheckResult]:
            yield Output(None)  # a partition range: one materialization per partition, a batch
            for key in context.partition_keys:  # each unit's verdicts, as run_batch logs them
                result = UnitResult(unit=key, campaign="c", status="verified", base_commit="b",
                                    verdicts=VERDICTS[key])
                _log_unit_checks(context, GATES, result)
            for gate in GATES:
                yield AssetCheckResult(check_name=f"candidate_patches_{gate}",
                                       passed=gate == "applies",
                                       severity=AssetCheckSeverity.WARN)

        return thing


def _run(home: Path) -> tuple[DagsterInstance, str, int]:
    thing = _thing()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BetaWarning)
        warnings.simplefilter("ignore", PreviewWarning)
        job = Definitions(assets=[thing], jobs=[define_asset_job("thing_job", [thing])]
                          ).resolve_job_def("thing_job")
    instance = DagsterInstance.from_config(str(home))
    result = job.execute_in_process(instance=instance, tags={
        ASSET_PARTITION_RANGE_START_TAG: "u1", ASSET_PARTITION_RANGE_END_TAG: "u3"})
    assert result.success
    return instance, result.run_id, len(instance.all_logs(result.run_id))


def test_instance_config_is_written_once_and_storage_settings_are_kept(tmp_path: Path) -> None:
    home = tmp_path / "dagster"
    config = yaml.safe_load(ensure_instance_config(home).read_text())
    assert config["telemetry"] == {"enabled": False}
    assert config["event_log_storage"]["class"] == PooledSqliteEventLogStorage.__name__
    # what earlier versions wrote (telemetry only) gains the storage, keeping its settings
    old = tmp_path / "old"
    old.mkdir()
    (old / "dagster.yaml").write_text("telemetry:\n  enabled: true\n")
    upgraded = yaml.safe_load(ensure_instance_config(old).read_text())
    assert upgraded["telemetry"] == {"enabled": True} and "event_log_storage" in upgraded
    # the shared deployment's dagster-postgres configuration is never touched
    shared = tmp_path / "shared"
    shared.mkdir()
    text = "storage:\n  postgres:\n    postgres_url: postgresql://u:p@127.0.0.1:5432/d\n"
    (shared / "dagster.yaml").write_text(text)
    ensure_instance_config(shared)
    assert (shared / "dagster.yaml").read_text() == text


def test_batched_events_are_what_the_stock_storage_reads(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGSTER_EVENT_BATCH_SIZE", "")  # restored after the test
    monkeypatch.delenv("DAGSTER_EVENT_BATCH_SIZE")  # unset: the storage turns batching on
    home = tmp_path / "dagster"
    ensure_instance_config(home)
    instance, run_id, written = _run(home)
    assert isinstance(instance.event_log_storage, PooledSqliteEventLogStorage)
    assert os.environ["DAGSTER_EVENT_BATCH_SIZE"] == EVENT_BATCH_SIZE
    instance.dispose()
    runs = home / "history" / "runs"
    stock = SqliteEventLogStorage(str(runs))  # what dagster-webserver opens without our module
    assert len(stock.get_logs_for_run(run_id)) == written
    assert stock.get_materialized_partitions(KEY) == {"u1", "u2", "u3"}
    for gate in GATES:
        history = stock.get_asset_check_execution_history(
            AssetCheckKey(KEY, f"candidate_patches_{gate}"), limit=100)
        by_partition = {r.partition: r.status.value for r in history if r.partition}
        expected = {k: "FAILED" if gate == "parses" and k == "u2" else "SUCCEEDED"
                    for k in PARTS.get_partition_keys()}
        assert by_partition == expected
        evaluation = next(r for r in history if r.partition == "u2").event
        assert evaluation is not None and evaluation.dagster_event is not None
        metadata = evaluation.dagster_event.event_specific_data.metadata  # type: ignore[union-attr]
        assert metadata["evidence"].value == VERDICTS["u2"][GATES.index(gate)].evidence
    # the run's database was checkpointed by its last write: the live view sees every event
    assert not (runs / f"{run_id}.db-wal").exists()


def test_with_batching_off_the_same_is_recorded(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """With Dagster's batching off (a process that set ``DAGSTER_EVENT_BATCH_SIZE=0``) every
    event is stored one by one, with the same outcome."""
    monkeypatch.setenv("DAGSTER_EVENT_BATCH_SIZE", "0")
    home = tmp_path / "dagster"
    ensure_instance_config(home)
    instance, _, _ = _run(home)
    with instance:
        assert instance.get_materialized_partitions(KEY) == {"u1", "u2", "u3"}
        records = instance.event_log_storage.get_asset_check_execution_history(
            AssetCheckKey(KEY, "candidate_patches_parses"), limit=100)
        assert {r.partition: r.status.value for r in records if r.partition} == {
            "u1": "SUCCEEDED", "u2": "FAILED", "u3": "SUCCEEDED"}


def test_runs_past_the_kept_engines_and_a_wipe_still_read_and_write(tmp_path: Path) -> None:
    """Each run shard's engine is kept (least recently used dropped past ``run_engines``): a
    run whose engine was dropped reads and writes as before, and after ``wipe()`` (which
    deletes the run files) a run's database is created again on its next write."""
    from dagster import job, op

    @op
    def step() -> None:
        pass

    @job
    def tiny() -> None:
        step()

    home = tmp_path / "dagster"
    ensure_instance_config(home)
    with DagsterInstance.from_config(str(home)) as instance:
        storage = instance.event_log_storage
        assert isinstance(storage, PooledSqliteEventLogStorage) and storage.run_engines == 64
        storage.run_engines = 3  # (fewer runs to pass it)
        runs = [instance.create_run_for_job(tiny) for _ in range(6)]
        for i, run in enumerate(runs):
            instance.report_engine_event(f"first {i}", run)
        for i in (0, 1, len(runs) - 1):  # dropped long ago, and the latest
            instance.report_engine_event(f"second {i}", runs[i])
            assert [e.message for e in instance.all_logs(runs[i].run_id)][-2:] == \
                [f"first {i}", f"second {i}"]
        storage.wipe()
        assert instance.all_logs(runs[0].run_id) == []
        instance.report_engine_event("after the wipe", runs[0])
        assert [e.message for e in instance.all_logs(runs[0].run_id)] == ["after the wipe"]
