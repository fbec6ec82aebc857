"""``fleet verify REPO PATCH [--write SYMBOL ...]``: every gate on a patch file against HEAD.

Prints each gate's verdict and evidence; exits 0 when accepted, 1 when rejected, 2 when the
gates could not judge (no write set, no sandbox, pytest gave no report).

``fleet rollback --unit K --to STEP [--worktree DIR]`` restores a unit's worktree to an agent step
(without ``--worktree``: the unit's workspace, recreated in ``--repo``, is left in place)
and ``fleet rollback --patch P`` reverts an integrated patch on the integration branch; both
are new ledger events.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from fleet.agents.model_name import DEFAULT_MODEL
from fleet_pipelines.commands.store import open_cli_store, store_url_option

if TYPE_CHECKING:
    from fleet.graph import SymbolGraph

__all__ = [
    "EXIT",
    "base_graph",
    "do_rollback",
    "ledger_write_set",
    "read_patch",
    "register",
    "verify_patch",
]

EXIT = {"accept": 0, "reject": 1, "unknown": 2}


def register(app: typer.Typer) -> None:
    @app.command("verify")
    def verify(
        repo: Annotated[Path, typer.Argument(help="The repository (its HEAD is the base).")],
        patch: Annotated[Path, typer.Argument(help="A unified git diff against HEAD.")],
        write: Annotated[
            list[str] | None,
            typer.Option("--write", "-w", help="A write-set symbol id (path::Qualified.name)."),
        ] = None,
        base: Annotated[str, typer.Option(help="The base revision.")] = "HEAD",
        sandbox: Annotated[
            str, typer.Option(help="Sandbox backend for tests and mypy (auto|bwrap|gvisor|...).")
        ] = "auto",
        bugfix: Annotated[bool, typer.Option(help="A bug fix: require a test-first test.")] = False,
        all_gates: Annotated[
            bool, typer.Option("--all", help="Run every gate even after a rejection.")
        ] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
        timeout: Annotated[float, typer.Option(help="Seconds per test or mypy run.")] = 300.0,
        graph: Annotated[
            bool, typer.Option(help="Select impacted tests with the symbol graph of the base.")
        ] = True,
        unit: Annotated[
            str | None, typer.Option(help="Take the write set from this unit in the ledger.")
        ] = None,
        store: Annotated[str | None, typer.Option(
            callback=store_url_option, help="Store URL or SQLite file (for --unit).")] = None,
        reviewer: Annotated[
            str, typer.Option(help="offline | claude (needs ANTHROPIC_API_KEY).")
        ] = "offline",
        model: Annotated[str, typer.Option(help="The reviewer's model.")] = DEFAULT_MODEL,
        test_python: Annotated[Path | None, typer.Option(
            "--test-python", help="The target's own interpreter (its venv, with pytest) for "
            "its tests; default $FLEET_TEST_PYTHON, else the fleet's.")] = None,
    ) -> None:
        """Run every verification gate on PATCH against REPO's HEAD and print the verdicts.

        The write set is the --write symbols, else that of --unit K in the ledger, else that of
        the unit whose recorded patch is PATCH."""
        if test_python is not None:
            import os

            os.environ["FLEET_TEST_PYTHON"] = str(test_python.absolute())
        problem = _bad_input(repo, patch)
        if problem is not None:
            typer.echo(f"fleet verify: {problem}", err=True)
            raise typer.Exit(2)
        if not write:
            write = ledger_write_set(store, unit, read_patch(patch), repo)
        code = verify_patch(repo, patch, write, base, sandbox, bugfix, all_gates, as_json,
                            timeout, graph, reviewer, model)
        raise typer.Exit(code)

    @app.command("rollback")
    def rollback(
        unit: Annotated[str | None, typer.Option(help="The unit to restore.")] = None,
        to: Annotated[int | None, typer.Option(help="The agent step (-1 = the base).")] = None,
        worktree: Annotated[
            Path | None,
            typer.Option(help="Restore in this worktree (default: recreate the unit's own)."),
        ] = None,
        patch: Annotated[
            str | None, typer.Option(help="An integrated patch: unit key or commit id.")
        ] = None,
        repo: Annotated[
            Path, typer.Option(help="The repository (its unit workspaces, its branches).")
        ] = Path("."),
        campaign: Annotated[
            str | None, typer.Option(help="Campaign: its branch is fleet/<campaign>/integration.")
        ] = None,
        branch: Annotated[str | None, typer.Option(help="The integration branch.")] = None,
        store: Annotated[str | None, typer.Option(
            callback=store_url_option, help="Store URL or SQLite file.")] = None,
    ) -> None:
        """Roll back, as new ledger events: a unit's worktree to a step, or an integrated patch."""
        if branch is None and campaign is not None:
            branch = f"fleet/{campaign}/integration"
        raise typer.Exit(do_rollback(unit, to, worktree, patch, repo, branch, store))


