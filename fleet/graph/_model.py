"""Plain value types of the symbol graph: ``Symbol``, ``Reference``, ``FileRecord``.

These are immutable named tuples (cheap to build by the million, picklable, JSON-friendly
through ``as_dict``); ``FileData`` is the per-file extraction result that incremental indexing
reuses for unchanged files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

__all__ = [
    "EDGE_KIND",
    "MODULE",
    "FileData",
    "FileRecord",
    "FileStatus",
    "RawRef",
    "RefKind",
    "Reference",
    "Symbol",
    "SymbolKind",
    "name_ref",
]

SymbolKind = Literal["module", "class", "function", "method", "variable"]
RefKind = Literal["call", "attribute", "name", "import", "inherit"]
FileStatus = Literal["ok", "partial", "skipped"]

MODULE = "<module>"

# Reference kind -> dependency edge kind in ``SymbolGraph.graph``.
EDGE_KIND: dict[str, str] = {
    "call": "calls",
    "attribute": "references",
    "name": "references",
    "import": "imports",
    "inherit": "inherits",
}


class Symbol(NamedTuple):
    """One definition. ``id`` is ``path::Qualified.name``; a file's module code is
    ``path::<module>``. Lines are 1-based and inclusive; bytes are half-open offsets into the
    file. ``sig_*`` spans the header (``def f(a) -> int:`` / ``class A(B):``); ``body_hash`` is
    the sha256 (16 hex digits) of the whole definition's bytes."""

    id: str
    path: str
    qualname: str
    name: str
    kind: SymbolKind
    language: str
    start_byte: int
    end_byte: int
    start_line: int
    end_line: int
    sig_start_byte: int
    sig_end_byte: int
    body_hash: str
    parent: str | None

    def as_dict(self) -> dict[str, Any]:
        return dict(self._asdict())


class Reference(NamedTuple):
    """One use of a name. ``src`` is the innermost symbol containing it; ``name`` is dotted as
    written; ``target`` is a symbol id (contains ``::``) when it resolves inside the repository,
    the fully-qualified dotted name of an external (``datetime.datetime.utcnow``,
    ``builtins.len``), or ``None``. ``exact`` is False when only a prefix of the chain resolved
    (``self.conn.close`` -> the class whose attribute ``conn`` is); ``target`` is then the
    deepest symbol reached."""

    src: str
    path: str
    name: str
    target: str | None
    kind: RefKind
    line: int
    col: int
    start_byte: int
    end_byte: int
    resolved: bool
    exact: bool = True

    def as_dict(self) -> dict[str, Any]:
        return dict(self._asdict())


class FileRecord(NamedTuple):
    """What the index knows about one file: ``status`` is ``ok``, ``partial`` (syntax errors:
    the parts that parsed are kept) or ``skipped`` (``reason`` says why: binary, too large,
    not UTF-8, symlink, unreadable)."""

    path: str
    language: str
    sha256: str
    lines: int
    size: int
    status: FileStatus
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self._asdict())


class RawRef(NamedTuple):
    """A reference before resolution: ``scope`` is the innermost symbol id around it."""

    scope: str
    name: str
    kind: RefKind
    line: int
    col: int
    start_byte: int
    end_byte: int


_new = tuple.__new__


def name_ref(scope: str, name: str) -> RawRef:
    """``RawRef(scope, name, "name", 0, 0, 0, 0)`` without the named tuple's Python-level
    ``__new__`` (the resolver builds one per type lookup; it never reads the positions)."""
    return _new(RawRef, (scope, name, "name", 0, 0, 0, 0))


@dataclass(slots=True)
class FileData:
    """Everything extracted from one file; reused as-is by incremental indexing."""

    record: FileRecord
    module: str | None = None  # dotted module name (Python), or None
    symbols: list[Symbol] = field(default_factory=list)
    refs: Sequence[RawRef] = field(default_factory=list)  # a RawRefs after extract()
    # module-level imports: local name -> dotted target (the first binding of a name wins)
    imports: dict[str, str] = field(default_factory=dict)
    star_imports: list[str] = field(default_factory=list)
    # function id -> its locals, a sorted tuple (one object per distinct tuple while an index
    # extracts: ``_extract.extract``)
    params: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # function id -> local name -> dotted class expression (`x = Cls()`, `x: Cls`)
    local_types: dict[str, dict[str, str]] = field(default_factory=dict)
    # test and conftest files only: function id -> parameter names (pytest fixtures it asks for)
    fixture_params: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # imports inside a function or class body: its id -> local name -> dotted target; they
    # shadow ``imports`` in that scope (and, for a function, in the scopes nested in it)
    scoped_imports: dict[str, dict[str, str]] = field(default_factory=dict)
    # type facts (``_facts``): class id -> attribute -> ((method id, value expression), ...)
    attr_types: dict[str, dict[str, tuple[tuple[str, str], ...]]] = field(default_factory=dict)
    returns: dict[str, str] = field(default_factory=dict)  # function id -> return annotation
    properties: frozenset[str] = frozenset()  # methods decorated @property/@cached_property
    exports: tuple[str, ...] | None = None  # a literal module-level ``__all__``
