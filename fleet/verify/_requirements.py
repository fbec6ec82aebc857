"""What a target's tests need installed, read from its own metadata without running any of it:
the runtime dependencies (``[project] dependencies``, setup.cfg ``install_requires``,
``setup(install_requires=...)``, Poetry's ``[tool.poetry.dependencies]``) and the test ones (the
``test``/``tests``/``testing`` extras, ``tests_require``, tox's ``[testenv] deps``,
``requirements-test.txt`` and its kin, Poetry's test and dev groups: :mod:`fleet.verify.poetry`)."""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from pathlib import Path

from fleet import pyast
from fleet.verify.poetry import poetry_requirements

__all__ = ["own_name", "test_requirements"]

_EXTRAS = ("test", "tests", "testing")
_FILES = ("requirements-test.txt", "requirements-tests.txt", "requirements_test.txt",
          "test-requirements.txt", "test_requirements.txt", "requirements/test.txt",
          "requirements/tests.txt", "requirements/testing.txt")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")


def test_requirements(root: Path) -> tuple[str, ...]:
    """The requirement strings, deduplicated, in the order found; the project itself, local
    paths, editable installs and option lines are left out."""
    found: list[str] = []
    found += _pyproject(root)
    found += _setup_cfg(root)
    found += _setup_py(root)
    found += _tox(root)
    for name in _FILES:
        found += _requirements_file(root / name, root)
    own = own_name(root)
    out: list[str] = []
    for req in found:
        req = req.strip()
        match = _NAME.match(req)
        if not match or req.startswith(("-", ".", "/")) or "{" in req or "://" in req:
            continue
        if own and _normal(match[0]) == own:
            continue
        if req not in out:
            out.append(req)
    return tuple(out)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _text(path: Path) -> str:
    try:
        return path.read_text(errors="replace") if path.is_file() else ""
    except OSError:
        return ""


def _pyproject(root: Path) -> list[str]:
    try:
        data = tomllib.loads(_text(root / "pyproject.toml") or "")
    except tomllib.TOMLDecodeError:
        return []
    project = data.get("project", {})
    out = [r for r in project.get("dependencies", []) if isinstance(r, str)]
    extras = project.get("optional-dependencies", {})
    for extra in _EXTRAS:
        out += [r for r in extras.get(extra, []) if isinstance(r, str)]
    return out + poetry_requirements(data)


def _setup_cfg(root: Path) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(_text(root / "setup.cfg"))
    except configparser.Error:
        return []
    out = _lines(parser.get("options", "install_requires", fallback=""))
    out += _lines(parser.get("options", "tests_require", fallback=""))
    for extra in _EXTRAS:
        out += _lines(parser.get("options.extras_require", extra, fallback=""))
    return out


def _lines(value: str) -> list[str]:
    return [ln.split("#", 1)[0].strip() for ln in value.splitlines() if ln.split("#", 1)[0].strip()]


def _setup_py(root: Path) -> list[str]:
    """``setup()``'s literal ``install_requires`` / ``tests_require`` / test extras, also
    through a module-level name (``requires = ['six']``, ``requires += [...]``) or in a
    ``setup(**{...})`` dict."""
    try:
        tree = pyast.parse(_text(root / "setup.py") or "")
    except SyntaxError:
        return []
    names: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    names.setdefault(target.id, []).extend(_strings(node.value))
    out: list[str] = []
    for node in ast.walk(tree):
        # setup(install_requires=[...]) or setup(**{"install_requires": (...)}) (pants writes it)
        pairs = [(node.arg, node.value)] if isinstance(node, ast.keyword) else [
            (k.value, v) for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        ] if isinstance(node, ast.Dict) else []
        for arg, value in pairs:
            if arg in ("install_requires", "tests_require"):
                out += _resolve(value, names)
            elif arg == "extras_require" and isinstance(value, ast.Dict):
                for key, extra in zip(value.keys, value.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value in _EXTRAS:
                        out += _resolve(extra, names)
    return out


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.List | ast.Tuple):
        return [e.value for e in node.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _resolve(node: ast.AST, names: dict[str, list[str]]) -> list[str]:
    if isinstance(node, ast.Name):
        return names.get(node.id, [])
    if isinstance(node, ast.BinOp):
        return _resolve(node.left, names) + _resolve(node.right, names)
    return _strings(node)


def _tox(root: Path) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(_text(root / "tox.ini"))
    except configparser.Error:
        return []
    out: list[str] = []
    for line in _lines(parser.get("testenv", "deps", fallback="")):
        if line.startswith("-r"):
            out += _requirements_file(root / line[2:].strip(), root)
        elif ":" not in line.split(" ", 1)[0]:  # "py27: mock" factor lines are another env's
            out.append(line)
    return out


def _requirements_file(path: Path, root: Path, depth: int = 0) -> list[str]:
    out: list[str] = []
    for line in _lines(_text(path)):
        if line.startswith("-r") and depth < 3:
            out += _requirements_file(path.parent / line[2:].strip(), root, depth + 1)
        else:
            out.append(line)
    return out


def own_name(root: Path) -> str:
    try:
        data = tomllib.loads(_text(root / "pyproject.toml") or "")
        name = data.get("project", {}).get("name") or data.get("tool", {}).get(
            "poetry", {}).get("name")
    except tomllib.TOMLDecodeError:
        name = None
    if not name:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(_text(root / "setup.cfg"))
            name = parser.get("metadata", "name", fallback=None)
        except configparser.Error:
            name = None
    if not name:
        match = re.search(r"\bname\s*=\s*['\"]([^'\"]+)['\"]", _text(root / "setup.py"))
        name = match[1] if match else None
    return _normal(name) if name else ""