def verify_patch(
    repo: Path,
    patch: Path,
    write: list[str] | None,
    base: str = "HEAD",
    sandbox_name: str = "auto",
    bugfix: bool = False,
    all_gates: bool = False,
    as_json: bool = False,
    timeout: float = 300.0,
    use_graph: bool = True,
    reviewer_name: str = "offline",
    model: str = DEFAULT_MODEL,
) -> int:
    """The body of ``fleet verify``; returns the exit code."""
    from fleet.errors import ConfigError
    from fleet.verify import ClaudeReviewer, GateOptions, decide, rejected_by, run_gates
    from sandbox import SandboxUnavailable, select_sandbox

    reviewer: Any = None
    if reviewer_name == "claude":
        from fleet.agents.anthropic_model import AnthropicModel

        try:
            reviewer = ClaudeReviewer(AnthropicModel(model=model))
        except ConfigError as exc:
            typer.echo(f"the claude reviewer cannot run: {exc}", err=True)
            return 2
    elif reviewer_name != "offline":
        typer.echo(f"unknown reviewer {reviewer_name!r} (offline | claude)", err=True)
        return 2

    try:
        sandbox = select_sandbox(sandbox_name)
    except SandboxUnavailable as exc:
        typer.echo(f"no sandbox ({exc}): the tests cannot be run", err=True)
        sandbox = None
    options = GateOptions(bugfix=bugfix, fail_fast=not all_gates, timeout_s=timeout,
                          reviewer=reviewer)
    try:
        verdicts = run_gates(
            repo.resolve(), read_patch(patch), write or None, base=base, sandbox=sandbox,
            graph=base_graph(repo.resolve(), base) if use_graph else None, options=options,
        )
    finally:
        if reviewer is not None:
            reviewer.model.close()
    outcome = decide(verdicts)
    if as_json:
        typer.echo(json.dumps({
            "outcome": outcome,
            "rejected_by": rejected_by(verdicts),
            "verdicts": [
                {"gate": v.gate, "status": v.status, "evidence": v.evidence,
                 "details": v.details}
                for v in verdicts
            ],
        }, indent=2, default=str))
    else:
        for v in verdicts:
            typer.echo(f"{v.status.upper():8} {v.gate}: {v.evidence}")
        typer.echo(f"=> {outcome}")
    return EXIT[outcome]


def _bad_input(repo: Path, patch: Path) -> str | None:
    """One line naming what is wrong with REPO or PATCH, or None: checked before any gate."""
    import subprocess

    if not repo.is_dir():
        return f"the repository {repo} is not a directory"
    try:
        probe = subprocess.run(["git", "-C", str(repo), "rev-parse", "--git-dir"],
                               capture_output=True, text=True, check=False)
    except OSError as exc:
        return f"git cannot run ({exc}), needed to read {repo}"
    if probe.returncode != 0:
        said = " ".join(probe.stderr.split()) or "git rev-parse failed"  # (one line: git may
        return f"{repo} is not a git repository ({said})"  # add one below a mount point)
    if not patch.is_file():
        return f"the patch {patch} does not exist" if not patch.exists() else (
            f"the patch {patch} is not a file")
    try:
        with patch.open("rb"):
            pass
    except OSError as exc:
        return f"the patch {patch} cannot be read: {exc.strerror or exc}"
    return None


def read_patch(patch: Path) -> str:
    """The text of a patch file whatever its encoding: bytes that are not UTF-8 (a latin-1
    source file in the diff) survive as surrogate escapes, which the gates encode back to the
    same bytes when they apply the patch."""
    return patch.read_bytes().decode(errors="surrogateescape")


