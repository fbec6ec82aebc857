"""``fleet serve``: the coordinator HTTP API on the store (``fleet_pipelines.commands.store`` for
the store URL's defaults), launching Dagster runs for dispatched campaigns unless
``--no-launch``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fleet_pipelines.commands.store import StoreOption, default_store_url

if TYPE_CHECKING:
    from fleet.api import Launcher

__all__ = ["register", "serve"]


_SERVE_HELP = (
    "Serve the coordinator HTTP API (leases, jobs) with uvicorn.\n\n"
    "Every route needs a bearer token from `fleet token create` on the same store; the schema "
    "is at /openapi.json. POST /v1/jobs/dispatch launches a Dagster run of the campaign's plan "
    "job on the instance at $DAGSTER_HOME (default $FLEET_HOME/dagster); with --no-launch jobs "
    "are only queued. Request bodies must be application/json and at most 1 MiB."
)


def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port (1-65535).", min=1, max=65535)] = 8787,
    store: StoreOption = None,
    repo: Annotated[
        Path | None,
        typer.Option(
            help="Repository the lease paths are relative to (default: $FLEET_REPO "
            "when launching, else the current directory)."
        ),
    ] = None,
    no_launch: Annotated[
        bool,
        typer.Option("--no-launch", help="Only queue dispatched jobs; launch no Dagster runs."),
    ] = False,
) -> None:
    """Serve the coordinator HTTP API (leases, jobs) with uvicorn (help: ``_SERVE_HELP``)."""
    from fleet.api import serve as run

    if repo is not None and not repo.is_dir():
        typer.echo(f"error: --repo {repo}: no such directory", err=True)
        raise typer.Exit(2)
    if no_launch:
        root = (repo or Path()).resolve()
        launcher = None
        _claim_served(root)
        url = _served_store(store, repo, root)
    else:
        url, root, launcher = _launching(store, repo)
    mode = "queue only" if launcher is None else "launching Dagster runs"
    typer.echo(f"fleet coordinator on http://{host}:{port} (store {url}, {mode})", err=True)
    run(url, root, host=host, port=port, launcher=launcher, repository=_served_key(root))


def _claim_served(root: Path) -> None:
    """Make the state directory of the served repository its own (``fleet.home.claim_home``),
    as a launching ``fleet serve`` and every sweep do; one line and exit 2 when it belongs to
    another repository. A plain directory (no git repository) claims nothing."""
    import os

    from fleet.errors import FleetError
    from fleet.home import claim_home, default_home, repo_root

    if repo_root(root) is None:
        return
    try:
        claim_home(Path(os.environ.get("FLEET_HOME") or default_home(root)), root)
    except FleetError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


def _served_store(store: str | None, repo: Path | None, root: Path) -> str:
    """``--store``, else the served repository's default store; a SQLite store in another
    repository's state directory is refused in one line (exit 2)."""
    from fleet.errors import FleetError
    from fleet.home import check_store, repo_root

    try:
        url = store or default_store_url(repo)
        if repo_root(root) is not None:
            check_store(url, root)
    except FleetError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    return url


def _served_key(root: Path) -> str:
    """The store key of the repository ``fleet serve`` serves (its leases are that
    repository's, as its sweeps' are); ``""`` for a plain directory."""
    import os

    from fleet.home import default_home, store_key

    return store_key(Path(os.environ.get("FLEET_HOME") or default_home(root)), root)


def _launching(store: str | None, repo: Path | None) -> tuple[str, Path, Launcher]:
    """The store URL, repository and ``SubmittingJobLauncher`` of the deployment in the
    environment; ``--store`` / ``--repo`` override its settings, so the coordinator and the runs
    it launches share one store."""
    import dataclasses
    import os

    from fleet.errors import FleetError
    from fleet.home import check_store, claim_home, repo_root
    from fleet_pipelines.resources import FleetSettings

    try:  # importing the definitions module builds ``defs`` from the environment, too
        from fleet_pipelines.commands._sweep import instance_for
        from fleet_pipelines.definitions import build_campaigns, build_definitions
        from fleet_pipelines.engine import ensure_run_queue
        from fleet_pipelines.engine.launcher import submitting_launcher
        from fleet_pipelines.jobs import ledger_recorder
        from fleet_pipelines.storage import ensure_instance_config

        env = dict(os.environ)
        if repo is not None:  # its own state directory, unless FLEET_HOME says otherwise
            env["FLEET_REPO"] = str(repo.resolve())
        settings = FleetSettings.from_env(env)
        if repo_root(settings.repo) is not None:  # lease paths may name a plain directory
            claim_home(Path(settings.home), settings.repo)
        if store:
            settings = dataclasses.replace(settings, store_url=store)
        if repo is not None:
            settings = dataclasses.replace(settings, repo=str(repo.resolve()))
        if repo_root(settings.repo) is not None:  # not another repository's SQLite store
            check_store(settings.store_url, settings.repo)
        defs = build_definitions(settings)
    except FleetError as exc:
        typer.echo(f"error: {exc} (or serve with --no-launch to only queue jobs)", err=True)
        raise typer.Exit(2) from exc
    dagster_home = Path(os.environ.get("DAGSTER_HOME") or Path(settings.home) / "dagster")
    from fleet.store import open_store
    from fleet.store.repo_scope import scoped_store
    from fleet.unit import TaskLauncher
    from sandbox import select_sandbox

    tasks = TaskLauncher(Path(settings.repo), scoped_store(open_store(settings.store_url),
                                                           settings.repository_key()),
                         select_sandbox)

    owner = settings.repo if repo_root(settings.repo) is not None else None  # claims it

    def prepare(home: Path) -> None:  # the embedded default's instance, with its run queue
        ensure_instance_config(home)
        ensure_run_queue(home, settings.agents)

    # a campaign's dispatch is a run submitted to the instance (fleet_pipelines/engine)
    launcher = submitting_launcher(settings.env(), build_campaigns(settings),
                                   lambda: instance_for(dagster_home, prepare, owner),
                                   ledger_recorder(defs),
                                   tasks=tasks, say=lambda line: typer.echo(line, err=True))
    return settings.store_url, Path(settings.repo), launcher


def register(app: typer.Typer) -> None:
    app.command("serve", help=_SERVE_HELP)(serve)
