"""``autonomy.max_parallel_agents`` governs how many of a campaign's units run at once: a batch
runs at most that many of its units side by side whatever ``--agents`` says, and a sweep on the
workers keeps at most that many agents' worth of batches in progress."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from dagster import DagsterInstance

from assets.campaign import agents_per_batch
from fleet.campaigns.spec import load_campaign, parse_campaign
from fleet.store import open_store
from fleet.unit import latest_results
from fleet_pipelines.commands._sweep import batch_window, sweep
from fleet_pipelines.resources import FleetSettings
from fleet_pipelines.storage import ensure_instance_config
from sandbox import Sandbox


def _with_parallel(n: int) -> str:
    """yaml-safe-load's own file, with ``autonomy.max_parallel_agents: n``."""
    from fleet.campaigns.spec import builtin_campaigns

    text = builtin_campaigns()["yaml-safe-load"].read_text()
    assert "max_parallel_agents: 4" in text
    return text.replace("max_parallel_agents: 4", f"max_parallel_agents: {n}")


def test_the_batch_and_the_window_follow_the_campaign() -> None:
    one = parse_campaign(_with_parallel(1), "one.yaml")
    six = parse_campaign(_with_parallel(6), "six.yaml")
    assert agents_per_batch(one, 4) == 1 and batch_window(one, 4) == 1
    assert agents_per_batch(six, 2) == 2 and batch_window(six, 2) == 3  # 3 batches of 2
    assert agents_per_batch(six, 8) == 6 and batch_window(six, 8) == 1
    assert agents_per_batch(load_campaign("yaml-safe-load"), 2) == 2


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[DagsterInstance]:
    ensure_instance_config(tmp_path / "dagster")
    with DagsterInstance.from_config(str(tmp_path / "dagster")) as inst:
        yield inst


@pytest.mark.sandbox
@pytest.mark.slow
def test_one_agent_at_a_time_when_the_campaign_says_so(
        tmp_path: Path, acme_repo: Path, instance: DagsterInstance, bwrap: Sandbox) -> None:
    campaign = tmp_path / "yaml-one-at-a-time.yaml"
    campaign.write_text(_with_parallel(1))
    settings = FleetSettings.from_env({
        "FLEET_HOME": str(tmp_path / "home"), "FLEET_REPO": str(acme_repo),
        "FLEET_SANDBOX": "bwrap", "FLEET_AGENTS": "3", "FLEET_CAMPAIGNS": str(campaign)})
    sweep(settings, instance, say=lambda _: None)
    store = open_store(settings.store_url)
    results = latest_results(store.ledger, load_campaign(campaign))  # (its own version)
    assert len(results) >= 3 and {r.status for r in results.values()} == {"verified"}
    spans = []
    for unit in results:
        events = store.ledger.events(unit=unit)
        actors = {e.actor for e in events if e.actor.startswith("unit:")}
        assert actors == {"unit:w0"}, (unit, actors)  # one unit thread, never w1 / w2
        started = min(e.created_at for e in events if e.actor == "unit:w0")
        ended = max(e.created_at for e in events if e.kind == "unit.finished")
        spans.append((started, ended))
    spans.sort()
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert start >= end, spans  # one after the other, never side by side
