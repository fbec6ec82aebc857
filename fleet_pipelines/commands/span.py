"""``fleet span FILE``: one campaign over several repositories, deliberately (``fleet.unit._span``).

Each repository listed is swept by ``fleet sweep REPO -c CAMPAIGN`` in a process of its own, with
its own state directory and Dagster instance (``REPO/.fleet``) and its own view of the store
(``$FLEET_STORE_URL`` may name one PostgreSQL store for them all); then one report over them all
is read back from each repository's own store view. Exit 0 when every sweep exited 0, else the
first non-zero exit code; 2 for a bad span file before anything is swept.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["SHARED_STATE", "register", "span_command"]

SHARED_STATE = ("FLEET_HOME", "DAGSTER_HOME")


def span_command(
    path: Annotated[Path, typer.Argument(metavar="FILE", help="The span file (YAML).")],
    sandbox: Annotated[str, typer.Option(help="auto|microvm|gvisor|bwrap|local")] = "auto",
    in_process_flag: Annotated[bool | None, typer.Option(
        "--in-process/--submitted", help="how each sweep runs its Dagster runs (default: "
        "$FLEET_ENGINE, else submitted)", show_default=False)] = None,
    as_json: Annotated[Path | None, typer.Option(
        "--json", help="Also write the report as JSON to this file.")] = None,
) -> None:
    """Sweep one campaign over every repository of the span file, each with its own state, and
    print one report."""
    from fleet.campaigns.spec import load_campaign
    from fleet.errors import FleetError
    from fleet.home import default_home, store_key
    from fleet.store import open_store
    from fleet.store.repo_scope import scoped_store
    from fleet.unit import RepositoryReport, load_span, render_span, repository_report

    shared = [name for name in SHARED_STATE if os.environ.get(name)]
    if shared:
        typer.echo(f"error: fleet span sweeps every repository with its own state directory "
                   f"and Dagster instance: unset {' and '.join(shared)} (a store shared by "
                   "them all is FLEET_STORE_URL)", err=True)
        raise typer.Exit(2)
    try:
        span = load_span(path)
        campaign = load_campaign(span.campaign)
    except FleetError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    env = {k: v for k, v in os.environ.items() if k != "FLEET_REPO"}
    engine = [] if in_process_flag is None else [
        "--in-process" if in_process_flag else "--submitted"]
    codes = []
    for n, repo in enumerate(span.repositories, start=1):
        typer.echo(f"== span {span.campaign} {n}/{len(span.repositories)}: {repo}", err=True)
        done = subprocess.run(
            [sys.executable, "-m", "fleet_pipelines.cli", "sweep", str(repo), "-c",
             span.campaign, "--sandbox", sandbox, *engine], env=env, check=False)
        codes.append(done.returncode)
    reports = []
    for repo, code in zip(span.repositories, codes, strict=True):
        home = default_home(repo)
        key = store_key(home, repo)
        url = os.environ.get("FLEET_STORE_URL") or f"sqlite:///{home / 'fleet.db'}"
        if url.startswith("sqlite:///") and not (home / "fleet.db").is_file():
            reports.append(RepositoryReport(str(repo), key, code))  # stopped before a store
            continue
        with open_store(url) as store:
            reports.append(repository_report(scoped_store(store, key), campaign, repo, key, code))
    print(render_span(span, reports))
    if as_json is not None:
        as_json.write_text(json.dumps({"campaign": span.campaign, "source": str(span.source),
                                       "repositories": [r.to_dict() for r in reports]},
                                      indent=1) + "\n")
    failed = next((c for c in codes if c != 0), 0)
    if failed:
        raise typer.Exit(failed)


def register(app: typer.Typer) -> None:
    app.command("span")(span_command)
