"""Each tree judged in an environment made from its own declared dependencies.

A patch that moves a requirement (a migration that moves ``pydantic~=1.0`` to ``>=2,<3`` with
the code that needs it) cannot be judged in one environment: the base does not even import
under the new version, so every failing test would look new, and under the old one the patch
cannot run. When the base and the patched tree declare different requirements
(:func:`fleet.verify._requirements.test_requirements`), each tree gets a venv of the test
interpreter's base Python with THAT tree's requirements (:func:`fleet.verify.pythons.provision`:
wheels from PyPI, cached per (interpreter, requirements)), so "before" is the old version's
result and "after" the new one's. A requirement the patch moved to a range with a lower bound
(``>=2``) is held below it for the base (``pydantic<2``) when the base's own specifier also
admits the new versions (``pydantic>=1.8.2``), since the base is the code written for the old
ones. Trees that declare the same requirements share the test interpreter, as before.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from fleet.verify._patch import Trees
from fleet.verify._requirements import test_requirements
from fleet.verify.pythons import provision

__all__ = ["TreeEnvs", "tree_envs"]


@dataclass(frozen=True)
class TreeEnvs:
    """The pythons of the base's and of the patch's venvs, one evidence line for each, and the
    directories the sandbox must share read-only for them."""

    before: str
    after: str
    lines: tuple[str, str]
    paths: tuple[Path, ...]


def _parsed(reqs: tuple[str, ...]) -> dict[str, Requirement]:
    out: dict[str, Requirement] = {}
    for text in reqs:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        out[canonicalize_name(req.name)] = req
    return out


def held_below(base: tuple[str, ...], patch: tuple[str, ...]) -> list[str]:
    """``name<LOW`` for each requirement the patch moved to a range starting at ``LOW`` that
    the base's own specifier also admits."""
    old, new = _parsed(base), _parsed(patch)
    out = []
    for name, req in new.items():
        was = old.get(name)
        if was is None or str(was.specifier) == str(req.specifier):
            continue
        lows = []
        for spec in req.specifier:
            if spec.operator in (">=", "~=", "==", ">") and "*" not in spec.version:
                try:
                    lows.append(Version(spec.version))
                except InvalidVersion:
                    continue
        if lows and was.specifier.contains(max(lows), prereleases=True):
            out.append(f"{was.name}<{max(lows)}")
    return out


def _interpreter(python: str) -> tuple[str, tuple[int, int]] | str:
    """The base interpreter of ``python`` (a venv's) and its version, or why not."""
    code = ("import sys; print('%d %d' % sys.version_info[:2]); "
            "print(getattr(sys, '_base_executable', '') or sys.executable)")
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{python} does not run: {exc}"
    lines = done.stdout.split("\n")
    if done.returncode != 0 or len(lines) < 2:
        return f"{python} does not run: exit {done.returncode}"
    major, minor = lines[0].split()
    return lines[1].strip(), (int(major), int(minor))


def tree_envs(trees: Trees, python: str) -> TreeEnvs | str | None:
    """None when both trees declare the same requirements; else the two venvs of ``python``'s
    base interpreter, or one line saying why they could not be made."""
    base, patch = test_requirements(trees.base), test_requirements(trees.patched)
    if base == patch:
        return None
    found = _interpreter(python)
    if isinstance(found, str):
        return found
    interpreter, version = found
    before_reqs = (*base, *held_below(base, patch))
    made: list[Path] = []
    for reqs in (before_reqs, patch):
        got = provision(interpreter, version, reqs)
        if isinstance(got, str):
            which = "base" if reqs is before_reqs else "patch"
            return f"the {which}'s declared requirements ({', '.join(reqs)}): {got}"
        made.append(got)
    real = Path(interpreter).resolve().parent.parent
    lines = (
        f"environment before: {made[0].parent.parent.name} (Python {version[0]}.{version[1]}) "
        f"from the base's declared requirements: {', '.join(before_reqs)}",
        f"environment after: {made[1].parent.parent.name} (Python {version[0]}.{version[1]}) "
        f"from the patch's declared requirements: {', '.join(patch)}",
    )
    return TreeEnvs(str(made[0]), str(made[1]), lines,
                    (made[0].parent.parent, made[1].parent.parent, real))
