"""How many batches a sweep keeps launched at once (``_sweep.batch_window``): the campaign's
``autonomy.max_parallel_agents`` worth of them, or, on celery workers that are no more than that,
two per worker (one running, the next one's run launching); the workers counted by a ping on the
deployment's broker (``Engine.workers``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import DagsterInstance

from fleet.campaigns import load_campaign
from fleet_pipelines.commands._sweep import batch_window
from fleet_pipelines.engine import Engine
from tests.distributed._cluster import Redis
from tests.engine.conftest import free_port, release_port


def test_the_window_is_two_batches_per_worker_within_the_campaigns_cap() -> None:
    campaign = load_campaign("yaml-safe-load")
    cap = campaign.autonomy.max_parallel_agents
    assert cap == 4
    assert batch_window(campaign, 1) == 4  # in process / workers unknown: the cap
    assert [batch_window(campaign, 1, k) for k in (1, 2, 3, 4)] == [4, 4, 6, 8]
    assert batch_window(campaign, 1, 5) == 4  # more workers than the cap: only the cap runs
    assert batch_window(campaign, 2, 2) == 4 and batch_window(campaign, 2, 3) == 2


def test_the_engine_counts_no_workers_on_a_broker_none_listens_to(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    redis = Redis(free_port(), tmp_path / "redis")
    redis.start()
    try:
        monkeypatch.setenv("FLEET_EXECUTOR", "celery")
        monkeypatch.setenv("FLEET_CELERY_BROKER", redis.url)
        with DagsterInstance.ephemeral() as instance:
            engine = Engine(instance, print, {})
            assert engine.workers("fix_yaml_safe_load_job") is None  # none answered: the cap
            assert engine.workers("index_code_job") is None  # a job that runs in the run worker
    finally:
        redis.stop()
        release_port(redis.port)
