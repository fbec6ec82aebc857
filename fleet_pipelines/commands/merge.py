"""``fleet merge BASE OURS THEIRS``: the structural three-way merge of three files, by hand.

(``fleet merge-driver %O %A %B %P``, the git merge driver, is dispatched in ``cli.py`` before
typer is imported; see ``fleet.merge.driver``.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer


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
        if output is None:
            sys.stdout.write(text)
        else:
            output.write_bytes(text.encode("utf-8", "surrogateescape"))
        if isinstance(result, Clean):
            print(f"clean ({result.stage} stage)", file=sys.stderr)
            return
        lines = ", ".join(f"{c.start_line}-{c.end_line}" for c in result.conflicts)
        print(
            f"{len(result.conflicts)} conflict(s) ({result.stage} stage), lines {lines}",
            file=sys.stderr,
        )
        raise typer.Exit(1)
