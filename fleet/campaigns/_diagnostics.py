"""The ``diagnostics`` matcher: findings from a tool's own machine-readable diagnostics.

The matcher's argv (``[ruff, check, --select, UP, --output-format, json, "{files}"]``) runs in
the repository's root on the orchestrator, with the campaign's tool environment first on
``PATH`` and ``{files}`` standing for the graph's Python files that the one source reader
(``fleet.graph.read_source``) accepted: a file ``fleet index`` skipped (a symlink, say to
``/dev/zero``, a FIFO, a file over the size cap) is never named to the tool, which would follow
it; it only reads them. Its output
is ruff's JSON (a list of ``{code, filename, location, end_location, message, fix}``): each
diagnostic with a safe fix becomes a finding whose rule is the tool's code (``UP005``), placed on
the symbol that encloses it in the graph. A tool that is missing, crashes, hangs or prints
something else is a ``ConfigError`` with its own last lines.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet.campaigns._schema import Campaign, Matcher
from fleet.campaigns.toolenv import command_env, expand_command, tool_bin
from fleet.errors import ConfigError
from fleet.graph import read_source

if TYPE_CHECKING:
    from fleet.graph import SymbolGraph

__all__ = ["Diagnostic", "run_diagnostics"]

Diagnostic = tuple[str, str, str, int, int]
"""``(code, message, path, start_byte, end_byte)``"""


def _tail(text: str, lines: int = 12) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def run_diagnostics(graph: SymbolGraph, campaign: Campaign, matcher: Matcher,
                    timeout_s: float = 600.0) -> Iterator[Diagnostic]:
    root = Path(graph.root).resolve()
    files = sorted(p for p, record in graph.files.items()
                   if p.endswith((".py", ".pyi")) and record.status != "skipped")
    if not files:
        return
    bin_dir = tool_bin(campaign.tool)
    argv = expand_command(matcher.target, files)
    if bin_dir is not None and (bin_dir / argv[0]).is_file():
        argv[0] = str(bin_dir / argv[0])
    where = f"{matcher.rule}: diagnostics {' '.join(matcher.target)}"
    try:
        proc = subprocess.run(argv, cwd=root, env=command_env(bin_dir), capture_output=True,
                              text=True, timeout=timeout_s, check=False)
    except FileNotFoundError as exc:
        raise ConfigError(f"{where}: {argv[0]} is not installed (pin it in tool.pip)") from exc
    except subprocess.TimeoutExpired as exc:
        raise ConfigError(f"{where}: no answer after {timeout_s:.0f}s") from exc
    try:
        items = json.loads(proc.stdout)
    except json.JSONDecodeError:
        items = None
    if not isinstance(items, list):
        raise ConfigError(f"{where}: exit {proc.returncode}, no JSON list of diagnostics:\n"
                          f"{_tail(proc.stdout + proc.stderr)}")
    sources: dict[str, list[bytes]] = {}
    for item in items:
        found = _place(item, root, sources)
        if found is not None:
            yield found


def _place(item: Any, root: Path, sources: dict[str, list[bytes]]) -> Diagnostic | None:
    """A diagnostic with a safe fix as ``(code, message, path, start, end)``; None otherwise."""
    if not isinstance(item, dict) or not isinstance(item.get("fix"), dict):
        return None
    if item["fix"].get("applicability", "safe") != "safe":
        return None
    try:
        path = Path(item["filename"]).resolve().relative_to(root).as_posix()
        start = _offset(root, path, item["location"], sources)
        end = _offset(root, path, item["end_location"], sources)
    except (KeyError, ValueError, TypeError, OSError, IndexError):
        return None
    return str(item.get("code") or "diagnostic"), str(item.get("message", "")), path, start, end


def _offset(root: Path, path: str, location: dict[str, int], sources: dict[str, list[bytes]]
            ) -> int:
    """The byte offset of a 1-based ``{row, column}`` (column in characters)."""
    lines = sources.get(path)
    if lines is None:
        data, reason = read_source(root, path)
        if data is None:
            raise OSError(f"{path}: {reason}")
        lines = sources[path] = data.splitlines(keepends=True)
    row, column = int(location["row"]), int(location["column"])
    before = sum(len(line) for line in lines[: row - 1])
    if row - 1 >= len(lines):
        return before
    text = lines[row - 1].decode("utf-8", "replace")
    return before + len(text[: column - 1].encode("utf-8"))
