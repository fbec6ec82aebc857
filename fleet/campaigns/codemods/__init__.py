"""The built-in libcst codemods, by name, and one entry point to run one over one source.

``apply_codemod(name, source, params, spans=None, path=None)`` returns LibCST's
``TransformSuccess | TransformFailure | TransformSkip`` (a value, never raises for bad input
code); ``spans`` restricts the rewrite to byte ranges (a unit's symbols).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from libcst.codemod import CodemodContext, TransformResult, transform_module

from fleet.campaigns.codemods._base import ScopedCodemodCommand, module_names
from fleet.campaigns.codemods.datetime_utcnow import ReplaceUtcnowCommand
from fleet.campaigns.codemods.pydantic_v2 import MigratePydanticV2Command
from fleet.campaigns.codemods.retire_api import RetireApiCommand
from fleet.campaigns.codemods.unittest_aliases import ReplaceUnittestAliasesCommand
from fleet.campaigns.codemods.yaml_safe_load import ReplaceYamlLoadCommand
from fleet.errors import ConfigError

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

CODEMODS: dict[str, type[ScopedCodemodCommand]] = {
    "unittest-aliases": ReplaceUnittestAliasesCommand,
    "datetime-utcnow": ReplaceUtcnowCommand,
    "yaml-safe-load": ReplaceYamlLoadCommand,
    "retire-api": RetireApiCommand,
    "pydantic-v2": MigratePydanticV2Command,
}


def build_codemod(
    name: str,
    params: Mapping[str, Any] | None = None,
    spans: Iterable[Sequence[int]] | None = None,
    path: str | None = None,
) -> ScopedCodemodCommand:
    """Instantiate the codemod ``name`` for the file at repository-relative ``path``."""
    if name not in CODEMODS:
        raise ConfigError(f"unknown codemod {name!r}; built-in: {', '.join(sorted(CODEMODS))}")
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
    return transform_module(build_codemod(name, params, spans, path), source)


def target_params(name: str, root: Path) -> dict[str, Any]:
    """Parameters codemod ``name`` takes from the target repository at ``root``: the oldest
    Python it supports (``min_python``), for the codemods whose spelling depends on it."""
    if name != "datetime-utcnow":
        return {}
    from fleet.verify.target import supported_pythons, version_text

    floor = supported_pythons(root).floor
    return {} if floor is None else {"min_python": version_text(floor)}
