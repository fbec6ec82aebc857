"""Structural three-way merge (``merge3`` -> ``Clean | Conflicted``): line merge first, structural
only where lines conflict, line fallback on any parse failure; also the git merge driver.

Importing this package is cheap: libcst is imported only when the structural stage runs.
"""

from fleet.merge._merge3 import merge3
from fleet.merge._result import Clean, Conflicted, ConflictRegion, MergeResult, parse_conflicts

__all__ = ["Clean", "ConflictRegion", "Conflicted", "MergeResult", "merge3", "parse_conflicts"]
