"""``fleet sweep``, ``fleet demo`` and ``fleet stop``: the pipeline from the command line.

The state directory is ``--home``, else ``$FLEET_HOME``, else the repository's own
``REPO/.fleet`` (``fleet.home``); a state directory that belongs to another repository is refused
in one line. Every sweep goes through a real Dagster instance (``$DAGSTER_HOME``, default
``<home>/dagster``, SQLite), so its runs, assets and checks are in the UI (``make ui``). Any number
of fleet processes may share a repository and its state directory: the Dagster instance is
created under a lock, the index runs under a lock, and a campaign that another sweep is sweeping
there is refused in one line (exit 3). Dagster is imported inside the command functions only.

Runs are submitted to the instance (queued, launched by its daemon, re-executable from the UI).
``--in-process`` / ``FLEET_ENGINE=in-process`` executes them in the command's own process
instead (``execute_in_process``): one process to debug (breakpoints, profilers), no daemon and no
code server, but runs that the UI cannot re-execute.

This module wires the commands; what a sweep is given and checks first is in
``_pipeline_settings.py``, how it opens the instance and runs in ``_pipeline_run.py``, what it
prints in ``_pipeline_report.py``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Annotated

import typer

from fleet_pipelines.commands._pipeline_report import integration_tests, print_report
from fleet_pipelines.commands._pipeline_run import BUSY_EXIT, dagster_home_of, redo_units, swept
from fleet_pipelines.commands._pipeline_settings import (
    ENGINES,
    check_sandbox,
    check_test_python,
    in_process,
    preflight,
    resolve_home,
    sweep_settings,
)
from fleet_pipelines.commands.store import StoreOption, open_cli_store

__all__ = [
    "BUSY_EXIT",
    "ENGINES",
    "EXAMPLE",
    "ROOT",
    "HomeOption",
    "InProcessOption",
    "check_sandbox",
    "check_test_python",
    "in_process",
    "integration_tests",
    "preflight",
    "prepare_demo_repo",
    "print_report",
    "register",
    "resolve_home",
]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "acme-monorepo"

HomeOption = Annotated[Path | None, typer.Option(
    help="the fleet's state directory (default: $FLEET_HOME, else REPO/.fleet)")]
InProcessOption = Annotated[bool | None, typer.Option(
    "--in-process/--submitted", help="execute every run in this process (to debug it; the UI "
    "cannot re-execute such runs), or submit it to the instance (default: $FLEET_ENGINE, else "
    "submitted)", show_default=False)]


def prepare_demo_repo(target: Path) -> Path:
    """A git copy of examples/acme-monorepo at ``target`` (kept if it exists: a second demo
    sweeps the same copy and finds nothing new)."""
    from fleet.forge import run_git

    if (target / ".git").is_dir():
        return target
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(EXAMPLE, target,
                    ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", ".fleet"))
    run_git(target, "init", "-q", "-b", "main", check=True)
    run_git(target, "add", "-A", check=True)
    run_git(target, "commit", "-q", "-m", "acme-monorepo (fleet demo copy)", check=True)
    return target


def register(app: typer.Typer) -> None:
    @app.command("sweep")
    def sweep_cmd(
        repo: Annotated[str, typer.Argument(help="the git repository to sweep: a checkout, or "
                                            "a URL (file://, ssh://, https://, git://)")],
        campaign: Annotated[list[str], typer.Option("--campaign", "-c",
                                                    help="campaign name or YAML (repeatable)")],
        agents: Annotated[int, typer.Option(help="agents at once (the agent_sandbox pool)")] = 2,
        sandbox: Annotated[str, typer.Option(help="auto|microvm|gvisor|bwrap|local")] = "auto",
        forge: Annotated[str, typer.Option(help="local|github")] = "local",
        agent: Annotated[str, typer.Option(help="codemod|claude")] = "codemod",
        home: HomeOption = None,
        test_python: Annotated[Path | None, typer.Option(
            "--test-python", help="the target's own interpreter (its venv, with pytest) for "
            "its tests; default $FLEET_TEST_PYTHON, else the fleet's")] = None,
        redo: Annotated[list[str] | None, typer.Option(
            "--redo", help="judge these units again whatever their verdict: a unit key, its "
            "12-character prefix, or all (repeatable)")] = None,
        in_process_flag: InProcessOption = None,
    ) -> None:
        """Index REPO, plan the campaign, run the agents, verify, integrate and hand over.

        REPO may be a URL: the sweep then works in a mirror under the state directory and
        pushes unit and integration branches to the remote (or $FLEET_REMOTE; docs/remote.md).

        The state directory is --home, else $FLEET_HOME, else REPO/.fleet (kept out of git
        through .git/info/exclude); one that belongs to another repository is refused (exit 2).
        A campaign another sweep is sweeping on the same state directory is refused (exit 3)."""
        from fleet.errors import FleetError
        from fleet.forge.remote import is_url, mirror_of
        from fleet.home import check_home, check_mirror_home, check_store, claim_home, repo_root

        if not is_url(repo) and not Path(repo).is_dir():
            typer.echo(f"error: {repo}: no such directory (a git checkout or a URL)", err=True)
            raise typer.Exit(2)
        home = resolve_home(home, repo if is_url(repo) else Path(repo))
        dagster_home = dagster_home_of(home)
        if test_python is not None:  # read by the gates and the integration (inherited by runs)
            os.environ["FLEET_TEST_PYTHON"] = str(test_python.absolute())
        try:
            if not is_url(repo) and repo_root(repo) is not None:  # before its settings are read
                check_home(home, repo)
            elif is_url(repo):  # before its mirror is cloned into the state directory
                check_mirror_home(home, mirror_of(repo, {**os.environ,
                                                         "FLEET_HOME": str(home)}), repo)
            local = in_process(in_process_flag)
            settings = sweep_settings(repo, home, campaign, agents, sandbox, forge, agent)
            loaded = preflight(settings)  # the campaigns as read once for the whole sweep
            claim_home(home, Path(settings.repo))
            check_store(settings.store_url, settings.repo)  # not another repository's file
            if redo:
                redo_units(settings, home, redo)
        except FleetError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
        print_report(swept(settings, dagster_home, local, loaded), settings)

    @app.command("demo")
    def demo_cmd(
        agents: Annotated[int, typer.Option(help="agents at once")] = 2,
        sandbox: Annotated[str, typer.Option(help="auto|microvm|gvisor|bwrap|local")] = "auto",
        home: Annotated[Path, typer.Option(help="the fleet's state directory")] = Path(".fleet"),
        fresh: Annotated[bool, typer.Option(help="start over from a new copy")] = False,
        in_process_flag: InProcessOption = None,
    ) -> None:
        """Sweep the built-in campaigns over a copy of examples/acme-monorepo (.fleet/demo/)."""
        from fleet.errors import FleetError
        from fleet.home import claim_home

        try:  # before any heavy import and before --fresh removes anything: a one-line stop
            local = in_process(in_process_flag)
            check_sandbox(sandbox)
        except FleetError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
        from fleet_pipelines.resources import builtin_campaign_names

        if fresh and home.exists():
            shutil.rmtree(home)
        repo = prepare_demo_repo(home / "demo" / "acme-monorepo")
        settings = sweep_settings(repo, home, list(builtin_campaign_names()), agents, sandbox,
                                  "local", "codemod")
        try:
            claim_home(home, repo)
        except FleetError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
        dagster_home = dagster_home_of(home)
        print_report(swept(settings, dagster_home, local), settings)

    @app.command("stop")
    def stop_cmd(
        reason: Annotated[str, typer.Option(help="why (recorded)")] = "fleet stop",
        off: Annotated[bool, typer.Option("--off", help="release the kill switch")] = False,
        home: HomeOption = None,
        store: StoreOption = None,
        create: Annotated[bool, typer.Option(
            "--create", help="engage even if the store does not exist yet (creates it)")] = False,
    ) -> None:
        """The kill switch: every agent loop, step and sensor stops at its next check.

        The store is --store, else $FLEET_STORE_URL, else <home>/fleet.db (home: --home, else
        $FLEET_HOME, else the .fleet of the repository the current directory is in); a store
        that does not exist there is an error (exit 2) unless --create: a switch engaged in a
        fresh store that no fleet reads stops nothing."""
        from fleet.errors import ConfigError
        from fleet_pipelines.resources import FleetSettings

        home = resolve_home(home)
        url = store
        if not url:
            try:
                url = FleetSettings.from_env({**os.environ,
                                              "FLEET_HOME": str(home.resolve())}).store_url
            except ConfigError as exc:
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(2) from exc
        with open_cli_store(url, existing=not create) as opened:
            if off:
                opened.controls.release()
                opened.ledger.append("kill_switch.released", {}, actor="fleet stop")
                typer.echo(f"kill switch released ({url})")
            else:
                opened.controls.engage(reason)
                opened.ledger.append("kill_switch.engaged", {"reason": reason},
                                     actor="fleet stop")
                typer.echo(f"kill switch engaged ({reason}) in {url}; "
                           "`fleet stop --off` releases it")
