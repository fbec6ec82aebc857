"""A celery app on the fleet workers' settings with claims installed (``_claims.install``, as
``fleet_pipelines.engine.worker.main`` does), for tests/engine/test_claims.py: its one task
records where it starts and ends, then sleeps."""

from __future__ import annotations

import os
import time
from pathlib import Path

from celery import Celery

from fleet_pipelines.engine._claims import install
from fleet_pipelines.engine._config import celery_settings

app = Celery("fleet_claims_test", broker=os.environ["FLEET_CELERY_BROKER"],
             backend=os.environ["FLEET_CELERY_BROKER"])
app.conf.update(celery_settings())
install(app)


@app.task(name="fleet_claims_test.work", bind=True)
def work(self: object, record: str, seconds: float) -> str:
    worker = str(self.request.hostname).split("@")[0]  # type: ignore[attr-defined]
    with Path(record).open("a") as out:
        out.write(f"start {worker} {os.getpid()} {time.time():.3f}\n")
    time.sleep(seconds)
    with Path(record).open("a") as out:
        out.write(f"end {worker} {time.time():.3f}\n")
    return worker
