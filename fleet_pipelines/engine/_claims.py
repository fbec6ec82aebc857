"""A dead worker's batch delivered again within seconds, not after the visibility timeout.

A fleet celery worker acknowledges a task only when it has ended (``task_acks_late``), so the
Redis broker keeps every task a worker holds in its ``unacked`` hash. Kombu gives such a message
to another worker only once ``FLEET_CELERY_VISIBILITY_S`` has passed since its delivery — which
must exceed the longest batch, so a worker killed mid-batch left its units waiting up to that
long (an hour by default).

Claims tell a dead worker's message from a live one's: a worker that receives a task sets
``fleet:claim:<delivery tag>`` to its name with a TTL of ``FLEET_CELERY_CLAIM_TTL_S`` (default
30 s) and renews it every third of that while the message is unacknowledged. Every worker scans
the unacked messages every ``FLEET_CELERY_RESTORE_S``: one delivered more than a TTL ago whose
claim is gone, and still gone half a TTL later (a broker restarted in between: the live holder
sets its claim again within a third), is put back on its queue under kombu's own restore mutex
— exactly what kombu's visibility restore does, earlier — unless, checked again under the mutex,
it was claimed, acknowledged or delivered again since it was listed (two workers' scans list the
same dead message; the second must not put back what a worker took from the first's restore).
A batch that runs long keeps its claim and is never delivered twice; the visibility timeout
stays as the last resort. The leases and their fencing tokens still decide who may write: a
redelivered batch waits for the dead worker's leases to expire (``FLEET_LEASE_TTL_S``).

``FLEET_CELERY_CLAIM_TTL_S=0`` turns claims off (the visibility timeout alone, as before).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Mapping
from typing import Any

from fleet.errors import ConfigError

__all__ = ["CLAIM_PREFIX", "ClaimScanner", "Claims", "claim_ttl", "install"]

log = logging.getLogger("fleet.worker.claims")
CLAIM_PREFIX = "fleet:claim:"
DEFAULT_CLAIM_TTL_S = 30.0


def claim_ttl(environ: Mapping[str, str] | None = None) -> float:
    """``FLEET_CELERY_CLAIM_TTL_S`` in seconds (0: claims off); a bad value is a ConfigError
    naming the variable."""
    env = os.environ if environ is None else environ
    raw = env.get("FLEET_CELERY_CLAIM_TTL_S", "") or str(DEFAULT_CLAIM_TTL_S)
    try:
        ttl = float(raw)
    except ValueError as exc:
        raise ConfigError(f"FLEET_CELERY_CLAIM_TTL_S: {exc}") from exc
    if ttl < 0 or (0 < ttl < 3):
        raise ConfigError(f"FLEET_CELERY_CLAIM_TTL_S: expected 0 (off) or seconds >= 3, "
                          f"got {raw}")
    return ttl


def _keys(channel: Any) -> tuple[str, str, str, float]:
    """The redis transport's unacked hash, its index, its mutex and the mutex's expiry."""
    return (channel.unacked_key, channel.unacked_index_key, channel.unacked_mutex_key,
            float(channel.unacked_mutex_expire))


def _tag(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class Claims:
    """This worker's claims: one renewing thread for the messages it holds."""

    def __init__(self, app: Any, ttl_s: float) -> None:
        self.app, self.ttl_s = app, ttl_s
        self._held: dict[str, str] = {}  # delivery tag -> task id
        self._worker = ""
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def hold(self, tag: str, task_id: str, worker: str) -> None:
        """Claim ``tag`` now and keep renewing it until ``release`` or its acknowledgement."""
        with self._lock:
            self._held[tag] = task_id
            self._worker = worker
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._renew_loop,
                                                name="fleet-claims", daemon=True)
                self._thread.start()
        self._wake.set()

    def release(self, task_id: str) -> None:
        """Stop renewing the claim of ``task_id``'s message (its key expires by itself: the
        acknowledgement that follows removes the message first)."""
        with self._lock:
            for tag, held in list(self._held.items()):
                if held == task_id:
                    del self._held[tag]

    def held(self) -> list[str]:
        with self._lock:
            return list(self._held)

    def _renew_loop(self) -> None:
        client = None
        while True:
            self._wake.wait(self.ttl_s / 3)
            self._wake.clear()
            tags = self.held()
            if not tags:
                continue
            try:
                if client is None:
                    client = _Client(self.app)
                unacked = _keys(client.channel)[0]
                for tag in tags:
                    if client.redis.hexists(unacked, tag):
                        client.redis.set(CLAIM_PREFIX + tag, self._worker,
                                         ex=max(1, round(self.ttl_s)))
                    else:  # acknowledged (or rejected): nothing left to hold
                        with self._lock:
                            self._held.pop(tag, None)
            except Exception as exc:  # the broker is down: retried next tick
                log.warning("fleet claims: cannot renew %s: %s", tags, exc)
                if client is not None:
                    client.close()
                client = None


