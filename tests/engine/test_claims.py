"""Claims (fleet_pipelines/engine/_claims.py) on a real Redis broker and real celery workers
(``--pool solo``, acks late, as the fleet's): a worker killed with -9 mid-task has its task
delivered to another worker within the claim's TTL and a half plus a scan, while the visibility
timeout is 10 minutes; a task that runs four claim TTLs long on a live worker runs once; a
message one worker's scan put back and another worker took is not put back again by a second
scan that had listed it before."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from fleet.errors import ConfigError
from fleet_pipelines.engine._claims import claim_ttl
from tests.distributed._cluster import Redis
from tests.engine.conftest import free_port, release_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
ROOT = Path(__file__).resolve().parents[2]
TTL_S, SCAN_S, VISIBILITY_S = 3, 1, 600


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Redis]:
    redis = Redis(free_port(), tmp_path / "redis")
    redis.start()
    try:
        yield redis
    finally:
        redis.stop()
        release_port(redis.port)


def _env(broker: Redis) -> dict[str, str]:
    return {**os.environ, "FLEET_CELERY_BROKER": broker.url, "PYTHONPATH": str(ROOT),
            "FLEET_CELERY_CLAIM_TTL_S": str(TTL_S), "FLEET_CELERY_RESTORE_S": str(SCAN_S),
            "FLEET_CELERY_VISIBILITY_S": str(VISIBILITY_S)}


def _worker(name: str, broker: Redis, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "tests.engine._claims_app", "worker",
             "--pool=solo", "--concurrency=1", "-n", f"{name}@%h", "--loglevel=INFO",
             "--without-gossip", "--without-mingle"], cwd=ROOT, env=_env(broker),
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)


def _wait(what: str, check: Callable[[], Any], timeout_s: float) -> Any:
    deadline = time.monotonic() + timeout_s
    while (value := check()) is None or value is False or value == []:
        assert time.monotonic() < deadline, f"no {what} after {timeout_s} s"
        time.sleep(0.2)
    return value


def _says(log: Path, text: bytes) -> bool:
    return text in log.read_bytes()


def _lines(record: Path, kind: str) -> list[list[str]]:
    if not record.exists():
        return []
    return [line.split() for line in record.read_text().splitlines() if line.startswith(kind)]


@pytest.fixture
def workers(tmp_path: Path, broker: Redis) -> Iterator[dict[str, subprocess.Popen[bytes]]]:
    started = {name: _worker(name, broker, tmp_path / f"{name}.log") for name in ("wa", "wb")}
    try:
        for name in started:
            log = tmp_path / f"{name}.log"
            _wait(f"{name} ready", partial(_says, log, b"ready."), 60)
        yield started
    finally:
        for proc in started.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _send(broker: Redis, record: Path, seconds: float) -> Any:
    from celery import Celery

    from fleet_pipelines.engine._config import celery_settings

    client = Celery("fleet_claims_client", broker=broker.url, backend=broker.url)
    client.conf.update(celery_settings(_env(broker)))
    return client.send_task("fleet_claims_test.work", args=[str(record), seconds])


def test_a_killed_workers_task_runs_on_another_within_the_claim_ttl(
        tmp_path: Path, broker: Redis, workers: dict[str, subprocess.Popen[bytes]]) -> None:
    record = tmp_path / "record"
    result = _send(broker, record, 20)
    (first,) = _wait("a start", lambda: _lines(record, "start"), 30)
    time.sleep(TTL_S)  # renewed at least twice by now
    os.killpg(workers[first[1]].pid, signal.SIGKILL)
    killed = time.time()
    starts = _wait("a second start", lambda: _lines(record, "start")[1:], 60)
    again = starts[0]
    waited = float(again[3]) - killed
    assert again[1] != first[1], starts
    # the claim lapses within a TTL, is confirmed half a TTL later, at the next scan: 4.5-6.5 s
    # here, with a margin for a loaded machine; the visibility timeout would take 10 minutes
    assert TTL_S < waited < 4 * TTL_S + 4 * SCAN_S, waited
    print(f"\nclaims: the killed worker's task started again {waited:.1f} s after the kill "
          f"(claim TTL {TTL_S} s, scans every {SCAN_S} s, visibility {VISIBILITY_S} s)")
    assert result.get(timeout=60) == again[1]
    assert [line[1] for line in _lines(record, "end")] == [again[1]]
    survivor = (tmp_path / f"{again[1]}.log").read_text() + (
        tmp_path / f"{'wa' if again[1] == 'wb' else 'wb'}.log").read_text()
    assert "lost its worker" in survivor


def test_a_task_longer_than_the_claim_ttl_runs_once(
        tmp_path: Path, broker: Redis, workers: dict[str, subprocess.Popen[bytes]]) -> None:
    record = tmp_path / "record"
    result = _send(broker, record, 4 * TTL_S)
    ran = result.get(timeout=120)
    time.sleep(2 * SCAN_S)
    assert [line[1] for line in _lines(record, "start")] == [ran]
    assert [line[1] for line in _lines(record, "end")] == [ran]
    logs = "".join((tmp_path / f"{n}.log").read_text() for n in workers)
    assert "lost its worker" not in logs


def test_the_claim_ttl_setting() -> None:
    assert claim_ttl({}) == 30.0
    assert claim_ttl({"FLEET_CELERY_CLAIM_TTL_S": "0"}) == 0.0  # off: the visibility timeout
    assert claim_ttl({"FLEET_CELERY_CLAIM_TTL_S": "12"}) == 12.0
    for bad in ("soon", "-1", "1"):
        with pytest.raises(ConfigError, match="FLEET_CELERY_CLAIM_TTL_S"):
            claim_ttl({"FLEET_CELERY_CLAIM_TTL_S": bad})


class _Listed:
    """A scanner's broker client whose listing of old deliveries is the one it made before
    another worker's scan put the message back (the race, made to happen every time)."""

    def __init__(self, client: Any, listed: list[str]) -> None:
        self.channel, self._redis, self._listed = client.channel, client.redis, listed
        self.redis = self

    def zrangebyscore(self, *_: Any) -> list[bytes]:
        return [t.encode() for t in self._listed]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._redis, name)


