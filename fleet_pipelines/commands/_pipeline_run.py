"""How ``fleet sweep`` and ``fleet demo`` run: ``--redo`` requeues the named units, then the
Dagster instance is opened (``$DAGSTER_HOME``, default ``<home>/dagster``; created under a lock,
claimed for one repository) and the sweep runs on it, every run submitted to the instance or, with
``--in-process``, executed in this process. A campaign that another sweep holds on the state
directory is refused in one line (exit 3), an instance that is another repository's likewise
(exit 2). Whatever else stops the sweep is one line too, never a traceback (``FLEET_TRACEBACK=1``
shows it): a run that failed (exit 1: the failed step and its error, the run in the UI), the kill
switch, a store or remote that cannot be reached (exit 2). Dagster is imported inside the
functions only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from collections.abc import Sequence

    from fleet.campaigns.spec import Campaign
    from fleet_pipelines.commands._sweep import SweepReport
    from fleet_pipelines.resources import FleetSettings

__all__ = ["BUSY_EXIT", "FAILED_EXIT", "STOPPED_EXIT", "dagster_home_of", "one_line",
           "redo_units", "run_sweep", "swept"]

FAILED_EXIT = 1  # a run of the sweep failed
STOPPED_EXIT = 2  # the sweep could not go on: kill switch, store, remote, instance
BUSY_EXIT = 3  # another sweep holds the campaign on this state directory


def one_line(exc: BaseException) -> str:
    """An error's message on one line (a driver's message spans several: psycopg's "Is the
    server running ..." hint, git's "fatal:" lines)."""
    return " ".join(part.strip() for part in str(exc).splitlines() if part.strip())


def dagster_home_of(home: Path) -> Path:
    """The sweep's Dagster instance: ``$DAGSTER_HOME``, else ``<home>/dagster``."""
    return Path(os.environ.get("DAGSTER_HOME") or home / "dagster")


def run_sweep(settings: FleetSettings, dagster_home: Path, local: bool = False,
              campaigns: Sequence[Campaign] | None = None) -> SweepReport:
    """Sweep on the instance at ``dagster_home``, every run submitted to it, or with ``local``
    executed in this process (``_sweep._execute`` when no engine is current); ``campaigns``:
    those of ``settings`` as ``preflight`` loaded them (else they are loaded once here)."""
    from contextlib import nullcontext

    from rich.console import Console
    from rich.text import Text

    from fleet_pipelines._startup import heavy_imports

    with heavy_imports():  # Dagster, the definitions, the engine (fleet_pipelines._startup)
        from fleet_pipelines.commands._sweep import instance_for, sweep
        from fleet_pipelines.engine import ensure_run_queue, submitting
        from fleet_pipelines.storage import ensure_instance_config

    def prepare(home: Path) -> None:
        ensure_instance_config(home)
        ensure_run_queue(home, settings.agents)

    console = Console(stderr=True)
    settings.save()
    with instance_for(dagster_home.resolve(), prepare, settings.repo) as instance, console.status(
        "sweeping", spinner="dots"
    ) as status:

        # said with the sweep's first line, once it holds its campaigns' locks: a sweep refused
        # as busy prints its one error line and nothing else
        notices = (["runs execute in this process (--in-process): the UI shows them but cannot "
                    "re-execute them"] if local else [])

        def say(message: str) -> None:
            for line in [*notices, message]:  # paths and run ids: text, never rich markup
                status.update(Text(line))
                console.log(Text(line))
            notices.clear()

        engine = nullcontext() if local else submitting(instance, settings.env(), say)
        with engine:  # every run submitted to the instance, unless --in-process
            return sweep(settings, instance, say=say, campaigns=campaigns)


def swept(settings: FleetSettings, dagster_home: Path, local: bool = False,
          campaigns: Sequence[Campaign] | None = None) -> SweepReport:
    """``run_sweep``, with what stops it said in one line on stderr: a campaign that another
    sweep holds on the state directory (exit 3), a failed run (exit 1), any other
    :class:`FleetError` (exit 2: the kill switch, a store or remote that cannot be reached, an
    instance that is another repository's). ``FLEET_TRACEBACK=1`` lets the exception through."""
    from fleet.errors import FleetError
    from fleet_pipelines.commands._sweep import RunFailed, SweepBusy

    try:
        return run_sweep(settings, dagster_home, local, campaigns)
    except FleetError as exc:
        if os.environ.get("FLEET_TRACEBACK", "") not in ("", "0"):
            raise
        code = (BUSY_EXIT if isinstance(exc, SweepBusy)
                else FAILED_EXIT if isinstance(exc, RunFailed) else STOPPED_EXIT)
        typer.echo(f"error: {one_line(exc)}", err=True)
        raise typer.Exit(code) from exc


def redo_units(settings: FleetSettings, home: Path, keys: list[str]) -> None:
    """``--redo``: requeue the named units of every campaign of the sweep (a key that names no
    unit of any of them is an error)."""
    from fleet.errors import ConfigError
    from fleet.home import store_key
    from fleet.unit import redo
    from fleet_pipelines.resources import StoreResource

    ledger = StoreResource(url=settings.store_url, repo=store_key(home, settings.repo)).ledger()
    for key in keys:
        hits = 0
        for campaign in settings.campaigns:
            try:
                hits += len(redo(ledger, campaign, [key]))
            except ConfigError:
                continue
        if not hits and key != "all":
            raise ConfigError(f"--redo {key}: no unit of {', '.join(settings.campaigns)} has "
                              "that key (or it is the prefix of several)")
