"""Where a target's importable code lives, so that its tests import the tree under judgement.

A project in the ``src`` layout (``src/webob/response.py``) is importable only when ``src`` is on
``sys.path``: its developers get there with an editable install (``pip install -e .``), whose
path points at *their* checkout, not at the worktree a gate runs in. Run as it was, pytest in a
worktree of such a project either could not import it at all (WebOb 1.8.7 under bwrap:
``ModuleNotFoundError: No module named 'webob'`` for every test file, so every unit stayed
"unsure"), or imported the developer's unpatched checkout when the sandbox could see it, and
then the patched code never ran and its tests passed: a false accept. :func:`source_roots`
names the directories the project's own packaging declares for its code, and
:func:`fleet.verify.execution.sandbox_env` puts them first on ``PYTHONPATH`` (relative to the
tree, the command's working directory, in every sandbox), ahead of any installed copy.

Read, never executed: ``pyproject.toml`` (setuptools ``packages.find.where`` and
``package-dir``, Poetry's ``packages[].from``, Hatch's wheel ``packages`` and ``sources``, PDM's
``package-dir``), ``setup.cfg`` (``[options] package_dir``, ``[options.packages.find] where``)
and ``setup.py`` (a literal ``package_dir={"": "src"}``, ``find_packages("src")`` or
``find_packages(where="src")``). Without a declaration, a top-level ``src`` directory that
holds a package or a module is the root, as setuptools' automatic discovery, Hatch and Flit take
it. The tree's own top level is never listed: pytest's working directory is already on the path.
"""

from __future__ import annotations

import ast
import configparser
import posixpath
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fleet import pyast

__all__ = ["source_roots"]


def source_roots(tree: Path) -> tuple[str, ...]:
    """The directories, relative to ``tree`` and in the order declared, that hold the target's
    top-level packages and modules, other than ``tree`` itself; empty for a flat layout."""
    declared = [*_pyproject(tree), *_setup_cfg(tree), *_setup_py(tree)]
    if not declared and _holds_code(tree / "src"):
        declared = ["src"]
    out: list[str] = []
    for entry in declared:
        root = _clean(entry)
        if root and root not in out and (tree / root).is_dir():
            out.append(root)
    return tuple(out)


def _clean(entry: str) -> str | None:
    """``entry`` as a normalised relative path inside the tree, or None (absolute, escaping the
    tree, or the tree itself)."""
    text = entry.strip().replace("\\", "/")
    if not text or text.startswith("/"):
        return None
    norm = posixpath.normpath(text)
    if norm in (".", "") or norm == ".." or norm.startswith("../"):
        return None
    return norm


def _holds_code(directory: Path) -> bool:
    try:
        return directory.is_dir() and any(
            (child.is_dir() and (child / "__init__.py").is_file())
            or (child.suffix == ".py" and child.is_file())
            for child in directory.iterdir())
    except OSError:
        return False


def _text(tree: Path, name: str) -> str:
    """``name`` in ``tree`` as :func:`fleet.verify._patch.read` reads a target's file (never a
    link, device or oversized file), ``""`` when absent."""
    from fleet.verify._patch import read

    return read(tree, name) or ""


def _table(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _pyproject(tree: Path) -> list[str]:
    text = _text(tree, "pyproject.toml")
    if not text:
        return []
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    out = _strings(_table(data, "tool", "setuptools", "packages", "find", "where"))
    package_dir = _table(data, "tool", "setuptools", "package-dir")
    if isinstance(package_dir, dict):
        out += _strings(package_dir.get(""))
    for package in _table(data, "tool", "poetry", "packages") or []:
        if isinstance(package, dict):
            out += _strings(package.get("from"))
    wheel = _table(data, "tool", "hatch", "build", "targets", "wheel") or {}
    if isinstance(wheel, dict):
        out += [_parent(p) for p in _strings(wheel.get("packages"))]
        sources = wheel.get("sources")
        out += [k for k, v in sources.items() if v == ""] if isinstance(sources, dict) else []
        out += [p for p in _strings(sources) if p]
    out += _strings(_table(data, "tool", "pdm", "build", "package-dir"))
    return [p for p in out if p]


def _parent(path: str) -> str:
    """The directory a Hatch ``packages`` entry (``src/foo``) is importable from (``src``)."""
    return posixpath.dirname(path.strip().rstrip("/"))


def _setup_cfg(tree: Path) -> list[str]:
    text = _text(tree, "setup.cfg")
    if not text:
        return []
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
        package_dir = parser.get("options", "package_dir", fallback="")
        where = parser.get("options.packages.find", "where", fallback="")
    except configparser.Error:
        return []
    out = []
    for line in package_dir.splitlines():
        name, sep, directory = line.partition("=")
        if sep and not name.strip():
            out.append(directory.strip())
    return out + [w.strip() for w in where.splitlines() if w.strip()]


def _setup_py(tree: Path) -> list[str]:
    text = _text(tree, "setup.py")
    if not text:
        return []
    try:
        module = pyast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return list(_setup_calls(ast.walk(module)))


def _setup_calls(nodes: Iterable[ast.AST]) -> Iterable[str]:
    for node in nodes:
        if isinstance(node, ast.keyword) and node.arg == "package_dir" and isinstance(
                node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if (isinstance(key, ast.Constant) and key.value == ""
                        and isinstance(value, ast.Constant) and isinstance(value.value, str)):
                    yield value.value
        elif isinstance(node, ast.Call) and pyast.call_name(node.func) in ("find_packages",
                                                                   "find_namespace_packages"):
            where = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg == "where"), None)
            if isinstance(where, ast.Constant) and isinstance(where.value, str):
                yield where.value