def test_a_message_delivered_again_since_a_scan_listed_it_is_not_put_back_twice(
        broker: Redis) -> None:
    """Two workers' scans list one dead worker's message; the first puts it back and a worker
    takes it (delivered now, its claim not set yet); the second, under the restore mutex, sees
    the new delivery and leaves it: the batch runs once (seen in the distributed kill test:
    two workers said "delivered again" 10 ms apart and the unit ran twice)."""
    from celery import Celery
    from kombu.utils.json import dumps

    from fleet_pipelines.engine._claims import ClaimScanner, _Client, _keys
    from fleet_pipelines.engine._config import celery_settings

    app = Celery("fleet_claims_scan", broker=broker.url)
    app.conf.update(celery_settings(_env(broker)))
    client = _Client(app)
    try:
        unacked, index, _mutex, _expire = _keys(client.channel)
        tag = "dead-worker-tag"
        payload = dumps([{"body": "x", "headers": {}, "properties": {"delivery_info": {}}},
                         "", "fleet-claims-test"])
        client.redis.hset(unacked, tag, payload)
        client.redis.zadd(index, {tag: time.time() - 10 * TTL_S})
        first, second = ClaimScanner(app, TTL_S, SCAN_S), ClaimScanner(app, TTL_S, SCAN_S)
        for scanner in (first, second):  # both have seen it unclaimed for long enough
            scanner._suspects[tag] = time.monotonic() - TTL_S
        assert first.scan(client) == [tag]
        assert not client.redis.hexists(unacked, tag)
        assert client.redis.llen("fleet-claims-test") == 1  # back on its queue, once
        client.redis.hset(unacked, tag, payload)  # taken again by a worker
        client.redis.zadd(index, {tag: time.time()})
        assert second.scan(_Listed(client, [tag])) == []
        assert client.redis.hexists(unacked, tag)
        assert client.redis.llen("fleet-claims-test") == 1
    finally:
        client.close()
