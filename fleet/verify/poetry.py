"""Poetry's dependency tables as PEP 508 requirements, and Poetry's version constraints as
PEP 440 specifiers: what the gates' environments install for a Poetry project, and what the pin
mover (:mod:`fleet.campaigns.codemods.requirements`) compares and writes.

Constraints (python-poetry.org/docs/dependency-specification): ``^1.8`` -> ``>=1.8,<2.0``,
``^0.3`` -> ``>=0.3,<0.4``, ``^0.0.3`` -> ``>=0.0.3,<0.0.4`` (the left-most non-zero part is
bumped); ``~1.8`` -> ``>=1.8,<1.9``, ``~1`` -> ``>=1,<2``; ``1.2.3`` -> ``==1.2.3``, ``1.2.*``
-> ``==1.2.*``, ``*`` -> any version; PEP 440 operators (``>=``, ``<``, ``!=``, ``~=``, ``==``)
as they are, several joined by commas or spaces. ``A || B`` has no PEP 440 spelling: the
alternative reaching the newest versions (the highest upper bound, none = unbounded) is taken,
so an environment made from it satisfies the constraint.

An entry is a string (the constraint), a table (``version``, ``extras``, ``python``,
``markers``, ``optional``) or an array of tables (one requirement each, as Poetry's multiple
constraints for different Pythons). ``python = "<3.10"`` becomes the marker
``python_version < "3.10"`` and ``markers`` is kept, so pip drops what is not for the venv's
Python; ``git`` / ``path`` / ``url`` / ``file`` entries are not on an index and are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

__all__ = ["caret", "poetry_requirements", "to_specifier"]

_TOKEN = re.compile(r"(\^|~=|~|===|==|!=|>=|<=|>|<|=)?\s*([0-9A-Za-z*][0-9A-Za-z.*+!_-]*)")
_TEST_GROUPS = ("test", "tests", "testing")
# what a ``dev`` group holds besides what the tests import: linters, formatters, type checkers,
# documentation and release tools (never needed to run a test, often no wheel for a new Python)
_TOOLS = frozenset({
    "autoflake", "autopep8", "bandit", "black", "build", "bump2version", "bumpversion",
    "codespell", "commitizen", "flake8", "ipdb", "ipython", "isort", "jupyter", "mdx-include",
    "mypy", "nox", "poethepoet", "pre-commit", "pycodestyle", "pydocstyle", "pyflakes", "pylint",
    "pymdown-extensions", "pyright", "pytype", "pyupgrade", "ruff", "safety", "tox", "twine",
    "wheel", "yapf",
})
_TOOL_PREFIXES = ("flake8-", "mkdocs", "sphinx", "types-", "fontawesome-markdown")


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _bump(release: tuple[int, ...], at: int) -> str:
    parts = [*release[:at], release[at] + 1] + [0] * (len(release) - at - 1)
    return ".".join(str(p) for p in parts)


def caret(low: str) -> str | None:
    """``^low`` as PEP 440 (``1.8`` -> ``>=1.8,<2.0``), or None when ``low`` is no version."""
    version = _version(low)
    if version is None:
        return None
    release = version.release
    at = next((i for i, part in enumerate(release) if part), len(release) - 1)
    return f">={version},<{_bump(release, at)}"


def _tilde(low: str) -> str | None:
    version = _version(low)
    if version is None:
        return None
    release = version.release
    return f">={version},<{_bump(release, 0 if len(release) == 1 else 1)}"


def _one(constraint: str) -> str | None:
    specs: list[str] = []
    for piece in constraint.split(","):
        piece = piece.strip()
        if not piece:
            return None
        pos = 0
        for match in _TOKEN.finditer(piece):
            if piece[pos:match.start()].strip():
                return None  # something between two constraints that is neither
            pos = match.end()
            op, ver = match[1] or "", match[2]
            if op in ("", "=", "==") and ver == "*":
                continue
            if op == "^" or op == "~":
                got = caret(ver) if op == "^" else _tilde(ver)
                if got is None:
                    return None
                specs.append(got)
            else:
                specs.append(f"{op if op not in ('', '=') else '=='}{ver}")
        if piece[pos:].strip():
            return None
    out = ",".join(specs)
    try:
        SpecifierSet(out)
    except InvalidSpecifier:
        return None
    return out


def _upper(spec: str) -> Version | None:
    """The highest version ``spec`` admits, roughly: its lowest ``<``/``<=``/``==`` bound; None
    when unbounded."""
    bounds = [v for s in SpecifierSet(spec) if s.operator in ("<", "<=", "==", "===")
              and (v := _version(s.version.replace(".*", ""))) is not None]
    return min(bounds) if bounds else None


def to_specifier(constraint: str) -> str | None:
    """The PEP 440 specifier of a Poetry constraint (``""`` for any version), or None when it
    is not a constraint."""
    alternatives = [_one(a) for a in constraint.split("||")]
    if any(a is None for a in alternatives):
        return None
    specs = [a for a in alternatives if a is not None]
    if len(specs) == 1:
        return specs[0]
    if "" in specs:
        return ""

    def reach(spec: str) -> tuple[int, Version]:
        top = _upper(spec)
        return (1, Version("0")) if top is None else (0, top)

    return max(specs, key=reach)


def _python_marker(constraint: str) -> str | None:
    spec = to_specifier(constraint)
    if spec is None:
        return None
    terms = []
    for s in SpecifierSet(spec):
        name = "python_full_version" if s.version.count(".") >= 2 else "python_version"
        terms.append(f'{name} {s.operator} "{s.version}"')
    return " and ".join(sorted(terms))


def _entry(name: str, value: Any) -> list[tuple[str, bool]]:
    """``(requirement, optional)`` for each form of one dependency entry."""
    if isinstance(value, list):
        return [r for item in value for r in _entry(name, item)]
    if isinstance(value, str):
        value = {"version": value}
    if not isinstance(value, dict) or any(k in value for k in ("git", "path", "url", "file")):
        return []
    spec = to_specifier(str(value.get("version", "*")))
    if spec is None:
        return []
    extras = value.get("extras") or []
    head = f"{name}[{','.join(extras)}]" if extras and isinstance(extras, list) else name
    markers = []
    if isinstance(value.get("python"), str):
        python = _python_marker(value["python"])
        if python is None:
            return []
        markers += [python] if python else []
    if isinstance(value.get("markers"), str) and value["markers"].strip():
        markers.append(value["markers"].strip())
    text = head + spec
    if markers:
        text += "; " + " and ".join(f"({m})" if len(markers) > 1 else m for m in markers)
    try:
        Requirement(text)
    except InvalidRequirement:
        return []
    return [(text, value.get("optional") is True)]


def _table(table: object, skip_tools: bool = False) -> Iterable[tuple[str, str, bool]]:
    if not isinstance(table, Mapping):
        return
    for name, value in table.items():
        lowered = re.sub(r"[-_.]+", "-", str(name)).lower()
        if lowered == "python" or (skip_tools and (
                lowered in _TOOLS or lowered.startswith(_TOOL_PREFIXES)
                or lowered.endswith("-stubs"))):
            continue
        for requirement, optional in _entry(str(name), value):
            yield lowered, requirement, optional


def poetry_requirements(data: Mapping[str, Any]) -> list[str]:
    """What the tests of the Poetry project ``data`` (a parsed ``pyproject.toml``) need: its
    dependencies (an optional one only when a ``test``/``tests``/``testing`` extra names it),
    its ``test``/``tests``/``testing`` groups, and its ``dev`` group (or the legacy
    ``dev-dependencies``) without the linters, formatters, type checkers and documentation
    tools."""
    tool = data.get("tool", {})
    poetry = tool.get("poetry", {}) if isinstance(tool, Mapping) else {}
    if not isinstance(poetry, Mapping):
        return []
    extras = poetry.get("extras", {})
    wanted = {re.sub(r"[-_.]+", "-", str(n)).lower()
              for e in _TEST_GROUPS if isinstance(extras, Mapping)
              for n in (extras.get(e) or []) if isinstance(n, str)}
    out = [r for n, r, optional in _table(poetry.get("dependencies"))
           if not optional or n in wanted]
    groups = poetry.get("group", {})
    groups = groups if isinstance(groups, Mapping) else {}
    for name in _TEST_GROUPS:
        group = groups.get(name, {})
        if isinstance(group, Mapping):
            out += [r for _, r, _ in _table(group.get("dependencies"))]
    dev = groups.get("dev", {})
    for table in (dev.get("dependencies") if isinstance(dev, Mapping) else None,
                  poetry.get("dev-dependencies")):
        out += [r for _, r, _ in _table(table, skip_tools=True)]
    return out
