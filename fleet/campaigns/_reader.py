"""Typed access to a loaded campaign YAML file, with the line of every field for error messages:
each error is a ``ConfigError`` naming the file, the line and the field
(``datetime-utcnow.yaml:12: autonomy.mode: must be one of ...``)."""

from __future__ import annotations

import re
from typing import Any

import yaml

from fleet.errors import ConfigError

__all__ = ["Reader"]

# One parse gives both the data and the line marks: the node tree, then the data built from it.
# libyaml's loader when PyYAML has it (~10x the pure-Python one; every process that loads the
# definitions reads the eight built-in campaigns).
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _parse(text: str, loader_class: Any) -> tuple[yaml.Node | None, Any]:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        return node, None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()


class Reader:
    """The YAML document (``data``) and the line each field path starts on (``lines``)."""

    def __init__(self, text: str, filename: str) -> None:
        self.filename = filename
        self.lines: dict[str, int] = {}
        try:
            node, self.data = _parse(text, _LOADER)
        except yaml.YAMLError:
            # the pure-Python loader's message quotes the offending line under a caret
            try:
                node, self.data = _parse(text, yaml.SafeLoader)
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                line = mark.line + 1 if mark is not None else 1
                raise ConfigError(f"{filename}:{line}: invalid YAML: {exc}") from exc
        if node is not None:
            self._index(node, "")

    def _index(self, node: yaml.Node, path: str) -> None:
        self.lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                sub = f"{path}.{key.value}" if path else str(key.value)
                self.lines[sub] = key.start_mark.line + 1
                self._index(value, sub)
                self.lines[sub] = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self._index(item, f"{path}[{index}]")

    def error(self, path: str, message: str) -> ConfigError:
        """A ``ConfigError`` at the line of ``path`` (or of its nearest enclosing field)."""
        probe = path
        while probe and probe not in self.lines:
            shorter = re.sub(r"(\.[^.\[]*|\[\d+\])$", "", probe)
            probe = "" if shorter == probe else shorter
        line = self.lines.get(probe, 1)
        return ConfigError(f"{self.filename}:{line}: {path or '<top>'}: {message}")

    def get(self, obj: Any, path: str, key: str, kind: type | tuple[type, ...], default: Any = ...,
            ) -> Any:
        """``obj[key]`` checked to be of ``kind`` (a bool is no int); ``default`` when it is
        missing or null, else required."""
        full = f"{path}.{key}" if path else key
        if not isinstance(obj, dict) or key not in obj or obj[key] is None:
            if default is ...:
                raise self.error(full, "is required")
            return default
        value = obj[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
            names = " or ".join(k.__name__ for k in kinds)
            raise self.error(full, f"must be {names}, not {type(value).__name__}")
        return value

    def known(self, obj: dict[str, Any], path: str, keys: tuple[str, ...]) -> None:
        """Refuse a field of ``obj`` that is not one of ``keys``."""
        for key in obj:
            if key not in keys:
                full = f"{path}.{key}" if path else str(key)
                raise self.error(full, f"unknown field (expected one of {', '.join(keys)})")
