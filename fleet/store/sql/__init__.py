"""SQL of the stores, per dialect, loaded once.

``<dialect>/queries.sql`` holds named blocks, each introduced by a line ``-- name: <name>``
(procrastinate's ``sql/queries.sql`` layout); ``<dialect>/schema/NN_<slug>.sql`` is the current
schema, its files run in their order (the leases, then the records), and
``<dialect>/migrations/NNNN_<slug>.sql`` the versioned steps that must produce it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Literal

__all__ = ["Dialect", "Migration", "migrations", "migrator", "parse_queries", "queries", "schema"]

Dialect = Literal["sqlite", "postgres"]

_NAME = re.compile(r"^--\s*name:\s*(?P<name>[a-z_][a-z0-9_]*)\s*$", re.MULTILINE)
_MIGRATION = re.compile(r"^(?P<version>\d{4})_(?P<slug>[a-z0-9_]+)\.sql$")
_SCHEMA_PART = re.compile(r"^(?P<order>\d{2})_[a-z0-9_]+\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def _read(dialect: Dialect, *parts: str) -> str:
    node = resources.files(__package__).joinpath(dialect)
    for part in parts:
        node = node.joinpath(part)
    return node.read_text(encoding="utf-8")


def parse_queries(text: str) -> dict[str, str]:
    """Split a ``queries.sql`` text into ``{name: sql}``; a repeated name is an error."""
    matches = list(_NAME.finditer(text))
    queries: dict[str, str] = {}
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        name = match.group("name")
        if name in queries:
            raise ValueError(f"query {name!r} is defined twice")
        lines = text[match.end() : end].strip().splitlines()
        while lines and (not lines[-1].strip() or lines[-1].lstrip().startswith("--")):
            lines.pop()
        queries[name] = "\n".join(lines).strip().rstrip(";").strip()
    return queries


@functools.cache
def queries(dialect: Dialect) -> dict[str, str]:
    return parse_queries(_read(dialect, "queries.sql"))


@functools.cache
def migrator(dialect: Dialect) -> dict[str, str]:
    """The migration runner's own statements (``<dialect>/migrator.sql``)."""
    return parse_queries(_read(dialect, "migrator.sql"))


@functools.cache
def schema(dialect: Dialect) -> str:
    """The current schema: the files of ``<dialect>/schema/``, numbered 1..n, in their order."""
    folder = resources.files(__package__).joinpath(dialect).joinpath("schema")
    parts = sorted((int(m.group("order")), entry.name, entry.read_text("utf-8"))
                   for entry in folder.iterdir() if (m := _SCHEMA_PART.match(entry.name)))
    orders = [order for order, _, _ in parts]
    if orders != list(range(1, len(parts) + 1)):
        raise ValueError(f"{dialect} schema files are not numbered 1..n: {orders}")
    return "\n".join(text for _, _, text in parts)


@functools.cache
def migrations(dialect: Dialect) -> tuple[Migration, ...]:
    folder = resources.files(__package__).joinpath(dialect).joinpath("migrations")
    found = []
    for entry in folder.iterdir():
        match = _MIGRATION.match(entry.name)
        if match:
            found.append(
                Migration(
                    int(match.group("version")), match.group("slug"), entry.read_text("utf-8")
                )
            )
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise ValueError(f"{dialect} migrations are not numbered 1..n: {versions}")
    return tuple(found)
