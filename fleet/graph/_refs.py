"""``FileRefs``: one file's resolved references, as columns over its raw references.

A resolved reference is its raw reference (``RawRef``: scope, name, kind, position) plus a
target and whether the whole chain resolved. Storing a ``Reference`` tuple per use costs ~130
bytes each (Django: 270k of them, ~35 MB) and a second copy of every field in a snapshot; a
``FileRefs`` keeps the file's raw references (shared with its ``FileData``), one target per raw
reference and one flag byte per raw reference (dropped, exact, prefix only), plus the few
references that have no raw reference (pytest fixture parameters). ``Reference`` rows are built
on first iteration and kept; the graph build, the statistics and snapshots read the columns.
"""

from __future__ import annotations

import array
import functools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from fleet.graph._model import RawRef, Reference

__all__ = ["DROPPED", "EXACT", "KINDS", "KIND_CODE", "PREFIX", "FileRefs", "RawRefs", "of_kind"]

DROPPED, EXACT, PREFIX = 0, 1, 2
KINDS = ("call", "attribute", "name", "import", "inherit")
"""The kind of each code of ``RawRefs.kinds``."""
KIND_CODE = {k: i for i, k in enumerate(KINDS)}
_make = functools.partial(tuple.__new__, RawRef)  # RawRef._make is Python (a length check)


