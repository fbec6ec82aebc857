"""Generate agent-style concurrent edits of real code for the merge benchmark.

Source: the Django 5.1.4 sdist (code nobody here wrote), fetched with
``pip download django==5.1.4 --no-deps --no-binary :all: -d benchmarks/.cache`` when missing.

Each scenario takes one Django module and two different symbols (functions or methods, never one
inside the other) and edits each on its own side the way a coding agent does: a statement at the
start or the end of the body, a keyword parameter, a decorator, a new helper right after the
symbol, a rewritten ``return``, and sometimes a new import at the end of the import block.
Every edit is a line edit of the base, so the expected merge is known by construction: both
sides' edits applied to the base. Two insertions at the same line keep "after the previous
symbol" before "before the next symbol", then ours before theirs.

    python benchmarks/gen_merge_scenarios.py OUT [--count 400] [--seed 7] [--same-symbol 0.0]

``--same-symbol S`` makes a share S of the scenarios edit one function on both sides instead
(ours: a first statement, a parameter or a decorator; theirs: a last statement, a rewritten
``return`` or a helper after it): the statement-level merge's test. ``--conflicts C`` makes a
share C true conflicts (both sides edit the same spot differently), written with a ``conflict``
file instead of ``actual.py``: a clean merge of one is wrong.

writes ``OUT/<case>/{base,ours,theirs,actual}.py`` plus ``meta.json`` (file, symbols, edits).
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache"
SDIST = CACHE / "Django-5.1.4.tar.gz"
NEW_IMPORTS = ["functools", "itertools", "operator", "contextlib", "textwrap", "string", "heapq"]
SIG = re.compile(r"^(?P<head>.*\S)\)(?P<tail>\s*(->[^:]*)?):(?P<rest>\s*(#.*)?)$")


@dataclass(frozen=True)
class Edit:
    """Replace ``count`` base lines at ``line`` (0-based) with ``new``; ``rank`` orders two
    insertions at one line (0 = after the previous symbol, 1 = before the next one)."""

    line: int
    count: int
    new: tuple[str, ...]
    rank: int
    label: str


def django_sources() -> dict[str, str]:
    if not SDIST.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "django==5.1.4",
                "--no-deps",
                "--no-binary",
                ":all:",
                "-d",
                str(CACHE),
            ],
            check=True,
        )
    sources = {}
    with tarfile.open(SDIST) as archive:
        for member in archive.getmembers():
            parts = member.name.split("/")
            if member.isfile() and member.name.endswith(".py") and parts[1:2] == ["django"]:
                handle = archive.extractfile(member)
                if handle is not None and "/migrations/" not in member.name:
                    sources["/".join(parts[1:])] = handle.read().decode("utf-8")
    return sources


def symbols(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, int]]:
    """Module-level functions and methods of module-level classes: (qualname, node, depth)."""
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append((node.name, node, 0))
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found.append((f"{node.name}.{item.name}", item, 1))
    return found


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _statement_edit(lines: list[str], stmt: ast.stmt, before: bool, text: str) -> Edit | None:
    first = lines[stmt.lineno - 1]
    if len(_indent(first)) != stmt.col_offset:
        return None  # not the first statement on its line
    indent = _indent(first)
    if before:
        return Edit(stmt.lineno - 1, 0, (f"{indent}{text}\n",), 1, "body")
    assert stmt.end_lineno is not None
    return Edit(stmt.end_lineno, 0, (f"{indent}{text}\n",), 0, "body")


def symbol_edit(
    lines: list[str],
    qualname: str,
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    depth: int,
    side: str,
    rng: random.Random,
    kinds: tuple[str, ...] = ("first", "last", "param", "decorator", "helper", "return"),
) -> Edit | None:
    """One agent-style edit of one symbol, or None if this kind does not fit it."""
    kind = rng.choice(kinds)
    body = node.body
    if body[0].lineno == node.lineno:
        return None  # a one-line def
    tag = f"fleet_{side}"
    if kind == "first":
        docstring = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
        if docstring and len(body) == 1:
            edit = _statement_edit(lines, body[0], False, f"{tag} = {qualname!r}")
        else:
            target = body[1] if docstring else body[0]
            edit = _statement_edit(lines, target, True, f"{tag} = {qualname!r}")
    elif kind == "last":
        edit = _statement_edit(lines, body[-1], True, f"assert {tag}_ready(), {qualname!r}")
    elif kind == "param":
        header_end = body[0].lineno - 2  # the def line, when the signature fits on one line
        while header_end > node.lineno - 1 and lines[header_end].strip().startswith("#"):
            header_end -= 1
        line = lines[header_end].rstrip("\n")
        match = SIG.match(line)
        if header_end != node.lineno - 1 or not match or "**" in line:
            return None
        head = match["head"]
        if head.endswith(","):
            return None
        sep = "" if head.endswith("(") else ", "
        new = f"{head}{sep}{tag}=None){match['tail']}:{match['rest']}\n"
        edit = Edit(header_end, 1, (new,), 1, "param")
    elif kind == "return":
        returns = [
            stmt
            for stmt in body
            if isinstance(stmt, ast.Return)
            and stmt.value is not None
            and stmt.lineno == stmt.end_lineno
            and lines[stmt.lineno - 1].strip().startswith("return ")
            and "#" not in lines[stmt.lineno - 1]
        ]
        if not returns:
            return None
        stmt = rng.choice(returns)
        line = lines[stmt.lineno - 1]
        indent, value = _indent(line), line.strip()[len("return ") :]
        edit = Edit(stmt.lineno - 1, 1, (f"{indent}return {tag}_wrap({value})\n",), 1, "return")
    elif kind == "decorator":
        indent = _indent(lines[node.lineno - 1])
        edit = Edit(node.lineno - 1, 0, (f"{indent}@{tag}_traced\n",), 1, "decorator")
    else:
        indent = "    " * depth
        gap = ["\n"] if depth else ["\n", "\n"]
        name = f"_{tag}_helper_{node.name.strip('_')}"
        helper = [*gap, f"{indent}def {name}(*args):\n", f"{indent}    return args\n"]
        assert node.end_lineno is not None
        edit = Edit(node.end_lineno, 0, tuple(helper), 0, "helper")
    return edit


def import_edit(tree: ast.Module, text: str, module: str) -> Edit | None:
    """``import module`` after the last statement of the leading import block."""
    if re.search(rf"^\s*(import|from) {module}\b", text, re.MULTILINE):
        return None
    last = None
    for stmt in tree.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            last = stmt
        elif last is not None or not isinstance(stmt, ast.Expr):
            break
    if last is None or last.end_lineno is None or last.col_offset != 0:
        return None
    return Edit(last.end_lineno, 0, (f"import {module}\n",), 0, "import")


def apply(lines: list[str], edits: list[tuple[Edit, int]]) -> str:
    """Apply (edit, side) pairs to the base lines; side 0 = ours, 1 = theirs."""
    out = list(lines)
    ordered = sorted(edits, key=lambda pair: (pair[0].line, pair[0].rank, pair[1]), reverse=True)
    for edit, _ in ordered:
        out[edit.line : edit.line + edit.count] = edit.new
    return "".join(out)


# With --same-symbol, both sides edit one function, in parts that do not overlap.
SAME_SYMBOL_KINDS = (("first", "param", "decorator"), ("last", "return", "helper"))


def scenario(
    path: str, text: str, rng: random.Random, same_symbol: float = 0.0
) -> dict[str, object] | None:
    tree = ast.parse(text)
    candidates = symbols(tree)
    if len(candidates) < 2:
        return None
    lines = text.splitlines(keepends=True)
    same = rng.random() < same_symbol
    if same:
        picked = rng.choice(candidates)
        (name_o, node_o, depth_o), (name_t, node_t, depth_t) = picked, picked
    else:
        (name_o, node_o, depth_o), (name_t, node_t, depth_t) = rng.sample(candidates, 2)
    edits: list[tuple[Edit, int]] = []
    for side, (qualname, node, depth) in enumerate(
        ((name_o, node_o, depth_o), (name_t, node_t, depth_t))
    ):
        kinds = SAME_SYMBOL_KINDS[side] if same else SAME_SYMBOL_KINDS[0] + SAME_SYMBOL_KINDS[1]
        edit = symbol_edit(lines, qualname, node, depth, ("ours", "theirs")[side], rng, kinds)
        if edit is None:
            return None
        edits.append((edit, side))
    if rng.random() < 0.3:
        modules = rng.sample(NEW_IMPORTS, 2)
        for side in (0, 1):
            extra = import_edit(tree, text, modules[side])
            if extra is not None:
                edits.append((extra, side))
    spans = [(e.line, e.line + e.count) for e, _ in edits if e.count]
    if len(spans) == 2 and spans[0][0] < spans[1][1] and spans[1][0] < spans[0][1]:
        return None
    ours = apply(lines, [pair for pair in edits if pair[1] == 0])
    theirs = apply(lines, [pair for pair in edits if pair[1] == 1])
    actual = apply(lines, edits)
    for version in (ours, theirs, actual):
        try:
            ast.parse(version)
        except SyntaxError:
            return None
    return {
        "base": text,
        "ours": ours,
        "theirs": theirs,
        "actual": actual,
        "meta": {
            "file": path,
            "symbols": [name_o, name_t],
            "edits": [[("ours", "theirs")[side], edit.label] for edit, side in edits],
        },
    }


def conflict_scenario(path: str, text: str, rng: random.Random) -> dict[str, object] | None:
    """A true conflict: both sides edit the same spot of one function differently (rewrite one
    ``return``, add a decorator, or add a first statement). No merge is right but a conflict."""
    tree = ast.parse(text)
    candidates = symbols(tree)
    if not candidates:
        return None
    qualname, node, _ = rng.choice(candidates)
    lines = text.splitlines(keepends=True)
    kind = rng.choice(["return", "decorator", "first"])
    sides: list[Edit] = []
    for side in ("ours", "theirs"):
        if kind == "return":
            returns = [
                stmt
                for stmt in node.body
                if isinstance(stmt, ast.Return)
                and stmt.value is not None
                and stmt.lineno == stmt.end_lineno
                and lines[stmt.lineno - 1].strip().startswith("return ")
            ]
            if not returns:
                return None
            line = lines[returns[0].lineno - 1]
            value = line.strip()[len("return ") :]
            new = f"{_indent(line)}return fleet_{side}_wrap({value})\n"
            sides.append(Edit(returns[0].lineno - 1, 1, (new,), 1, "return"))
        elif kind == "decorator":
            indent = _indent(lines[node.lineno - 1])
            sides.append(Edit(node.lineno - 1, 0, (f"{indent}@fleet_{side}\n",), 1, "decorator"))
        else:
            first = node.body[0]
            if first.lineno == node.lineno:
                return None
            edit = _statement_edit(lines, first, True, f"fleet_{side} = {qualname!r}")
            if edit is None:
                return None
            sides.append(edit)
    ours, theirs = apply(lines, [(sides[0], 0)]), apply(lines, [(sides[1], 1)])
    for version in (ours, theirs):
        try:
            ast.parse(version)
        except SyntaxError:
            return None
    meta = {"file": path, "symbols": [qualname], "edits": [["both", kind]], "conflict": True}
    return {"base": text, "ours": ours, "theirs": theirs, "meta": meta}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--same-symbol",
        type=float,
        default=0.0,
        help="Share of scenarios where both sides edit one function (non-overlapping parts).",
    )
    parser.add_argument(
        "--conflicts",
        type=float,
        default=0.0,
        help="Share of true-conflict scenarios (a `conflict` file instead of actual.py).",
    )
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    sources = {p: t for p, t in sorted(django_sources().items()) if len(t) < 200_000}
    paths = [p for p, t in sources.items() if len(symbols(ast.parse(t))) >= 2]
    made = 0
    while made < args.count:
        path = rng.choice(paths)
        if rng.random() < args.conflicts:
            case = conflict_scenario(path, sources[path], rng)
        else:
            case = scenario(path, sources[path], rng, args.same_symbol)
        if case is None:
            continue
        folder = args.out / f"{made:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        for part in ("base", "ours", "theirs", "actual"):
            if part in case:
                (folder / f"{part}.py").write_text(str(case[part]))
        if "actual" not in case:
            (folder / "conflict").write_text("both sides edit the same spot: must conflict\n")
        (folder / "meta.json").write_text(json.dumps(case["meta"], indent=1) + "\n")
        made += 1
    print(f"{made} scenarios from {len(paths)} Django modules in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