class _Client:
    """A kombu connection of the app's broker with its default channel's redis client."""

    def __init__(self, app: Any) -> None:
        self.connection = app.connection_for_write()
        self.channel = self.connection.default_channel
        self.redis = self.channel.client

    def close(self) -> None:
        with contextlib.suppress(Exception):  # closing a broken connection
            self.connection.release()


class ClaimScanner:
    """Puts a dead worker's unacknowledged messages back on their queues (module docstring)."""

    def __init__(self, app: Any, ttl_s: float, every_s: float) -> None:
        self.app, self.ttl_s, self.every_s = app, ttl_s, every_s
        self._suspects: dict[str, float] = {}  # tag -> when first seen without a claim
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="fleet-claim-scan",
                                            daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        client = None
        while not self._stop.wait(self.every_s):
            try:
                if client is None:
                    client = _Client(self.app)
                for tag in self.scan(client):
                    log.warning("fleet claims: message %s lost its worker (no claim for "
                                "%.0f s): delivered again", tag, self.ttl_s * 1.5)
            except Exception as exc:  # the broker is down: retried next scan
                log.warning("fleet claims: scan failed: %s", exc)
                if client is not None:
                    client.close()
                client = None

    def scan(self, client: _Client, now: float | None = None) -> list[str]:
        """One scan; the tags put back on their queues."""
        from kombu.transport.redis import Mutex, MutexHeld

        unacked, index, mutex, expire = _keys(client.channel)
        wall = time.time() if now is None else now
        clock = time.monotonic()
        old = [_tag(t) for t in client.redis.zrangebyscore(index, "-inf", wall - self.ttl_s)]
        restored: list[str] = []
        seen = set()
        for tag in old:
            seen.add(tag)
            if client.redis.exists(CLAIM_PREFIX + tag):
                self._suspects.pop(tag, None)
                continue
            first = self._suspects.setdefault(tag, clock)
            if clock - first < self.ttl_s / 2:
                continue
            try:
                with Mutex(client.redis, mutex, expire):
                    # checked again under the mutex: claimed since, acknowledged since, or
                    # delivered again since it was listed (another worker's scan put it back
                    # and a worker took it, its claim not set yet: putting it back again would
                    # run it twice)
                    delivered = client.redis.zscore(index, tag)
                    if (client.redis.exists(CLAIM_PREFIX + tag)
                            or not client.redis.hexists(unacked, tag)
                            or delivered is None or float(delivered) > wall - self.ttl_s):
                        self._suspects.pop(tag, None)
                        continue
                    client.channel.qos.restore_by_tag(tag, client.redis)
            except MutexHeld:  # another worker is restoring: next scan
                continue
            self._suspects.pop(tag, None)
            restored.append(tag)
        for tag in list(self._suspects):
            if tag not in seen:  # acknowledged meanwhile
                del self._suspects[tag]
        return restored


_installed: dict[str, Any] = {}


def install(app: Any, environ: Mapping[str, str] | None = None) -> Claims | None:
    """Connect this process's celery worker to claims (once): claim each task message it
    receives, and scan for dead workers' messages every ``FLEET_CELERY_RESTORE_S`` once it is
    ready. None when ``FLEET_CELERY_CLAIM_TTL_S=0``."""
    from celery import signals

    from fleet_pipelines.engine._config import celery_settings

    env = os.environ if environ is None else environ
    ttl = claim_ttl(env)
    if ttl == 0:
        return None
    if "claims" in _installed:
        return _installed["claims"]
    every = float(celery_settings(env)["broker_transport_options"]["unacked_restore_interval"])
    claims = Claims(app, ttl)
    scanner = ClaimScanner(app, ttl, min(every, ttl / 3))

    def received(request: Any = None, **_: Any) -> None:
        message = getattr(request, "message", None)
        tag = getattr(message, "delivery_tag", None)
        if tag is not None:
            claims.hold(_tag(tag), str(request.id), str(getattr(request, "hostname", "")))

    def ended(task_id: str | None = None, **_: Any) -> None:
        if task_id is not None:
            claims.release(task_id)

    def ready(**_: Any) -> None:
        scanner.start()

    def shutdown(**_: Any) -> None:
        scanner.stop()

    for signal, receiver in ((signals.task_received, received), (signals.task_postrun, ended),
                             (signals.worker_ready, ready), (signals.worker_shutdown, shutdown)):
        signal.connect(receiver, weak=False)
    _installed.update(claims=claims, scanner=scanner)
    return claims
