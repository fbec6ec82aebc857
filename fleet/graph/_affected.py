"""Which files an incremental re-index must re-resolve.

Resolving a file records the dependency keys it looked up (``Resolver.resolve_with_deps``): the
symbol ids it asked for, hit or miss (``pkg/m.py::name`` also stands for an import of ``name``
re-exported by that module), ``bases\\0<class id>`` for a class's base list,
``fixture\\0<id>`` for a pytest fixture, and the type facts' keys of ``_types`` (``attrs``,
``returns``, ``types``, ``stars``, ``exports``). An edited file changes some of those facts: its
*interface keys*. Only the edited files and the files whose recorded keys meet the changed
interface keys need resolving again; every other file's references are provably the same.

Changes that alter the module table (a file added, removed or renamed; a module name changed)
change the answer of lookups that are not recorded, so they call for a full re-resolve
(``None``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from fleet.graph._model import MODULE, FileData
from fleet.graph._refs import KIND_CODE, RawRefs, of_kind

__all__ = ["affected_files", "fixture_scopes", "interface_keys"]

_FIXTURE_KINDS = frozenset(KIND_CODE[k] for k in ("call", "attribute", "name"))


def _bases(fd: FileData) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for ref in of_kind(fd.refs, "inherit"):
        out.setdefault(ref.scope, []).append(ref.name)
    return {k: tuple(v) for k, v in out.items()}


def fixture_scopes(fd: FileData) -> frozenset[str]:
    """The functions of this file that ``Resolver`` counts as pytest fixtures."""
    if not (fd.fixture_params or fd.record.path.endswith("conftest.py")):
        return frozenset()
    refs = fd.refs
    if isinstance(refs, RawRefs):  # over the columns: no RawRef built per reference
        # the distinct names first: most test files name no fixture at all (Django: 0 of 288)
        wanted = {name for name in set(refs.names) if name.endswith("fixture")}
        if not wanted:
            return frozenset()
        return frozenset(
            scope for scope, name, kind in zip(refs.scopes, refs.names, refs.kinds, strict=True)
            if kind in _FIXTURE_KINDS and name in wanted
        )
    return frozenset(
        ref.scope for ref in refs
        if ref.name.endswith("fixture") and ref.kind in ("call", "attribute", "name")
    )


def interface_keys(path: str, old: FileData, new: FileData) -> set[str] | None:
    """The dependency keys whose answer differs between two versions of one file, or None
    when the change can reach files through lookups that are not recorded (module name)."""
    if old.module != new.module or old.record.language != new.record.language:
        return None
    keys: set[str] = set()
    old_syms = {(s.id, s.kind, s.parent) for s in old.symbols}
    new_syms = {(s.id, s.kind, s.parent) for s in new.symbols}
    keys.update(t[0] for t in old_syms ^ new_syms)
    for local in old.imports.keys() | new.imports.keys():
        if old.imports.get(local) != new.imports.get(local):
            keys.add(f"{path}::{local}")
    old_bases, new_bases = _bases(old), _bases(new)
    for cls in old_bases.keys() | new_bases.keys():
        if old_bases.get(cls) != new_bases.get(cls):
            keys.add(f"bases\0{cls}")
    module_id = f"{path}::{MODULE}"
    if (old.star_imports != new.star_imports or old.scoped_imports != new.scoped_imports
            or old.params.get(module_id) != new.params.get(module_id)):
        # base lists of this file's classes are resolved through these too (a class nested in
        # a function sees that function's imports)
        keys.update(f"bases\0{s.id}" for s in (*old.symbols, *new.symbols) if s.kind == "class")
    keys.update(f"fixture\0{scope}" for scope in fixture_scopes(old) ^ fixture_scopes(new))
    keys.update(_type_keys(path, old, new))
    return keys


def _differ(old: Mapping[str, object], new: Mapping[str, object]) -> set[str]:
    return {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)}


def _type_keys(path: str, old: FileData, new: FileData) -> set[str]:
    """The type facts (``_types``) that differ: attribute types, return annotations and
    properties, a scope's typed locals and bindings, star imports and ``__all__``."""
    keys = {f"attrs\0{cls}" for cls in _differ(old.attr_types, new.attr_types)}
    keys.update(f"returns\0{f}" for f in _differ(old.returns, new.returns))
    keys.update(f"returns\0{f}" for f in old.properties ^ new.properties)
    scopes = (_differ(old.local_types, new.local_types) | _differ(old.params, new.params)
              | _differ(old.scoped_imports, new.scoped_imports))
    keys.update(f"types\0{scope}" for scope in scopes)
    if old.star_imports != new.star_imports:
        keys.add(f"stars\0{path}")
    if old.exports != new.exports:
        keys.add(f"exports\0{path}")
    return keys


def affected_files(changed: Iterable[str], previous: Mapping[str, FileData],
                   current: Mapping[str, FileData],
                   deps: Mapping[str, frozenset[str]]) -> set[str] | None:
    """The files to re-resolve after ``changed`` files were re-extracted, given each file's
    dependency keys from the previous index; None when every file must be."""
    if previous.keys() != current.keys() or not deps.keys() >= current.keys():
        return None
    redo = set(changed)
    keys: set[str] = set()
    for path in redo:
        found = interface_keys(path, previous[path], current[path])
        if found is None:
            return None
        keys |= found
    if keys:
        redo.update(p for p, d in deps.items() if not keys.isdisjoint(d))
    return redo