def ledger_write_set(store_url: str | None, unit: str | None, patch: str,
                     repo: Path | None = None) -> list[str] | None:
    """The write set of ``unit`` (or of the unit whose recorded patch is ``patch``) from the
    ledger of the repository ``repo`` (its own store and its own units: ``_state.repo_state``;
    another repository's state directory is refused, exit 2); ``None`` when there is no store
    or no such unit. Never creates a store. An explicit ``--unit`` that the ledger does not
    have (or no store at all) is an error: exit 2."""
    from fleet.home import repo_root
    from fleet.store import default_store_url
    from fleet.store.repo_scope import scoped_store
    from fleet_pipelines.commands._state import state_or_exit

    own = repo is not None and repo_root(repo) is not None
    state = state_or_exit(repo, store=store_url) if own and repo is not None else None
    url = state.store_url if state is not None else store_url or default_store_url()
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).is_file():
        if unit is not None:
            typer.echo(f"error: --unit {unit}: no fleet store at {url} (pass --store URL or "
                       "set FLEET_STORE_URL)", err=True)
            raise typer.Exit(2)
        return None
    raw = open_cli_store(url, existing=True)
    opened = scoped_store(raw, state.key) if state is not None else raw
    try:
        key = unit
        if key is None:
            for event in reversed(opened.ledger.events(kind="unit.finished")):
                if (event.payload.get("patch") or "").strip() == patch.strip() and event.unit:
                    key = event.unit
                    break
        if key is None:
            return None
        planned = opened.ledger.events(unit=key, kind="unit.planned")
        if not planned:
            if unit is not None:
                typer.echo(f"error: --unit {unit}: no such unit in the ledger at {url} (the "
                           "full key, as `fleet ledger show` prints it)", err=True)
                raise typer.Exit(2)
            return None
        typer.echo(f"write set of unit {key} (from the ledger)", err=True)
        return list(planned[-1].payload["write_set"])
    finally:
        raw.close()


_GRAPHS: dict[tuple[str, str], SymbolGraph] = {}


def base_graph(repo: Path, base: str) -> SymbolGraph | None:
    """The symbol graph of ``base`` (indexed from an exported tree; cached per commit);
    ``None`` when ``base`` names no commit."""
    import tempfile

    from fleet.forge import commit_of
    from fleet.graph import index
    from fleet.verify import export_tree

    sha = commit_of(repo, base) or ""
    key = (str(repo), sha)
    if key not in _GRAPHS:
        if not sha:
            return None
        with tempfile.TemporaryDirectory(prefix="fleet-verify-graph-") as tmp:
            export_tree(repo, sha, Path(tmp))
            _GRAPHS[key] = index(Path(tmp))
    return _GRAPHS[key]


def do_rollback(
    unit: str | None,
    to: int | None,
    worktree: Path | None,
    patch: str | None,
    repo: Path,
    branch: str | None,
    store_url: str | None,
) -> int:
    """The body of ``fleet rollback``; returns the exit code."""
    from fleet.agents.rollback import (
        RollbackError,
        restore_unit,
        rollback_patch,
        rollback_unit,
    )
    from fleet.errors import FleetError

    if (unit is None) == (patch is None):
        typer.echo("give either --unit K --to STEP or --patch P", err=True)
        return 2
    from fleet.store.repo_scope import scoped_store
    from fleet_pipelines.commands._state import state_or_exit

    try:  # a rollback reads the unit's history: a missing store is an error, never created
        state = state_or_exit(repo, store=store_url)  # another repository's: refused
        store = open_cli_store(state.store_url, existing=True)
    except typer.Exit as exc:
        return int(exc.exit_code)
    view = scoped_store(store, state.key)  # the repository's units and events only
    try:
        if unit is not None:
            if to is None:
                typer.echo("--unit needs --to STEP", err=True)
                return 2
            if worktree is not None:
                done = rollback_unit(view.ledger, worktree.resolve(), unit, to, actor="cli")
            else:
                done = restore_unit(view.ledger, repo.resolve(), unit, to, actor="cli")
        else:
            assert patch is not None
            if branch is None:
                typer.echo("--patch needs --campaign C or --branch B", err=True)
                return 2
            done = rollback_patch(view.ledger, repo.resolve(), branch, patch, actor="cli")
    except RollbackError as exc:
        typer.echo(f"rollback refused: {exc}", err=True)
        return 1
    except FleetError as exc:
        typer.echo(f"rollback failed: {exc}", err=True)
        return 1
    finally:
        store.close()
    typer.echo(f"{done.kind} {done.target}: {done.detail} (ledger event {done.event_seq})")
    if done.worktree is not None:
        typer.echo(f"worktree: {done.worktree}")
    return 0
