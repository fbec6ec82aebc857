"""Language knowledge as data: how the structural stage treats each kind of node.

Modelled on mergiraf's ``lang_profile.rs``. A node kind listed here has an *identity* (kind +
qualified name; see ``_pykeys.identity``), so the same symbol is matched across base, ours and
theirs however it moved, and its siblings may be reordered or concatenated when ``commutative``.
A kind not listed is *anonymous*: matched by its exact text, ordered, and atomic (two different
edits of it always conflict).

``strategy`` says how two different edits of one matched symbol are merged after the line merge
of its text has failed:

- ``members``: the body is a set of symbols (class bodies, the module): merge member by member.
- ``statements``: the body is an ordered statement list (functions, ``if``/``for``/``with``/``try``
  blocks): diff3 over statements, composing edits of different statements even when adjacent.
- ``name_set``: ``from m import a, b`` and ``X = ["a", "b"]`` (``__all__``): the names are a set.
- ``text``: nothing more than the line merge; if that conflicts, the symbol conflicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["PYTHON", "KindRule", "LanguageProfile", "Strategy", "profile_for"]

Strategy = Literal["members", "statements", "name_set", "text"]


@dataclass(frozen=True)
class KindRule:
    """How one node kind (a libcst class name) is identified and merged."""

    kind: str
    commutative: bool
    strategy: Strategy


@dataclass(frozen=True)
class LanguageProfile:
    """The merge rules of one language: file extensions and one rule per node kind."""

    name: str
    extensions: tuple[str, ...]
    kinds: dict[str, KindRule]
    # Compound statements whose block may be merged statement by statement when both sides
    # edited the same one (the block's header must then be changed by one side at most).
    blocks: frozenset[str]


PYTHON = LanguageProfile(
    name="python",
    extensions=(".py", ".pyi"),
    kinds={
        "ClassDef": KindRule("class", commutative=True, strategy="members"),
        "FunctionDef": KindRule("def", commutative=True, strategy="statements"),
        "Import": KindRule("import", commutative=True, strategy="text"),
        "ImportFrom": KindRule("from", commutative=True, strategy="name_set"),
        # A list or tuple of strings (``__all__``) merges as a set; anything else by its text.
        "Assign": KindRule("assign", commutative=True, strategy="name_set"),
        "AnnAssign": KindRule("assign", commutative=True, strategy="text"),
        # The docstring must stay first: matched by identity, never reordered.
        "Docstring": KindRule("docstring", commutative=False, strategy="text"),
    },
    blocks=frozenset({"If", "For", "While", "With", "Try", "TryStar", "FunctionDef", "Match"}),
)


def profile_for(path: str) -> LanguageProfile | None:
    """The profile whose extensions match ``path``, or ``None`` (line merge only)."""
    lowered = path.lower()
    for profile in (PYTHON,):
        if lowered.endswith(profile.extensions):
            return profile
    return None
