"""``fleet verify REPO PATCH [--write SYMBOL ...]``: every gate on a patch file against HEAD.

Prints each gate's verdict and evidence; exits 0 when accepted, 1 when rejected, 2 when the
gates could not judge (no write set, no sandbox, pytest gave no report).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

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
    ) -> None:
        """Run every verification gate on PATCH against REPO's HEAD and print the verdicts."""
        code = verify_patch(repo, patch, write, base, sandbox, bugfix, all_gates, as_json,
                            timeout)
        raise typer.Exit(code)


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
) -> int:
    """The body of ``fleet verify``; returns the exit code."""
    from fleet.verify import GateOptions, decide, rejected_by, run_gates
    from sandbox import SandboxUnavailable, select_sandbox

    try:
        sandbox = select_sandbox(sandbox_name)
    except SandboxUnavailable as exc:
        typer.echo(f"no sandbox ({exc}): the tests cannot be run", err=True)
        sandbox = None
    options = GateOptions(bugfix=bugfix, fail_fast=not all_gates, timeout_s=timeout)
    verdicts = run_gates(
        repo.resolve(), patch.read_text(), write or None, base=base, sandbox=sandbox,
        options=options,
    )
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
