"""``fleet merge BASE OURS THEIRS``: the structural three-way merge of three files, by hand.

(``fleet merge-driver %O %A %B %P``, the git merge driver, is dispatched in ``cli.py`` before
typer is imported; see ``fleet.merge.driver``.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    @app.command("merge")
    def merge(
        base: Annotated[Path, typer.Argument(help="The common ancestor's version.")],
        ours: Annotated[Path, typer.Argument(help="Our version.")],
        theirs: Annotated[Path, typer.Argument(help="Their version.")],
        path: Annotated[
            str | None,
            typer.Option("--path", "-p", help="Path that picks the language (default: OURS)."),
        ] = None,
        output: Annotated[
            Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
        ] = None,
    ) -> None:
        """Merge three versions of a file: exit 0 clean, 1 conflicted (diff3 markers), 2 error.

        The stage that produced the result and the conflicts' lines are reported on stderr.
        """
        from fleet.errors import FleetError
        from fleet.merge import Clean, merge3

        try:
            text_b, text_o, text_t = (
                p.read_bytes().decode("utf-8", "surrogateescape") for p in (base, ours, theirs)
            )
            result = merge3(text_b, text_o, text_t, path or str(ours))
        except (OSError, FleetError) as exc:
            print(f"fleet merge: {exc}", file=sys.stderr)
            raise typer.Exit(2) from None
        text = result.text if isinstance(result, Clean) else result.text_with_markers
        data = text.encode("utf-8", "surrogateescape")  # the input's bytes, whatever the locale
        try:
            if output is None:
                sys.stdout.flush()
                sys.stdout.buffer.write(data)
                sys.stdout.buffer.flush()
            else:
                output.write_bytes(data)
        except OSError as exc:
            print(f"fleet merge: cannot write {output or 'stdout'}: {exc}", file=sys.stderr)
            raise typer.Exit(2) from None
        if isinstance(result, Clean):
            print(f"clean ({result.stage} stage)", file=sys.stderr)
            return
        lines = ", ".join(f"{c.start_line}-{c.end_line}" for c in result.conflicts)
        print(
            f"{len(result.conflicts)} conflict(s) ({result.stage} stage), lines {lines}",
            file=sys.stderr,
        )
        raise typer.Exit(1)

    @app.command(
        "merge-driver",
        add_help_option=False,
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )
    def merge_driver(ctx: typer.Context) -> None:
        """The git merge driver: %O %A %B %P, result written to %A (see --help)."""
        # `fleet merge-driver ...` is dispatched in cli.py before typer loads; this entry only
        # lists the command in `fleet --help` and serves callers of the typer app itself.
        from fleet.merge.driver import main

        raise typer.Exit(main(list(ctx.args)))
