"""``fleet stop`` engages the kill switch in the store; the nightly schedules, the sweep and the
asset steps all refuse to work while it is on; ``fleet stop --off`` releases it."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from dagster import DagsterInstance, RunRequest, SkipReason, build_schedule_context

from fleet.errors import KillSwitchEngaged
from fleet.store import open_store
from fleet_pipelines.cli import main
from fleet_pipelines.commands._sweep import sweep
from fleet_pipelines.definitions import build_definitions
from fleet_pipelines.resources import FleetSettings, StoreResource


def test_fleet_stop_engages_and_releases_the_kill_switch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "fleet"
    home.mkdir()
    open_store(f"sqlite:///{home.resolve() / 'fleet.db'}").close()  # the fleet's existing store
    assert main(["stop", "--home", str(home), "--reason", "incident 42"]) == 0
    assert "kill switch engaged (incident 42)" in capsys.readouterr().out
    with open_store(f"sqlite:///{home.resolve() / 'fleet.db'}") as store:
        state = store.controls.kill_state()
        assert state.engaged and state.reason == "incident 42"
        assert store.ledger.events(kind="kill_switch.engaged")[0].payload == {
            "reason": "incident 42"}
    assert main(["stop", "--home", str(home), "--off"]) == 0
    with open_store(f"sqlite:///{home.resolve() / 'fleet.db'}") as store:
        assert not store.controls.engaged()


def test_schedule_and_sweep_honour_the_kill_switch(tmp_path: Path, git_repo: Path) -> None:
    settings = FleetSettings.from_env({"FLEET_HOME": str(tmp_path / "fleet"),
                                       "FLEET_REPO": str(git_repo),
                                       "FLEET_CAMPAIGNS": "yaml-safe-load"})
    store = StoreResource(url=settings.store_url)
    schedule = build_definitions(settings).resolve_schedule_def(
        "plan_yaml_safe_load_job_schedule")
    assert schedule.cron_schedule == "0 4 * * *"  # from the campaign file

    def tick() -> object:
        with build_schedule_context(resources={"store": store},
                                    scheduled_execution_time=datetime(2026, 11, 30, 4)
                                    ) as context:
            data = schedule.evaluate_tick(context)
        return (data.run_requests or [SkipReason(data.skip_message)])[0]

    request = tick()
    assert isinstance(request, RunRequest)
    assert request.tags["fleet/campaign"] == "yaml-safe-load"
    store.store().controls.engage("test")
    assert isinstance(tick(), SkipReason)
    (tmp_path / "dagster").mkdir()
    with DagsterInstance.local_temp(str(tmp_path / "dagster")) as instance, pytest.raises(
        KillSwitchEngaged
    ):
        sweep(settings, instance, say=lambda _: None)
    assert instance.get_runs() == []
