"""A fleet celery worker: runs the steps that dagster-celery puts on the broker (a batch of
units, an integration), on a machine that shares nothing with the others but PostgreSQL and the
target repository's git remote.

    FLEET_HOME=/fleet FLEET_REPO=git://git.internal/target.git \\
    FLEET_CELERY_BROKER=redis://redis:6379/0 FLEET_STORE_URL=postgresql://... \\
    DAGSTER_POSTGRES_URL=postgresql+psycopg2://... python -m fleet_pipelines.engine.worker -n w1

Before it takes any task it checks, each in one line naming what failed (exit 3): a sandbox
backend works here (a worker that can run none refuses work instead of running unsandboxed),
the broker answers, the fleet store and Dagster's storage accept a connection, the remote can be
cloned. ``FLEET_REPO`` is the target repository's URL: the worker keeps its own mirror of it
under its own ``FLEET_HOME`` (``fleet.forge.remote``); the unit stage pushes a verified unit's
branch there under a lease (a worker that lost its unit to another is refused, never overwrites
it) and the integration fetches the branches it merges. Before each task that reads them the mirror
is synced and the symbol graph of the base branch is indexed into this worker's own
``FLEET_HOME`` (rebuilt from the remote, never copied from another machine; not again for a base
commit this process already indexed, ``_prepare``). A worker indexes the base and imports what a
step task imports once before it consumes (``_prepare.warm``), so its first task does not.

One task at a time (``--pool solo``): kill -9 of a worker kills its unit; its message is
acknowledged only at the end (``celery_settings``), and the worker claims it while it holds it
(``_claims``): once the claim has lapsed another worker puts the batch back on the queue — within
``FLEET_CELERY_CLAIM_TTL_S`` and a half, not the visibility timeout — and the dead worker's leases
expire by their TTL before the batch runs again.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from celery import Celery, signals

from fleet.errors import FleetError
from fleet_pipelines.engine._checks import broker_down, database_down

__all__ = ["QUEUE", "app", "main", "make_worker_app", "preflight"]

log = logging.getLogger("fleet.worker")
QUEUE = "dagster"  # dagster-celery's default queue


def make_worker_app(environ: dict[str, str] | None = None) -> Celery:
    """dagster-celery's app and its step task, on ``FLEET_CELERY_BROKER`` with the settings the
    executor uses too."""
    from dagster_celery.make_app import make_app
    from dagster_celery.tasks import create_task

    from fleet_pipelines.engine._config import celery_settings

    env = dict(os.environ if environ is None else environ)
    broker = env.get("FLEET_CELERY_BROKER", "redis://127.0.0.1:6379/0")
    app = make_app({"broker": broker, "backend": env.get("FLEET_CELERY_BACKEND") or broker})
    app.conf.update(celery_settings(env))
    create_task(app)
    return app


app = make_worker_app()


def _remote() -> str | None:
    """``FLEET_REPO`` when it is a URL (the target's remote: this worker works in its own
    mirror of it), else None (a worker on one machine with the checkout)."""
    url = os.environ.get("FLEET_REPO", "")
    return url if "://" in url else None


@signals.task_prerun.connect
def _before(args: Any = None, **_: Any) -> None:
    """The worker's mirror synced from the remote and the symbol graph of its base branch in
    this worker's own home, for the steps that read them (``_prepare``): no file crosses
    machines, and an unchanged base is not indexed again by this process."""
    url = _remote()
    if url is None:
        return
    from fleet_pipelines.engine._prepare import prepare, step_keys

    prepare(url, Path(os.environ["FLEET_HOME"]), os.environ.get("FLEET_BASE_BRANCH", "main"),
            step_keys(args or ()))


def preflight(environ: dict[str, str]) -> str | None:
    """Why this worker must not take work (one line), or None."""
    from fleet_pipelines.commands.pipeline import check_sandbox

    sandbox = environ.get("FLEET_SANDBOX", "auto")
    if sandbox == "local":
        return "FLEET_SANDBOX=local runs agents without isolation: a worker refuses it"
    try:
        check_sandbox(sandbox)
    except FleetError as exc:
        return f"no sandbox backend works here: {exc}"
    broker = environ.get("FLEET_CELERY_BROKER", "")
    if not broker:
        return "FLEET_CELERY_BROKER is not set (redis://host:6379/0)"
    problem = broker_down(broker)
    if problem:
        return problem
    for name in ("FLEET_STORE_URL", "DAGSTER_POSTGRES_URL"):
        problem = database_down(name, environ.get(name, ""))
        if problem:
            return problem
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fleet_pipelines.engine.worker",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--name", default=f"fleet-{os.getpid()}")
    parser.add_argument("--loglevel", default="INFO")
    args = parser.parse_args(argv)
    if argv is None:  # the process's entry: its warm-up may freeze what it imports (_startup)
        from fleet_pipelines._startup import own_process

        own_process()
    env = dict(os.environ)
    why = preflight(env)
    if why is not None:
        print(f"fleet worker {args.name} refuses work: {why}", file=sys.stderr)
        return 3
    url = _remote()
    if url is not None:  # a remote that cannot be cloned: refused before any task
        from fleet_pipelines.engine._prepare import warm

        try:  # the mirror, and while idle the base's index and the step's imports (_prepare)
            warm(url, Path(env["FLEET_HOME"]), env.get("FLEET_BASE_BRANCH", "main"))
        except FleetError as exc:
            print(f"fleet worker {args.name} refuses work: {exc}", file=sys.stderr)
            return 3
    from fleet_pipelines.engine._claims import install

    try:  # a dead worker's batch delivered again within seconds (_claims)
        install(app, env)
    except FleetError as exc:
        print(f"fleet worker {args.name} refuses work: {exc}", file=sys.stderr)
        return 3
    app.worker_main(["worker", "--pool=solo", "--concurrency=1", "-n", f"{args.name}@%h",
                     "-Q", QUEUE, f"--loglevel={args.loglevel}", "--without-gossip",
                     "--without-mingle"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
