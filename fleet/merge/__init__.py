"""Structural three-way merge (``merge3`` -> ``Clean | Conflicted``): line merge first, structural
only where lines conflict, line fallback on any parse failure; also the git merge driver.

Importing this package costs nothing: its names are loaded on first use (PEP 562), so that
``python -m fleet.merge.driver`` starts with the standard library's start-up alone, and libcst is
imported only when the structural stage runs.
"""

TYPE_CHECKING = False  # typing's own constant would import typing, which the driver avoids
if TYPE_CHECKING:
    from fleet.merge._merge3 import merge3
    from fleet.merge._result import Clean, Conflicted, ConflictRegion, MergeResult, parse_conflicts

_WHERE = {
    "merge3": "fleet.merge._merge3",
    "Clean": "fleet.merge._result",
    "ConflictRegion": "fleet.merge._result",
    "Conflicted": "fleet.merge._result",
    "MergeResult": "fleet.merge._result",
    "parse_conflicts": "fleet.merge._result",
}

__all__ = ["Clean", "ConflictRegion", "Conflicted", "MergeResult", "merge3", "parse_conflicts"]


def __getattr__(name: str) -> object:
    if name not in _WHERE:
        raise AttributeError(f"module 'fleet.merge' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value
