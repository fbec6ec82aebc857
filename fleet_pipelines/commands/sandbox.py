"""``fleet sandbox doctor`` and ``fleet sandbox run``: inspect and try the sandbox backends."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["doctor", "register", "run", "sandbox_app"]

sandbox_app = typer.Typer(
    name="sandbox",
    help="Sandbox backends: probe them, run a command the way an agent's command runs.",
    no_args_is_help=True,
)


@sandbox_app.command("doctor")
def doctor() -> None:
    """Probe every backend: works or not, why, and the measured start latency of `true`."""
    from sandbox import probe_all, resolve_sandbox

    results = probe_all()
    width = max(len(r.backend) for r in results)
    for r in results:
        status = "ok  " if r.available else "FAIL"
        latency = "-" if r.start_latency_s is None else f"{r.start_latency_s * 1000:.0f} ms"
        print(f"{r.backend:<{width}}  {status}  {latency:>9}  {r.detail}")
    try:
        selection = resolve_sandbox("auto", fresh=True)
    except OSError as exc:
        print(f"auto: none — {exc}")
        raise typer.Exit(1) from None
    print(f"auto: {selection.sandbox.name} — {selection.reason}")


_RUN_HELP = (
    "Run CMD in a sandbox over WORKDIR and exit with its exit code.\n\n"
    "Give CMD after --, e.g. fleet sandbox run -b bwrap -- /bin/bash -c 'id'. "
    "A command killed by signal N exits 128+N: a timeout or output over the per-stream limit "
    "exits 137 with a 'fleet sandbox: BACKEND: REASON' line on stderr. A command that is not "
    "found exits 127.\n\n"
    "Exits 2 before running anything when the backend does not work here, when local is asked "
    "for without --unsafe-local, when WORKDIR is not a directory or --timeout is not above 0."
)


@sandbox_app.command(
    "run",
    help=_RUN_HELP,
    short_help="Run CMD in a sandbox over WORKDIR and exit with its exit code.",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def run(
    command: Annotated[
        list[str], typer.Argument(metavar="CMD", help="The command and its arguments, after --.")
    ],
    backend: Annotated[
        str, typer.Option("--backend", "-b", help="auto, microvm, gvisor, bwrap or local.")
    ] = "auto",
    workdir: Annotated[
        Path, typer.Option("--workdir", "-w", help="Worktree shared read-write (default: cwd).")
    ] = Path("."),
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", "-t", help="Wall-time limit in seconds (then exit 137)."),
    ] = None,
    unsafe_local: Annotated[
        bool, typer.Option("--unsafe-local", help="Allow the `local` backend: NO isolation.")
    ] = False,
) -> None:
    """Run CMD in a sandbox over WORKDIR and exit with its exit code (see ``_RUN_HELP``)."""
    from sandbox import SandboxUnavailable, select_sandbox

    if backend == "local" and not unsafe_local:
        print("the local backend has no isolation: pass --unsafe-local to use it", file=sys.stderr)
        raise typer.Exit(2)
    if unsafe_local and backend == "auto":
        backend = "local"
    if timeout is not None and not timeout > 0:
        print(
            f"fleet sandbox run: --timeout must be above 0 seconds, not {timeout}", file=sys.stderr
        )
        raise typer.Exit(2)
    if not workdir.is_dir():
        print(f"fleet sandbox run: workdir {str(workdir)!r} is not a directory", file=sys.stderr)
        raise typer.Exit(2)
    try:
        box = select_sandbox(backend)
    except (SandboxUnavailable, ValueError) as exc:
        print(f"fleet sandbox run: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None
    result = box.run(command, workdir.resolve(), timeout=timeout)
    sys.stdout.write(result.stdout)
    sys.stdout.flush()
    sys.stderr.write(result.stderr)
    if result.reason.value != "exited":
        print(
            f"[fleet sandbox: {result.backend}: {result.reason.value} after {result.wall_s:.2f}s]",
            file=sys.stderr,
        )
    raise typer.Exit(result.exit_code)


def register(app: typer.Typer) -> None:
    app.add_typer(sandbox_app, name="sandbox")
