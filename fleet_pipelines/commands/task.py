"""``fleet task "..." --files A B [--repo R]``: a free-form task, the CLI twin of
``POST /v1/jobs/dispatch`` with a free-text ``task``.

One ad-hoc unit over the target files' symbols, run by the Claude agent with the task as its
brief, judged by the gates (applies, parses, lease scope, security, impacted tests, review);
a verified unit is handed over on its branch ``fleet/task-<id>/<unit>``. Prints the patch on
stdout, the verdicts and the branch on stderr. Exit 1 when the unit is not verified, 2 on bad
input (a missing API key, a target file the repository does not have).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from fleet_pipelines.commands.store import store_url_option

__all__ = ["register", "task_command"]


def task_command(
    task: Annotated[str, typer.Argument(help="What the agent should do, in plain words.")],
    files: Annotated[list[str], typer.Argument(
        help="The target files, repository-relative (after --files, or right after the task).",
        show_default=False)],
    _files_flag: Annotated[bool, typer.Option(
        "--files", "-f", help="Marks the start of the target files (optional).")] = False,
    repo: Annotated[Path, typer.Option("--repo", "-r", help="The repository.")] = Path(),
    model: Annotated[str | None, typer.Option(
        help="The Claude model (default: $FLEET_MODEL, else a current Sonnet).")] = None,
    sandbox: Annotated[str, typer.Option(help="auto, microvm, gvisor, bwrap or local.")] = "auto",
    store: Annotated[str | None, typer.Option(
        callback=store_url_option,
        help="Store URL or SQLite file (default: $FLEET_STORE_URL, else fleet.db in "
             "$FLEET_HOME, else in the repository's .fleet).")] = None,
) -> None:
    """Run a free-form task with the LLM agent on one unit over the given files."""

    from fleet.errors import FleetError
    from fleet.store import open_store
    from fleet.store.repo_scope import scoped_store
    from fleet.unit import TaskRequest, run_task
    from fleet_pipelines.commands._state import repo_state
    from sandbox import SandboxUnavailable, select_sandbox

    targets = tuple(files)
    if not repo.is_dir():
        print(f"error: --repo {repo}: no such directory", file=sys.stderr)
        raise typer.Exit(2)
    try:
        box = select_sandbox(sandbox)
        # the repository's state and its view of the store: its task's leases are the ones its
        # sweeps and its API take (fleet.store.repo_scope), its ledger records its own
        state = repo_state(repo, store=store, claim=True)  # another repository's: refused
        with open_store(state.store_url) as opened:
            result = run_task(TaskRequest(task, targets, model), repo,
                              scoped_store(opened, state.key), box)
    except (FleetError, SandboxUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(2) from exc
    for v in result.verdicts:
        print(f"# gate {v.gate}: {v.status}", file=sys.stderr)
    print(f"# {result.status} ({result.stop_reason}): {result.detail}", file=sys.stderr)
    if result.status == "verified":
        print(f"# branch {result.branch} at {result.commit}", file=sys.stderr)
    sys.stdout.write(result.patch)
    if result.status != "verified":
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("task")(task_command)
