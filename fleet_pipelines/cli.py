"""The ``fleet`` console script.

Sub-commands live in ``fleet_pipelines/commands/<area>.py``, each exposing
``register(app: typer.Typer) -> None``. Commands that run the pipeline import dagster inside
their function bodies only. ``fleet merge-driver`` is dispatched before typer is imported, so git
pays only for the merge itself.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

__all__ = ["COMMAND_MODULES", "FAST_PATHS", "build_app", "main"]

# Commands that must start in milliseconds: argv[1] -> "module:function(argv) -> int".
FAST_PATHS: dict[str, str] = {
    "merge-driver": "fleet.merge.driver:main",
}

COMMAND_MODULES = (
    "graph",
    "store",
    "serve",
    "sandbox",
    "campaigns",
    "verify",
    "merge",
    "pipeline",
    "task",
    "span",
)


def build_app() -> object:
    import typer

    app = typer.Typer(
        name="fleet",
        help="A coordinated fleet of coding agents over one codebase.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_show_locals=False,
    )
    @app.callback()
    def root() -> None:
        """fleet: index a repository, plan a campaign, run the agent fleet, hand over the result."""

    @app.command("version")
    def version() -> None:
        """Print the fleet-pipelines version."""
        from fleet import __version__

        print(f"fleet-pipelines {__version__}")

    for name in COMMAND_MODULES:
        importlib.import_module(f"fleet_pipelines.commands.{name}").register(app)
    return app


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in FAST_PATHS:
        module_name, _, func = FAST_PATHS[args[0]].partition(":")
        module = importlib.import_module(module_name)
        return int(getattr(module, func)(args[1:]))
    from fleet_pipelines._startup import end_process, heavy_imports, own_process

    if argv is None:  # the process's own entry (the console script), not a caller's function
        own_process()
        with heavy_imports():  # typer, rich and every command module
            app = build_app()
        run: Any = app  # typer's own call: its click command, and its hook for tracebacks
    else:  # a caller's function (a test, a server) calls again: the command built once
        run = _embedded_command()
    try:
        run(args, standalone_mode=True)
    except SystemExit as exc:
        code = int(exc.code or 0) if isinstance(exc.code, int | None) else 1
    else:
        code = 0
    # the console script's own process: without the teardown where the command allowed it
    return end_process(code) if argv is None else code


_EMBEDDED: list[Any] = []


def _embedded_command() -> Any:
    """The click command typer makes of :func:`build_app`, made once per process: typer makes
    it again on each call (34 ms of CPU here: every command's signature read and converted),
    and a process that calls ``main(argv)`` again and again (the tests: ~200 ``fleet verify``
    of the planted-patch corpus alone) paid it every time. The commands read the environment
    when they run, not when they are registered, so one command serves every call."""
    if not _EMBEDDED:
        import typer.main

        from fleet_pipelines._startup import heavy_imports

        with heavy_imports():
            _EMBEDDED.append(typer.main.get_command(build_app()))  # type: ignore[arg-type]
    return _EMBEDDED[0]


if __name__ == "__main__":
    raise SystemExit(main())
