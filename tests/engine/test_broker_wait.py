"""A run for the deployment's workers checks the celery broker before it is submitted
(``fleet_pipelines.engine._checks.broker_down``): a broker that is restarting is waited for,
one that stays down is named in one line once the wait is over (seen in the broker-restart
fault test: the fix runs were refused in the two seconds Redis was down, and the sweep failed)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from fleet_pipelines.engine._checks import broker_down
from tests.distributed._cluster import Redis
from tests.engine.conftest import free_port, release_port

pytestmark = [pytest.mark.timeout(120)]


def test_a_broker_that_comes_back_within_the_wait_is_not_down(tmp_path: Path) -> None:
    port = free_port()
    redis = Redis(port, tmp_path / "redis")
    starter = threading.Timer(3.0, redis.start)  # down for 3 s, then up
    starter.start()
    try:
        started = time.monotonic()
        assert broker_down(redis.url, wait_s=30.0) is None
        assert 2.5 < time.monotonic() - started < 30.0
    finally:
        starter.join()
        redis.stop()
        release_port(port)


def test_a_broker_that_stays_down_is_named_once_the_wait_is_over() -> None:
    port = free_port()
    try:
        url = f"redis://127.0.0.1:{port}/0"
        started = time.monotonic()
        problem = broker_down(url, wait_s=3.0)
        assert problem is not None and "\n" not in problem
        assert problem.startswith(f"the celery broker {url} is down")
        assert 2.0 <= time.monotonic() - started < 20.0
        assert broker_down(url) is not None  # no wait: at once
    finally:
        release_port(port)
