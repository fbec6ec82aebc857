"""The structural gates: the patch applies to the base, the result parses, and it touches only
the unit's write-set symbols. Each is a function returning a ``Verdict`` with evidence."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from fleet import pyast
from fleet.types import Verdict
from fleet.verify._patch import FilePatch, Trees, read
from fleet.verify.spans import MODULE, Span, covered_by, innermost, python_spans

__all__ = [
    "exists",
    "gate_applies",
    "gate_lease_scope",
    "gate_parses",
    "is_test_path",
    "python_files",
    "touched_symbols",
]


def is_test_path(path: str) -> bool:
    """A test file by the usual layouts: under ``tests/`` or ``test/``, ``test_*.py``,
    ``*_test.py``, ``conftest.py``, any ``tests.py`` (a Django app's, a single-module project's
    such as itsdangerous 0.24) and a root ``test.py`` - which pytest only collects when named on
    its command line. A ``test.py`` inside a package is library code (``werkzeug/test.py``)."""
    name = path.rsplit("/", 1)[-1]
    return (
        path.startswith(("tests/", "test/"))
        or "/tests/" in path
        or "/test/" in path
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name in ("conftest.py", "tests.py")
        or path == "test.py"
    )


def gate_applies(trees: Trees) -> Verdict:
    """``git apply --check`` of the patch on the base commit."""
    if not trees.patch.strip():
        return Verdict("applies", "reject", "the patch is empty")
    if trees.applied:
        return Verdict("applies", "accept", f"applies cleanly to {trees.rev}")
    return Verdict("applies", "reject", f"does not apply to {trees.rev}: {trees.error}")


def gate_parses(trees: Trees, files: Iterable[FilePatch]) -> Verdict:
    """Every Python file the patch leaves behind parses (and compiles)."""
    failures, checked = [], 0
    for fp in files:
        if fp.new_path is None or not fp.new_path.endswith(".py"):
            continue
        text = read(trees.patched, fp.new_path)
        if text is None:
            failures.append(f"{fp.new_path}: not readable as text")
            continue
        checked += 1
        try:
            with pyast.LOCK:  # the AST built and compiled back, one thread at a time
                compile(ast.parse(text, fp.new_path), fp.new_path, "exec")
        except SyntaxError as exc:
            failures.append(f"{fp.new_path}:{exc.lineno}: {exc.msg}")
    if failures:
        return Verdict("parses", "reject", "; ".join(failures), {"failures": failures})
    return Verdict("parses", "accept", f"{checked} Python file(s) parse")


def touched_symbols(trees: Trees, fp: FilePatch) -> dict[str, set[str]]:
    """Symbol ids touched by one file's hunks -> how (``changed``, ``added``, ``removed``).

    Removed lines map to the innermost symbol of the base, added lines to the innermost symbol
    of the patched file; blank lines between top-level definitions touch nothing.
    """
    out: dict[str, set[str]] = {}
    old = read(trees.base, fp.old_path)
    new = read(trees.patched, fp.new_path)
    old_spans = _spans(old) if fp.path.endswith(".py") else {}
    new_spans = _spans(new) if fp.path.endswith(".py") else {}

    def mark(path: str, qual: str, how: str) -> None:
        out.setdefault(f"{path}::{qual}", set()).add(how)

    for line in fp.removed:
        qual = innermost(old_spans, line)
        if qual == MODULE and not fp.removed_text.get(line, "").strip():
            continue
        mark(fp.old_path or "", qual, "changed" if qual in new_spans else "removed")
    for line in fp.added:
        qual = innermost(new_spans, line)
        if qual == MODULE and not fp.added_text.get(line, "").strip():
            continue
        mark(fp.new_path or "", qual, "changed" if qual in old_spans else "added")
    return out


def _spans(text: str | None) -> dict[str, Span]:
    if text is None:
        return {}
    try:
        return python_spans(text)
    except SyntaxError:
        return {}


def gate_lease_scope(
    trees: Trees, files: Iterable[FilePatch], write_set: Iterable[str] | None
) -> Verdict:
    """Only write-set symbols (or symbols inside them) are touched.

    New definitions are allowed inside a leased symbol, and new top-level ``test*``/``Test*``
    definitions in test files and new test modules (a regression test lands beside the fix);
    every other touched symbol is named in the rejection, with whether it was changed, added or
    removed.
    """
    if write_set is None:
        return Verdict("lease_scope", "unknown", "no write set given: cannot judge lease scope")
    allowed = frozenset(write_set)
    touched: dict[str, set[str]] = {}
    outside: list[str] = []
    for fp in files:
        if fp.binary or not fp.path.endswith(".py"):
            sym = f"{fp.path}::{MODULE}"
            touched[sym] = {"binary" if fp.binary else "changed"}
            if not covered_by(sym, allowed):
                outside.append(f"{sym} (non-Python file)")
            continue
        if fp.old_path and fp.new_path and fp.old_path != fp.new_path:
            outside.append(f"{fp.old_path} renamed to {fp.new_path}")
        for sym, how in touched_symbols(trees, fp).items():
            touched[sym] = how
            if covered_by(sym, allowed):
                continue
            qual = sym.partition("::")[2]
            new_test = is_test_path(fp.path) and (
                fp.old_path is None  # a new test module
                or (how == {"added"} and "." not in qual and qual.startswith(("test", "Test")))
            )
            if new_test:
                continue
            outside.append(f"{sym} ({'/'.join(sorted(how))})")
    details = {"touched": sorted(touched), "outside": outside, "write_set": sorted(allowed)}
    if outside:
        return Verdict(
            "lease_scope", "reject", "touches symbols outside the write set: " + ", ".join(outside),
            details,
        )
    return Verdict(
        "lease_scope", "accept", f"touches only leased symbols: {', '.join(sorted(touched))}",
        details,
    )


def python_files(files: Iterable[FilePatch]) -> list[FilePatch]:
    return [f for f in files if f.path.endswith(".py") and not f.binary]


def exists(tree: Path, path: str | None) -> bool:
    return path is not None and (tree / path).is_file()
