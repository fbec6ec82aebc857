"""The pytest plugins a target's run does not load: when the target's tests run on the fleet's
own interpreter (no environment of the target's own), every plugin installed beside fleet
(its test tools: Faker, Hypothesis, xdist, timeout, anyio, ...) would load into the target's
pytest. They are not the target's (it would not have them in its own environment), they can
change its outcomes (a fixture name, an option), and loading them costs ~2 CPU-s of every
gate run. A plugin stays loaded when the target names its distribution among its requirements,
directly or through what those require as installed here, or when it is the target itself."""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.markers import UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement

from fleet.verify._requirements import own_name, test_requirements

__all__ = ["blocked_plugins"]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _parsed(reqs: list[str] | tuple[str, ...]) -> list[Requirement]:
    out = []
    for req in reqs:
        try:
            out.append(Requirement(req))
        except InvalidRequirement:
            continue
    return out


def _closure(declared: list[Requirement]) -> set[str]:
    """The names of ``declared`` and of what the installed distributions of those require,
    through the extras asked for (a requirement under another extra is not followed; one whose
    marker does not parse is, a plugin kept that the target might reach being the safe side)."""
    seen: set[tuple[str, str]] = set()
    todo = [(_normal(req.name), extra) for req in declared for extra in ("", *req.extras)]
    while todo:
        name, extra = todo.pop()
        if (name, extra) in seen:
            continue
        seen.add((name, extra))
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for req in _parsed(requires):
            try:
                wanted = req.marker is None or req.marker.evaluate({"extra": extra})
            except UndefinedEnvironmentName:
                wanted = True
            if wanted:
                todo += [(_normal(req.name), e) for e in ("", *req.extras)]
    return {name for name, _ in seen}


def blocked_plugins(python: str, tree: Path) -> list[str]:
    """``-p no:NAME`` arguments for pytest on ``tree`` with ``python``: none unless ``python`` is
    this interpreter; else one per installed ``pytest11`` plugin the target does not reach."""
    if Path(python) != Path(sys.executable):
        return []
    keep = _closure(_parsed(test_requirements(tree)))
    own = own_name(tree)
    args: list[str] = []
    for ep in sorted(metadata.entry_points(group="pytest11"), key=lambda e: e.name):
        dist = _normal(ep.dist.name) if ep.dist is not None else ""
        if not dist or dist in keep or dist == own or dist == "pytest":
            continue
        args += ["-p", f"no:{ep.name}"]
    return args
