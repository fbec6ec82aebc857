"""Moving a project's own declared requirement to a new range (a campaign's
``fix.requirements``, e.g. ``{pydantic: ">=2,<3"}``): the migrated code needs the new major
version, so the project must ask for it, or every environment made from its metadata (the
gates' venvs, its users' installs) gets the old one.

Where a requirement is declared: ``pyproject.toml`` (``[project] dependencies`` and
``[project.optional-dependencies]``; Poetry's ``[tool.poetry.dependencies]``, dev and group
tables, written in Poetry's syntax: :mod:`fleet.campaigns.codemods._poetry_pins`), ``setup.py``
(string literals of the lists given to ``install_requires`` / ``tests_require`` /
``extras_require``, also through a module-level name or a ``setup(**{...})`` dict),
``setup.cfg`` (``[options] install_requires`` / ``tests_require``,
``[options.extras_require]``) and ``requirements*.txt`` (at the root and in ``requirements/``).
Only the version specifier of a named requirement changes: its name, extras, environment
marker, quotes, comments and every other byte stay (``"pydantic[email]>=1.8,<2; python_version
>= '3.7'"`` -> ``"pydantic[email]>=2,<3; python_version >= '3.7'"``). A requirement already
inside the new range's words (the same specifier set) is left; a URL requirement
(``name @ https://...``) is never touched.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from fleet import pyast
from fleet.campaigns.codemods._poetry_pins import TOML_HEADER, TOML_STRING, array_end, poetry_edits
from fleet.graph import read_source
from fleet.types import AgentStep, WorkUnit

__all__ = ["check_moves", "declarations_step", "declaring_files", "rewrite_declarations",
           "rewrite_text", "unit_declarations"]

_NAMED = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
# name, [extras], the specifier (up to a marker, a comment or the end), the rest
_PARTS = re.compile(r"^(\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?\s*)"
                    r"([^;#@]*?)(\s*(?:[;#].*)?)$", re.S)


def check_moves(value: object) -> dict[str, str] | str:
    """``fix.requirements`` as loaded from YAML, or one line saying what is wrong with it."""
    if not isinstance(value, dict) or not value:
        return "must be a non-empty mapping of a project name to a version specifier"
    out: dict[str, str] = {}
    for name, spec in value.items():
        if not isinstance(name, str) or not _NAMED.match(name):
            return f"{name!r} is not a project name"
        if not isinstance(spec, str) or not spec.strip():
            return f"{name}: must be a version specifier such as '>=2,<3', not {spec!r}"
        try:
            parsed = SpecifierSet(spec)
            if any(not part.strip() for part in spec.split(",")):
                raise InvalidSpecifier(spec)
        except InvalidSpecifier:
            return f"{name}: not a version specifier: {spec!r}"
        if not len(parsed):
            return f"{name}: must be a version specifier such as '>=2,<3', not {spec!r}"
        out[name] = str(spec).strip()
    return out


def _moved(requirement: str, moves: Mapping[str, str]) -> str | None:
    """``requirement`` with its specifier replaced, or None when it is not moved."""
    text = requirement
    try:
        parsed = Requirement(text.strip())
    except InvalidRequirement:
        return None
    wanted = {canonicalize_name(k): v for k, v in moves.items()}
    new = wanted.get(canonicalize_name(parsed.name))
    if new is None or parsed.url or parsed.specifier == SpecifierSet(new):
        return None
    match = _PARTS.match(text)
    if match is None:
        return None
    head, _spec, rest = match.groups()
    out = f"{head}{new}{rest}"
    try:
        again = Requirement(out.split("#", 1)[0].strip())
    except InvalidRequirement:
        return None
    return out if again.specifier == SpecifierSet(new) else None


def _toml_arrays(text: str) -> Iterator[tuple[int, int]]:
    """Byte ranges of the ``[project] dependencies`` array and of the arrays of
    ``[project.optional-dependencies]``."""
    headers = list(TOML_HEADER.finditer(text))
    for i, header in enumerate(headers):
        name = header[1].strip()
        end = headers[i + 1].start() if i + 1 < len(headers) else len(text)
        body = header.end()
        if name == "project":
            keys = re.finditer(r"^\s*dependencies\s*=\s*\[", text[body:end], re.M)
        elif name == "project.optional-dependencies":
            keys = re.finditer(r"^\s*[\"']?[A-Za-z0-9._-]+[\"']?\s*=\s*\[", text[body:end], re.M)
        else:
            continue
        for key in keys:
            start = body + key.end()
            yield start, array_end(text, start, end)


def _pyproject(text: str, moves: Mapping[str, str]) -> str:
    edits: list[tuple[int, int, str]] = []
    for start, end in _toml_arrays(text):
        i = start
        while i < end:
            if text[i] == "#":
                nl = text.find("\n", i, end)
                i = end if nl < 0 else nl
                continue
            m = TOML_STRING.match(text, i)
            if m is None:
                i += 1
                continue
            inner = m[1] if m[1] is not None else m[2]
            new = None if "\\" in inner else _moved(inner, moves)
            if new is not None:
                edits.append((m.start() + 1, m.end() - 1, new))
            i = m.end()
    return _apply(text, edits + poetry_edits(text, moves))


def _setup_py(text: str, moves: Mapping[str, str]) -> str:
    try:
        tree = pyast.parse(text)
    except SyntaxError:
        return text
    names: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    names.setdefault(target.id, []).append(node.value)
    values: list[ast.expr] = []
    for node in ast.walk(tree):
        # setup(install_requires=[...]) or setup(**{"install_requires": (...)}) (pants writes it)
        pairs = [(node.arg, node.value)] if isinstance(node, ast.keyword) else [
            (k.value, v) for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        ] if isinstance(node, ast.Dict) else []
        for arg, value in pairs:
            if arg in ("install_requires", "tests_require"):
                values.append(value)
            elif arg == "extras_require" and isinstance(value, ast.Dict):
                values += [v for v in value.values if v is not None]
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line.encode()))
    raw = text.encode()
    edits: list[tuple[int, int, str]] = []
    seen: set[int] = set()
    for constant in _literals(values, names):
        if id(constant) in seen or constant.end_lineno is None or constant.end_col_offset is None:
            continue
        seen.add(id(constant))
        a = starts[constant.lineno - 1] + constant.col_offset
        b = starts[constant.end_lineno - 1] + constant.end_col_offset
        segment = raw[a:b].decode()
        quote = segment[:1]
        if quote not in "\"'" or segment[-1:] != quote or segment[1:-1] != constant.value:
            continue  # a prefix, an escape, a triple quote: not rewritten by hand
        new = _moved(str(constant.value), moves)
        if new is not None:
            edits.append((len(raw[: a + 1].decode()), len(raw[: b - 1].decode()), new))
    return _apply(text, edits)


def _literals(values: list[ast.expr], names: dict[str, list[ast.expr]],
              depth: int = 0) -> Iterator[ast.Constant]:
    for value in values:
        if isinstance(value, ast.List | ast.Tuple):
            yield from (e for e in value.elts
                        if isinstance(e, ast.Constant) and isinstance(e.value, str))
        elif isinstance(value, ast.Name) and depth < 3:
            yield from _literals(names.get(value.id, []), names, depth + 1)
        elif isinstance(value, ast.BinOp) and depth < 3:
            yield from _literals([value.left, value.right], names, depth + 1)


def _lines(text: str, moves: Mapping[str, str], keep: object = None) -> str:
    """A line-based file: ``keep(section, key)`` says which lines are requirements (setup.cfg);
    without it every line is (requirements.txt)."""
    out: list[str] = []
    section, key = "", ""
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        if keep is not None:
            head = re.match(r"^\[([^\]]+)\]", body)
            if head:
                section, key = head[1].strip(), ""
                out.append(line)
                continue
            kv = re.match(r"^([A-Za-z0-9_.-]+)\s*[=:](.*)$", body)
            if kv:
                key = kv[1].strip()
                value = kv[2]
                if keep(section, key) and value.strip():  # type: ignore[operator]
                    new = _moved(value.strip(), moves)
                    if new is not None:
                        body = body[: len(body) - len(value)] + value.replace(value.strip(), new, 1)
                out.append(body + ending)
                continue
            if not body[:1].isspace() or not keep(section, key):  # type: ignore[operator]
                out.append(line)
                continue
        code = body.split(" #", 1)[0] if " #" in body else body
        if code.strip() and not code.strip().startswith(("#", "-")):
            new = _moved(code, moves)
            if new is not None:
                body = new + body[len(code):]
        out.append(body + ending)
    return "".join(out)


def _cfg_keep(section: str, key: str) -> bool:
    return (section == "options" and key in ("install_requires", "tests_require")) or (
        section == "options.extras_require" and bool(key))


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    for a, b, new in sorted(edits, reverse=True):
        text = text[:a] + new + text[b:]
    return text


def rewrite_text(path: str, text: str, moves: Mapping[str, str]) -> str:
    """``text`` of the declaration file ``path`` (relative) with the moved requirements'
    specifiers replaced; any other file comes back as it is."""
    name = path.rsplit("/", 1)[-1]
    if path == "pyproject.toml":
        return _pyproject(text, moves)
    if path == "setup.py":
        return _setup_py(text, moves)
    if path == "setup.cfg":
        return _lines(text, moves, _cfg_keep)
    if _is_requirements_file(path, name):
        return _lines(text, moves)
    return text


def _is_requirements_file(path: str, name: str) -> bool:
    folder = path.rpartition("/")[0]
    return name.endswith(".txt") and (
        (folder == "" and name.startswith("requirements")) or folder == "requirements")


def _candidates(root: Path) -> list[str]:
    found = [p for p in ("pyproject.toml", "setup.py", "setup.cfg") if (root / p).is_file()]
    found += sorted(p.name for p in root.glob("requirements*.txt") if p.is_file())
    if (root / "requirements").is_dir():
        found += sorted(f"requirements/{p.name}" for p in (root / "requirements").glob("*.txt")
                        if p.is_file())
    return found


def _read(root: Path, rel: str) -> str | None:
    """The file's text by the one source reader (no links, also none on the way out of the
    repository, no FIFOs, at most 1 MB), or None."""
    data, _ = read_source(root, rel)
    try:
        return None if data is None else data.decode()
    except UnicodeDecodeError:
        return None


def declaring_files(root: Path, moves: Mapping[str, str]) -> list[str]:
    """The declaration files under ``root`` whose rewrite changes something."""
    out = []
    for rel in _candidates(root):
        text = _read(root, rel)
        if text is not None and rewrite_text(rel, text, moves) != text:
            out.append(rel)
    return out


def rewrite_declarations(root: Path, moves: Mapping[str, str],
                         paths: list[str] | None = None) -> list[str]:
    """Rewrites the declaration files (``paths``, default all there are) in place, keeping
    their bytes and line endings; the files changed."""
    changed = []
    for rel in paths if paths is not None else _candidates(root):
        file = root / rel
        text = _read(root, rel)
        if text is None:
            continue
        new = rewrite_text(rel, text, moves)
        if new != text:
            file.write_bytes(new.encode())
            changed.append(rel)
    return changed


def unit_declarations(unit: WorkUnit, root: Path) -> list[str]:
    """The declaration files under ``root`` that ``unit`` writes (``path::<module>`` in its
    write set, as the planner leases them)."""
    return [p for p in _candidates(root) if f"{p}::<module>" in unit.write_set]


def declarations_step(unit: WorkUnit, root: Path, moves: Mapping[str, str],
                      index: int) -> AgentStep:
    """The agent's step that moves the requirements in the declaration files of ``unit``'s
    write set (``path::<module>``, as the planner leases them), with what it changed."""
    mine = unit_declarations(unit, root)
    arguments: dict[str, object] = {"paths": mine, "requirements": dict(moves)}
    try:
        changed = rewrite_declarations(root, moves, mine)
    except OSError as exc:
        return AgentStep(index, "requirements", arguments, f"failed: {exc}", ok=False)
    moved = ", ".join(f"{k}{v}" for k, v in moves.items())
    if not changed:
        return AgentStep(index, "requirements", arguments,
                         f"no change: no declaration in the unit's files asks for another "
                         f"range than {moved}")
    return AgentStep(index, "requirements", arguments,
                     f"rewrote: {moved} declared in {', '.join(changed)}")
