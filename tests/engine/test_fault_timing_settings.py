"""The settings that time a dead worker's recovery: ``FLEET_CELERY_RESTORE_S`` (how often an
idle celery worker looks for messages past the visibility timeout) and ``FLEET_LEASE_TTL_S`` (how
long a unit's leases outlive their holder's last heartbeat). Their defaults are production's
(kombu's ~100 s scan, 60 s leases); tests/distributed's deployment shortens both."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.errors import ConfigError
from fleet.protocols import DEFAULT_LEASE_TTL_S
from fleet_pipelines.engine._config import celery_settings
from fleet_pipelines.resources import FleetSettings, build_resources


def test_the_restore_scan_defaults_to_kombus_period_and_follows_the_setting() -> None:
    default = celery_settings({})["broker_transport_options"]
    assert default == {"visibility_timeout": 3600.0, "unacked_restore_interval": 100.0,
                       "unacked_restore_throttle": 1}  # kombu's: every 10th of 10 s ticks
    short = celery_settings({"FLEET_CELERY_VISIBILITY_S": "60", "FLEET_CELERY_RESTORE_S": "2"})
    assert short["broker_transport_options"] == {
        "visibility_timeout": 60.0, "unacked_restore_interval": 2.0,
        "unacked_restore_throttle": 1}
    for bad in ("soon", "0", "-1"):
        with pytest.raises(ConfigError, match="FLEET_CELERY_RESTORE_S"):
            celery_settings({"FLEET_CELERY_RESTORE_S": bad})


def test_the_lease_ttl_reaches_the_store_resource(tmp_path: Path) -> None:
    env = {"FLEET_HOME": str(tmp_path / "home"), "FLEET_REPO": str(tmp_path)}
    assert DEFAULT_LEASE_TTL_S == 60.0
    assert FleetSettings.from_env(env).lease_ttl_s == DEFAULT_LEASE_TTL_S
    settings = FleetSettings.from_env({**env, "FLEET_LEASE_TTL_S": "30"})
    assert settings.lease_ttl_s == 30.0
    assert build_resources(settings)["store"].lease_ttl_s == 30.0
    for bad in ("long", "0", "-5"):
        with pytest.raises(ConfigError, match="FLEET_LEASE_TTL_S"):
            FleetSettings.from_env({**env, "FLEET_LEASE_TTL_S": bad})
