"""The built-in libcst codemods, by name, and one entry point to run one over one source.

``apply_codemod(name, source, params, spans=None, path=None)`` returns LibCST's
``TransformSuccess | TransformFailure | TransformSkip`` (a value, never raises for bad input
code); ``spans`` restricts the rewrite to byte ranges (a unit's symbols).

The registry is lazy: ``CODEMODS`` knows every name without importing anything, and a codemod's
module (and libcst, about 0.45 s of CPU) is imported when its class is first looked up
(``CODEMODS[name]``, ``build_codemod``, ``apply_codemod``, or a class name of ``__all__``). So
loading a campaign (its ``fix.codemod`` checked against ``CODEMODS``) and importing
``fleet.campaigns.codemods.requirements`` do not load libcst: the sweep's preflight, ``fleet
campaigns`` and every Dagster process that only builds the definitions (code servers, the run
workers of the index, plan and integrate steps) skip it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet.errors import ConfigError

if TYPE_CHECKING:
    from libcst.codemod import TransformResult

    from fleet.campaigns.codemods._base import ScopedCodemodCommand

__all__ = [
    "CODEMODS",
    "MigratePydanticV2Command",
    "ReplaceUnittestAliasesCommand",
    "ReplaceUtcnowCommand",
    "ReplaceYamlLoadCommand",
    "RetireApiCommand",
    "ScopedCodemodCommand",
    "apply_codemod",
    "build_codemod",
    "target_params",
]

# name -> (module of fleet.campaigns.codemods, class): the codemods' registry
_REGISTRY = {
    "unittest-aliases": ("unittest_aliases", "ReplaceUnittestAliasesCommand"),
    "datetime-utcnow": ("datetime_utcnow", "ReplaceUtcnowCommand"),
    "yaml-safe-load": ("yaml_safe_load", "ReplaceYamlLoadCommand"),
    "retire-api": ("retire_api", "RetireApiCommand"),
    "pydantic-v2": ("pydantic_v2", "MigratePydanticV2Command"),
}

# the names this package resolves on first use (``__getattr__``) -> their module
_MODULES = {
    "MigratePydanticV2Command": "pydantic_v2",
    "ReplaceUnittestAliasesCommand": "unittest_aliases",
    "ReplaceUtcnowCommand": "datetime_utcnow",
    "ReplaceYamlLoadCommand": "yaml_safe_load",
    "RetireApiCommand": "retire_api",
    "ScopedCodemodCommand": "_base",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'fleet.campaigns.codemods' has no attribute {name!r}")
    return getattr(importlib.import_module(f"fleet.campaigns.codemods.{module}"), name)


class _Codemods(Mapping[str, "type[ScopedCodemodCommand]"]):
    """Name -> codemod class; ``in``, ``len`` and iteration (the names) import nothing, a lookup
    imports that one codemod's module."""

    def __getitem__(self, name: str) -> type[ScopedCodemodCommand]:
        module, cls = _REGISTRY[name]
        found: type[ScopedCodemodCommand] = getattr(
            importlib.import_module(f"fleet.campaigns.codemods.{module}"), cls)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(_REGISTRY)

    def __len__(self) -> int:
        return len(_REGISTRY)

    def __contains__(self, name: object) -> bool:
        return name in _REGISTRY

    def __repr__(self) -> str:
        return f"CODEMODS({', '.join(_REGISTRY)})"


CODEMODS: Mapping[str, type[ScopedCodemodCommand]] = _Codemods()


def build_codemod(
    name: str,
    params: Mapping[str, Any] | None = None,
    spans: Iterable[Sequence[int]] | None = None,
    path: str | None = None,
) -> ScopedCodemodCommand:
    """Instantiate the codemod ``name`` for the file at repository-relative ``path``."""
    if name not in CODEMODS:
        raise ConfigError(f"unknown codemod {name!r}; built-in: {', '.join(sorted(CODEMODS))}")
    from libcst.codemod import CodemodContext

    from fleet.campaigns.codemods._base import module_names

    module, package = module_names(path) if path else (None, None)
    context = CodemodContext(filename=path, full_module_name=module, full_package_name=package)
    try:
        return CODEMODS[name](context, spans=spans, **dict(params or {}))
    except TypeError as exc:
        raise ConfigError(f"codemod {name!r}: bad parameters {dict(params or {})}: {exc}") from exc


def apply_codemod(
    name: str,
    source: str,
    params: Mapping[str, Any] | None = None,
    spans: Iterable[Sequence[int]] | None = None,
    path: str | None = None,
) -> TransformResult:
    """Run codemod ``name`` over ``source``; ``TransformSuccess.code`` is the new source."""
    from libcst.codemod import transform_module

    return transform_module(build_codemod(name, params, spans, path), source)


def target_params(name: str, root: Path) -> dict[str, Any]:
    """Parameters codemod ``name`` takes from the target repository at ``root``: the oldest
    Python it supports (``min_python``), for the codemods whose spelling depends on it."""
    if name != "datetime-utcnow":
        return {}
    from fleet.verify.target import supported_pythons, version_text

    floor = supported_pythons(root).floor
    return {} if floor is None else {"min_python": version_text(floor)}
