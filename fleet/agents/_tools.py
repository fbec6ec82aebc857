"""The tools of ``ClaudeAgent``: symbol reads and libcst-checked edits in the unit's worktree,
graph search, and commands and tests run through the unit's sandbox.

Each tool returns ``(ok, text)``; a refused or failed tool is a value the model sees, never an
exception. Commands get an explicit, minimal environment: no API key reaches a sandbox.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import libcst

from fleet.graph import read_source
from fleet.types import Workspace, WorkUnit
from fleet.verify.execution import blocked_plugins, sandbox_env
from fleet.verify.spans import MODULE, covered_by, decode_source, python_spans
from sandbox import Limits, Sandbox

if TYPE_CHECKING:
    from fleet.graph import SymbolGraph

OUTPUT_CAP = 8000

TOOL_SPECS: list[dict[str, Any]] = [
    {
        "name": "read_symbol",
        "description": "Return the current source of one symbol (`path::Qualified.name`, or "
        "`path::<module>` for a whole file).",
        "input_schema": {
            "type": "object",
            "properties": {"symbol": {"type": "string"}},
            "required": ["symbol"],
        },
    },
    {
        "name": "replace_symbol",
        "description": "Replace the whole definition of one symbol in your write set with new "
        "source (the complete `def`/`class`, decorators included). Refused outside the write set "
        "or when the result does not parse.",
        "input_schema": {
            "type": "object",
            "properties": {"symbol": {"type": "string"}, "source": {"type": "string"}},
            "required": ["symbol", "source"],
        },
    },
    {
        "name": "search_symbols",
        "description": "Find symbols whose id contains the query (case-insensitive).",
        "input_schema": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    },
    {
        "name": "run",
        "description": "Run a shell command in the unit's sandbox (worktree as cwd, no network).",
        "input_schema": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    },
    {
        "name": "run_tests",
        "description": "Run pytest in the sandbox on the given paths or node ids (all when empty).",
        "input_schema": {
            "type": "object",
            "properties": {"paths": {"type": "array", "items": {"type": "string"}}},
            "required": [],
        },
    },
    {
        "name": "finish",
        "description": "Stop: your change is complete. Give a one-paragraph summary.",
        "input_schema": {
            "type": "object",
            "properties": {"summary": {"type": "string"}},
            "required": ["summary"],
        },
    },
]
REQUIRED = {t["name"]: tuple(t["input_schema"]["required"]) for t in TOOL_SPECS}


@dataclass
class Toolbox:
    unit: WorkUnit
    workspace: Workspace
    sandbox: Sandbox
    graph: SymbolGraph | None = None
    command_timeout_s: float = 300.0

    def call(self, name: str, args: dict[str, Any]) -> tuple[bool, str]:
        handler = getattr(self, f"tool_{name}")
        ok, text = handler(**{k: args[k] for k in args if k in _params(name)})
        if len(text) > OUTPUT_CAP:
            half = OUTPUT_CAP // 2
            text = f"{text[:half]}\n[... output truncated ...]\n{text[-half:]}"
        return ok, text

    def _file(self, symbol: str) -> tuple[Path, str, str] | str:
        path, sep, qual = symbol.partition("::")
        if not sep or not path:
            return f"not a symbol id: {symbol!r} (expected path::Qualified.name)"
        target = (self.workspace.path / path).resolve()
        if not target.is_relative_to(self.workspace.path.resolve()) or not target.is_file():
            return f"no such file in the worktree: {path}"
        return target, path, qual

    def tool_read_symbol(self, symbol: str) -> tuple[bool, str]:
        found = self._file(symbol)
        if isinstance(found, str):
            return False, found
        target, _, qual = found
        read = _read(self.workspace.path, target)
        if isinstance(read, str):
            return False, read
        source, _ = read
        if qual == MODULE:
            return True, source
        try:
            span = python_spans(source).get(qual)
        except SyntaxError as exc:
            return False, f"{target.name} does not parse: {exc}"
        if span is None:
            return False, f"no symbol {qual!r} in {found[1]}"
        lines = source.splitlines(keepends=True)
        return True, "".join(lines[span.start_line - 1 : span.end_line])

    def tool_replace_symbol(self, symbol: str, source: str) -> tuple[bool, str]:
        if not covered_by(symbol, frozenset(self.unit.write_set)):
            return False, (
                f"refused: {symbol} is outside this unit's write set "
                f"({', '.join(self.unit.write_set)})"
            )
        found = self._file(symbol)
        if isinstance(found, str):
            return False, found
        target, _, qual = found
        read = _read(self.workspace.path, target)
        if isinstance(read, str):
            return False, read
        old, encoding = read
        if qual == MODULE:
            new = source
        else:
            try:
                span = python_spans(old).get(qual)
            except SyntaxError as exc:
                return False, f"{target.name} does not parse: {exc}"
            if span is None:
                return False, f"no symbol {qual!r} in {found[1]}"
            lines = old.splitlines(keepends=True)
            first = lines[span.start_line - 1]
            indent = first[: len(first) - len(first.lstrip())]
            body = textwrap.indent(textwrap.dedent(source).strip("\n") + "\n", indent)
            problem = _check_definition(textwrap.dedent(source), qual.rsplit(".", 1)[-1])
            if problem:
                return False, f"refused: {problem}"
            new = "".join(lines[: span.start_line - 1]) + body + "".join(lines[span.end_line :])
        try:
            libcst.parse_module(new)
        except libcst.ParserSyntaxError as exc:
            return False, f"refused: the file would not parse: {exc}"
        try:
            data = new.encode(encoding)
        except UnicodeEncodeError as exc:
            return False, (f"refused: the new text does not fit the file's encoding "
                           f"{encoding}: {exc}")
        target.write_bytes(data)
        return True, f"replaced {symbol}"

    def tool_search_symbols(self, query: str) -> tuple[bool, str]:
        q = query.lower()
        if self.graph is not None:
            ids = sorted(s for s in self.graph.symbols if q in s.lower())
        else:
            ids = []
            root = self.workspace.path
            for file in sorted(root.rglob("*.py")):
                rel = file.relative_to(root).as_posix()
                if rel.startswith((".", "venv/", ".venv/")):
                    continue
                data, _ = read_source(root, rel)  # the one reader: no links, FIFOs, huge files
                try:
                    names = python_spans(data.decode()) if data is not None else {}
                except (SyntaxError, UnicodeDecodeError):
                    continue
                ids.extend(f"{rel}::{n}" for n in names if q in f"{rel}::{n}".lower())
        shown = ids[:50]
        more = f"\n... and {len(ids) - 50} more" if len(ids) > 50 else ""
        return True, ("\n".join(shown) + more) if shown else "no symbol matches"

    def tool_run(self, command: str) -> tuple[bool, str]:
        return self._exec(["sh", "-c", command])

    def tool_run_tests(self, paths: Sequence[str] = ()) -> tuple[bool, str]:
        # the fleet's own test plugins (Faker, Hypothesis, xdist, ...) are not the target's
        return self._exec([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *blocked_plugins(sys.executable, self.workspace.path), *paths])

    def tool_finish(self, summary: str) -> tuple[bool, str]:
        return True, summary

    def _exec(self, argv: list[str]) -> tuple[bool, str]:
        result = self.sandbox.run(
            argv,
            cwd=self.workspace.path,
            env=sandbox_env(tree=self.workspace.path),
            timeout=self.command_timeout_s,
            limits=Limits(wall_s=self.command_timeout_s),
        )
        text = f"exit code {result.exit_code} ({result.reason})\n{result.stdout}"
        if result.stderr.strip():
            text += f"\n[stderr]\n{result.stderr}"
        return result.ok, text


def _params(name: str) -> tuple[str, ...]:
    props = next(t for t in TOOL_SPECS if t["name"] == name)["input_schema"]["properties"]
    return tuple(props)


def _check_definition(source: str, name: str) -> str:
    """Empty when ``source`` is exactly one ``def``/``class`` named ``name``."""
    try:
        module = libcst.parse_module(source.strip("\n") + "\n")
    except libcst.ParserSyntaxError as exc:
        return f"the new source does not parse: {exc}"
    defs = [s for s in module.body if not isinstance(s, libcst.EmptyLine)]
    if len(defs) != 1 or not isinstance(defs[0], libcst.FunctionDef | libcst.ClassDef):
        return "the new source must be exactly one def or class statement"
    if defs[0].name.value != name:
        return f"the new source defines {defs[0].name.value!r}, not {name!r}"
    return ""


def missing_arguments(name: str, args: Any) -> list[str]:
    if not isinstance(args, dict):
        return list(REQUIRED.get(name, ()))
    return [k for k in REQUIRED.get(name, ()) if k not in args]


__all__ = ["TOOL_SPECS", "Toolbox", "missing_arguments", "sandbox_env"]


def _read(root: Path, target: Path) -> tuple[str, str] | str:
    """A Python file's text and encoding (PEP 263 declaration or BOM, line endings kept), or the
    reason it cannot be read as text, for the model to see instead of a crash. ``target`` is
    the resolved path inside ``root``; it is read by the one source reader, which refuses
    FIFOs, devices and files over the size cap with ``fleet index``'s reason."""
    rel = target.relative_to(root.resolve()).as_posix()
    data, reason = read_source(root.resolve(), rel)
    if data is None:
        return f"{rel} cannot be read: {reason}"
    try:
        return decode_source(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as exc:
        return f"{target.name} is not readable as Python source text: {exc}"
