"""Every help text of the CLI reads as written: typer renders help through rich markup, where an
unescaped ``[word]`` is a style tag and vanishes (``fleet ledger show --help`` said "as every
line shows it in ) and those of no repository")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer
from rich.text import Text

from fleet_pipelines.cli import build_app


def _commands(command: Any, path: str = "fleet") -> Iterator[tuple[str, Any]]:
    yield path, command  # typer's own click (typer._click): no isinstance against click's
    if getattr(command, "commands", None):
        for name, sub in command.commands.items():
            yield from _commands(sub, f"{path} {name}")


def test_no_help_text_loses_a_bracketed_word_to_rich_markup() -> None:
    app = build_app()
    assert isinstance(app, typer.Typer)
    root = typer.main.get_command(app)
    lost: list[str] = []
    texts = 0
    for path, command in _commands(root):
        helps = [("", command.help or "")]
        helps += [(p.name or "", getattr(p, "help", None) or "") for p in command.params]
        for name, text in helps:
            texts += bool(text)
            shown = Text.from_markup(text).plain
            if shown != text.replace("\\[", "["):
                lost.append(f"{path} {name}: {text!r} is shown as {shown!r}")
    assert texts > 100  # every command and option was walked
    assert not lost, "\n".join(lost)