class RawRefs(Sequence[RawRef]):
    """One file's raw references as columns: a scope and a name (shared string objects), a
    kind byte and four 32-bit ints (line, col, start and end byte) per reference, ~33 bytes
    each instead of a ``RawRef`` tuple with its int objects (~177: Django's 328k raw
    references 58 -> 11 MB). A ``RawRef`` is built on each access; equal to the same rows."""

    __slots__ = ("cols", "ends", "kinds", "lines", "names", "scopes", "starts")

    def __init__(self, scopes: Sequence[str], names: Sequence[str], kinds: bytes | Iterable[str],
                 lines: Iterable[int], cols: Iterable[int], starts: Iterable[int],
                 ends: Iterable[int]) -> None:
        self.scopes = tuple(scopes)
        self.names = tuple(names)
        self.kinds = kinds if isinstance(kinds, bytes) else bytes(map(KIND_CODE.__getitem__,
                                                                      kinds))
        self.lines = array.array("I", lines)
        self.cols = array.array("I", cols)
        self.starts = array.array("I", starts)
        self.ends = array.array("I", ends)

    @classmethod
    def packed(cls, scopes: Sequence[str], names: Sequence[str], kinds: bytes,
               lines: array.array, cols: array.array, starts: array.array,
               ends: array.array) -> RawRefs:
        """From columns already in their types (the C walk's): the arrays are kept, not
        copied."""
        new = cls.__new__(cls)
        new.scopes, new.names, new.kinds = tuple(scopes), tuple(names), kinds
        new.lines, new.cols, new.starts, new.ends = lines, cols, starts, ends
        return new

    def extended(self, rows: Sequence[RawRef]) -> RawRefs:
        """These references followed by ``rows``."""
        if not rows:
            return self
        scopes, names, kinds, lines, cols, starts, ends = zip(*rows, strict=True)
        return RawRefs.packed(
            self.scopes + scopes, self.names + names,
            self.kinds + bytes(map(KIND_CODE.__getitem__, kinds)),
            self.lines + array.array("I", lines), self.cols + array.array("I", cols),
            self.starts + array.array("I", starts), self.ends + array.array("I", ends))

    @classmethod
    def of(cls, rows: Sequence[RawRef]) -> RawRefs:
        if isinstance(rows, RawRefs):
            return rows
        if not rows:
            return cls((), (), b"", (), (), (), ())
        return cls(*zip(*rows, strict=True))

    def columns(self) -> tuple[Any, ...]:
        """The arguments that rebuild it (what snapshots pickle)."""
        return (self.scopes, self.names, self.kinds, self.lines, self.cols, self.starts,
                self.ends)

    def __reduce__(self) -> tuple[Any, ...]:
        return RawRefs, self.columns()

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self) -> Iterator[RawRef]:
        return map(_make, zip(self.scopes, self.names, map(KINDS.__getitem__, self.kinds),
                              self.lines, self.cols, self.starts, self.ends, strict=True))

    @overload
    def __getitem__(self, i: int) -> RawRef: ...
    @overload
    def __getitem__(self, i: slice) -> list[RawRef]: ...
    def __getitem__(self, i: int | slice) -> RawRef | list[RawRef]:
        if isinstance(i, slice):
            return list(self)[i]
        return _make((self.scopes[i], self.names[i], KINDS[self.kinds[i]], self.lines[i],
                      self.cols[i], self.starts[i], self.ends[i]))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RawRefs):
            return self.columns() == other.columns()
        if isinstance(other, list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RawRefs({len(self)} references)"


def of_kind(refs: Sequence[RawRef], kind: str) -> list[RawRef]:
    """The references of one kind, in order; over ``RawRefs`` only those rows are built."""
    if not isinstance(refs, RawRefs):
        return [r for r in refs if r.kind == kind]
    code, kinds, out = KIND_CODE[kind], refs.kinds, []
    name = KINDS[code]
    scopes, names, lines, cols, starts, ends = (refs.scopes, refs.names, refs.lines, refs.cols,
                                                refs.starts, refs.ends)
    at = kinds.find(code)
    while at >= 0:  # the rows built as ``refs[at]`` builds them, without a call each
        out.append(_make((scopes[at], names[at], name, lines[at], cols[at], starts[at],
                          ends[at])))
        at = kinds.find(code, at + 1)
    return out


class FileRefs(Sequence[Reference]):
    """The references of one file, in raw-reference order, then the extra ones."""

    __slots__ = ("_rows", "extra", "flags", "path", "raw", "targets")

    def __init__(self, path: str, raw: Sequence[RawRef], targets: list[str | None],
                 flags: bytes, extra: Sequence[Reference] = ()) -> None:
        self.path = path
        self.raw = raw
        self.targets = targets
        self.flags = flags
        self.extra = tuple(extra)
        self._rows: list[Reference] | None = None

    def rows(self) -> list[Reference]:
        if self._rows is None:
            path = self.path
            self._rows = [
                Reference(r.scope, path, r.name, t, r.kind, r.line, r.col, r.start_byte,
                          r.end_byte, t is not None, f == EXACT)
                for r, t, f in zip(self.raw, self.targets, self.flags, strict=True) if f
            ]
            self._rows.extend(self.extra)
        return self._rows

    def __len__(self) -> int:
        return len(self.flags) - self.flags.count(DROPPED) + len(self.extra)

    @overload
    def __getitem__(self, i: int) -> Reference: ...
    @overload
    def __getitem__(self, i: slice) -> list[Reference]: ...
    def __getitem__(self, i: int | slice) -> Reference | list[Reference]:
        return self.rows()[i]

    def __iter__(self) -> Iterator[Reference]:
        return iter(self.rows())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FileRefs | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FileRefs({self.path!r}, {len(self)} references)"

    def uses(self) -> Iterator[tuple[str, str, str]]:
        """``(src, target, kind)`` of every reference with a target, without building rows
        (over ``RawRefs``, from its scope and kind columns alone)."""
        raw = self.raw
        if isinstance(raw, RawRefs):
            kinds = KINDS
            for scope, code, t, f in zip(raw.scopes, raw.kinds, self.targets, self.flags,
                                         strict=True):
                if f and t is not None:
                    yield scope, t, kinds[code]
        else:
            for r, t, f in zip(raw, self.targets, self.flags, strict=True):
                if f and t is not None:
                    yield r.scope, t, r.kind
        for ref in self.extra:
            if ref.target is not None:
                yield ref.src, ref.target, ref.kind

    def counts(self) -> tuple[int, int, int, int, int]:
        """(references, resolved, exact and resolved, internal targets, external targets)."""
        from fleet.graph._extract_native import native_module  # it imports this module

        native = native_module()
        if native is not None and type(self.targets) is list and type(self.flags) is bytes:
            # the loop below in C (condense.c)
            total, resolved, exact, internal = native.ref_counts(self.targets, self.flags)
        else:
            total = resolved = exact = internal = 0
            for t, f in zip(self.targets, self.flags, strict=True):
                if f:
                    total += 1
                    if t is not None:
                        resolved += 1
                        if f == EXACT:
                            exact += 1
                        if "::" in t:
                            internal += 1
        for ref in self.extra:
            total += 1
            if ref.target is not None:
                resolved += 1
                exact += ref.exact
                internal += "::" in ref.target
        return total, resolved, exact, internal, resolved - internal
