"""Name resolution: raw references -> symbol ids (in the repository) or dotted externals.

Python scoping is followed where it matters for dependencies: enclosing function scopes
(nested functions, local bindings and imports made in the function), class scope only for code
directly in the class body (its members and imports), module scope, the file's module-level
import table (aliases, ``from x import y as z``, relative imports),
star imports, then builtins. ``self.``/``cls.`` chains are looked up in the enclosing class and
its bases; dotted chains are walked through modules and class members (``_members``), values of
a known class through their types (``_types``).

Dependency keys: while resolving a file, every fact looked up in the repository is recorded as a
key (a symbol id asked for, hit or miss, which also stands for the import of that name in the
module it names; ``bases\0<class id>`` for a class's base list; ``fixture\0<id>`` for a pytest
fixture). ``resolve_with_deps`` returns them, and an incremental re-index re-resolves only the
files whose keys an interface change touched (see ``_affected``).
"""

from __future__ import annotations

import builtins
import posixpath
from collections.abc import Callable, Mapping
from functools import partial

from fleet.graph._affected import fixture_scopes
from fleet.graph._extract_native import native_module
from fleet.graph._members import Members
from fleet.graph._model import MODULE, FileData, RawRef, Reference, Symbol
from fleet.graph._modules import module_table, python_module_names
from fleet.graph._refs import EXACT, KINDS, PREFIX, FileRefs, RawRefs

__all__ = ["Resolver", "python_module_names"]

_BUILTINS = frozenset(dir(builtins))
_MODULE_SUFFIX = f"::{MODULE}"


def _foreign_keys(keys: set[str], path: str) -> frozenset[str]:
    """The keys that name something outside ``path``. A key naming the file itself (its
    symbols, ``bases\0``/``attrs\0``/... of its classes, its stars and exports) can only be
    touched by an edit of that file, which re-resolves it anyway; they were 64% of Django's
    keys (191,851 of 298,205)."""
    own = path + "::"
    return frozenset(
        k for k in keys
        if not k.startswith(own) and (tail := k.rpartition("\0")[2]) != path
        and not tail.startswith(own)
    )


def _locally_bound(fd: FileData) -> set[str]:
    """Every name some function or class scope of the file binds: parameters and locals,
    nested definitions and members, imports in a function or class body."""
    local: set[str] = set()
    for names in fd.params.values():
        local.update(names)
    # a parent naming a module is this file's module symbol: one string compared per symbol
    module_id = f"{fd.record.path}{_MODULE_SUFFIX}"
    local.update([s.name for s in fd.symbols if s.parent is not None and s.parent != module_id])
    for imported in fd.scoped_imports.values():
        local.update(imported)
    return local


class Resolver(Members):
    """Resolves every file's raw references against one consistent view of the repository."""

    def __init__(self, files: Mapping[str, FileData], symbols: Mapping[str, Symbol],
                 modules: dict[str, list[str]] | None = None) -> None:
        """``modules``: the module table of these files when already known (``module_table``
        of the same paths, languages and module names)."""
        self.files = files
        self.symbols = symbols
        self.modules = modules if modules is not None else module_table(files)
        self._bases: dict[str, list[str]] = {}
        self._external_bases: dict[str, list[str]] = {}
        self._depth = 0
        # path -> class id -> its base references, per file on first need (an incremental
        # re-index consults few files)
        self._base_refs: dict[str, dict[str, list[RawRef]]] = {}
        self._deps: set[str] = set()  # the dependency keys of the file being resolved
        self._bases_deps: dict[str, frozenset[str]] = {}
        self._memo: dict[tuple[str, str], tuple[object, frozenset[str]]] = {}
        self._mro_cache: dict[str, tuple[list[str], frozenset[str]]] = {}
        self._computing_bases = 0
        self._chains = {}
        self._fixture_ids: dict[str, frozenset[str]] = {}  # path -> its fixtures, on first need
        self._conftests: dict[tuple[str, str], tuple[str | None, list[str]]] = {}
        native = native_module()
        # ``_lookup_scopes`` in C (fanout.c) when the symbols are a dict, as ``index`` gives
        self._c_lookup = (native.lookup_scopes
                          if native is not None and type(symbols) is dict else None)
        # ``_walk`` in C (fanout_walk.c) too, and the memoised chains over it (fanout_chain.c)
        in_c = native if type(symbols) is dict else None
        self._c_walk = in_c.walk if in_c is not None else None
        self._c_walk_chain = in_c.walk_chain if in_c is not None else None
        self._c_dotted_name = in_c.dotted_name if in_c is not None else None
        self._c_mro = in_c.mro if in_c is not None else None  # (fanout_mro.c)
        self._c_enclosing = in_c.enclosing_class if in_c is not None else None

    # -- public --------------------------------------------------------------------------
    def resolve_with_deps(self, fd: FileData) -> tuple[FileRefs, frozenset[str]]:
        """The file's references and the dependency keys their resolution looked up."""
        deps: set[str] = set()
        self._deps = deps
        refs = self.resolve_file(fd)
        self._deps = set()
        native = native_module()
        if native is not None:  # the same filter in C (fanout.c)
            return refs, native.foreign_keys(deps, fd.record.path)
        return refs, _foreign_keys(deps, fd.record.path)

    def resolve_file(self, fd: FileData) -> FileRefs:
        # Per file, keyed by (scope, name, kind), except where the scope cannot matter: a
        # name whose head no function or class of the file binds resolves as at module level
        # from any scope, and ``self.x`` / ``cls.x`` through the enclosing class. The lookups
        # skipped on the way would only have recorded keys naming this file (dropped anyway).
        cache: dict[tuple[str, str, str], tuple[str | None, bool]] = {}
        local = _locally_bound(fd)
        python = fd.record.language == "python"
        classes: dict[str, str | None] = {}  # scope -> its enclosing class
        raw = fd.refs
        native = native_module() if isinstance(raw, RawRefs) else None
        if native is not None:  # the same loop in C (fanout.c) over the columns
            assert isinstance(raw, RawRefs)
            # a Python file's misses at the top of a resolution: their common cases in C too
            # (fanout_miss.c: ``_resolve``'s, through the same lookups and memo)
            ctx = (self.symbols, self._deps, self._chains, fd.imports, fd.scoped_imports,
                   fd.params, fd.local_types, bool(fd.star_imports), fd.record.path, _BUILTINS,
                   *self._chain_callables(), self, f"{fd.record.path}{_MODULE_SUFFIX}") if (
                python and self._c_lookup is not None and not self._depth
                and not self._computing_bases) else None
            c_enclosing = self._c_enclosing
            enclosing = (partial(c_enclosing, self.symbols) if c_enclosing is not None
                         else self._enclosing_class)
            found, flag_bytes = native.fanout(
                raw.scopes, raw.names, raw.kinds, KINDS, local, python, classes,
                enclosing, cache, self._resolve, fd, RawRef, ctx)
            return FileRefs(fd.record.path, raw, found, flag_bytes, self._fixture_refs(fd))
        targets: list[str | None] = []
        flags = bytearray(len(fd.refs))
        for i, ref in enumerate(fd.refs):
            name = ref.name
            head = name.partition(".")[0]
            if "()" in name:
                key = (ref.scope, name, ref.kind)
            elif head not in local:
                key = ("", name, ref.kind)
            elif python and head in ("self", "cls") and ref.kind != "inherit":
                cls = classes.get(ref.scope, "")
                if cls == "":
                    cls = classes[ref.scope] = self._enclosing_class(ref.scope)
                key = (cls or ref.scope, name, ref.kind)
            else:
                key = (ref.scope, name, ref.kind)
            hit = cache.get(key)
            if hit is None:
                hit = self._resolve(ref, fd)
                cache[key] = hit
            target, exact = hit
            if not exact and "()" in ref.name:
                targets.append(None)  # a chain through a call: only an exact target counts
                continue
            if target == "":  # a local variable
                if ref.kind == "name":
                    targets.append(None)  # a plain use of a local is no reference to a symbol
                    continue
                target = None
            targets.append(target)
            flags[i] = EXACT if exact else PREFIX
        return FileRefs(fd.record.path, fd.refs, targets, bytes(flags), self._fixture_refs(fd))

    def _chain_callables(self) -> tuple[Callable[..., tuple[str | None, bool]], ...]:
        """``_walk_chain`` and ``_dotted_name`` for ``fanout``'s misses: the C functions bound
        to this resolver without a Python frame between (``partial``) when they are built."""
        c_walk_chain, c_dotted_name = self._c_walk_chain, self._c_dotted_name
        return (partial(c_walk_chain, self) if c_walk_chain is not None else self._walk_chain,
                partial(c_dotted_name, self) if c_dotted_name is not None else
                self._dotted_name)

    def _fixture_refs(self, fd: FileData) -> list[Reference]:
        """A reference from each test function to each pytest fixture its parameters name."""
        extra: list[Reference] = []
        for func, names in fd.fixture_params.items():
            sym = self.symbols.get(func)
            if sym is None:
                continue
            for name in names:
                fixture = self._fixture(fd.record.path, name)
                if fixture is not None and fixture != func:
                    extra.append(Reference(func, fd.record.path, name, fixture, "name",
                                           sym.start_line, 0, sym.start_byte, sym.start_byte,
                                           True, True))
        return extra

    def _fixtures(self, path: str) -> frozenset[str]:
        """The functions of ``path`` counted as pytest fixtures (a fixture id starts with its
        file's path, so only the test file and its ``conftest.py`` files are ever read)."""
        found = self._fixture_ids.get(path)
        if found is None:
            fd = self.files.get(path)
            found = self._fixture_ids[path] = fixture_scopes(fd) if fd else frozenset()
        return found

    def _fixture(self, path: str, name: str) -> str | None:
        """The pytest fixture a test parameter names: the test file's own, then the nearest
        ``conftest.py`` up the directory tree."""
        deps = self._deps
        candidate = f"{path}::{name}"
        deps.add(f"fixture\0{candidate}")
        if candidate in self._fixtures(path):
            return candidate
        # the walk up the conftest files, once per directory and name (with the keys it read)
        directory = posixpath.dirname(path)
        walked = self._conftests.get((directory, name))
        if walked is None:
            keys: list[str] = []
            found: str | None = None
            while True:
                conftest = f"{directory}/conftest.py" if directory else "conftest.py"
                candidate = f"{conftest}::{name}"
                keys.append(f"fixture\0{candidate}")
                if candidate in self._fixtures(conftest):
                    found = candidate
                    break
                if not directory:
                    break
                directory = posixpath.dirname(directory)
            walked = self._conftests[(posixpath.dirname(path), name)] = (found, keys)
        deps.update(walked[1])
        return walked[0]

    def resolve_dotted(self, name: str) -> tuple[str | None, bool]:
        """A dotted name -> (symbol id, exact) when some module prefix is in the repo."""
        return self._dotted(name, 0)

    # -- internals -----------------------------------------------------------------------
    def _resolve(self, ref: RawRef, fd: FileData) -> tuple[str | None, bool]:
        lang = fd.record.language
        name = ref.name
        if ref.kind == "import":
            if lang == "python":
                found, exact = self._dotted_name(name)
                return (found, exact) if found is not None and exact else (name, True)
            return self._foreign_import(name)
        if "()" in name:
            return self._through_call(ref, fd)
        head, _, rest = name.partition(".")
        scope = ref.scope
        if ref.kind == "inherit":  # bases are evaluated outside the class body
            sym = self.symbols.get(scope)
            scope = sym.parent or scope if sym is not None else scope
        if lang == "python" and head in ("self", "cls"):
            cls = self._enclosing_class(scope)
            if cls is not None:
                return self._walk_chain(cls, rest) if rest else (cls, True)
        found = self._lookup_scopes(head, scope, fd)
        dotted: str | None = None
        if found is None:
            dotted = fd.imports.get(head)
        elif found.startswith("\1"):  # imported inside an enclosing function or class body
            dotted = found[1:]
        elif found.startswith("\0"):
            return self._typed_local(found, rest, fd)
        elif found == "":
            return "", False  # a local variable: its type is unknown
        else:
            return self._walk_chain(found, rest) if rest else (found, True)
        if dotted is not None:
            full = f"{dotted}.{rest}" if rest else dotted
            if lang == "python":
                target, exact = self._dotted_name(full)
                return (target, exact) if target is not None else (full, True)
            return self._foreign_import(full)
        target = self._star_member(fd, name, 0)
        if target is not None:
            return target, True
        module_id = f"{fd.record.path}::{MODULE}"
        if head in fd.params.get(module_id, ()):
            # a module-level name bound outside a plain assignment (in an `if`, a `try`, a
            # loop): typed as a function's locals are (`console = Console()` under
            # `if __name__ == "__main__":`), else nothing known past the module
            typed = fd.local_types.get(module_id, {}).get(head) if rest else None
            if typed is not None:
                found, exact = self._typed_local(f"\0{module_id}\0{typed}", rest, fd)
                if found:
                    return found, exact
            return module_id, False
        if lang == "python" and head in _BUILTINS:
            return f"builtins.{name}", True
        return None, False

    def _lookup_scopes(self, head: str, scope: str, fd: FileData) -> str | None:
        """Innermost-first: returns a symbol id, ``""`` for a local binding, ``"\\1"`` + the
        dotted target for a name imported in a function or class body, or None. In C
        (``lookup_scopes``, fanout.c) when the extension is built; this method stays the
        specification (a test compares both) and the path of Go packages."""
        c_lookup = self._c_lookup
        if c_lookup is not None:
            found = c_lookup(head, scope, self.symbols, self._deps, fd.scoped_imports,
                             fd.params, fd.local_types)
            if found is not NotImplemented:
                return found
        return self._lookup_scopes_py(head, scope, fd)

    def _lookup_scopes_py(self, head: str, scope: str, fd: FileData) -> str | None:
        symbols = self.symbols
        deps = self._deps
        scoped = fd.scoped_imports
        first = True
        sid: str | None = scope
        while sid is not None:
            sym = symbols.get(sid)
            if sym is None:
                break
            kind = sym.kind
            if kind in ("function", "method"):
                nested = f"{sid}.{head}"
                deps.add(nested)
                if nested in symbols:
                    return nested
                if scoped:
                    imported = scoped.get(sid, {}).get(head)
                    if imported is not None:
                        return "\1" + imported
                if head in fd.params.get(sid, ()):
                    typed = fd.local_types.get(sid)
                    if typed is not None and head in typed:
                        return f"\0{sid}\0{typed[head]}"
                    return ""
                first = False
            elif kind == "class":
                if first:
                    member = f"{sid}.{head}"
                    deps.add(member)
                    if member in symbols:
                        return member
                    if scoped:  # a class body's import is seen in that body only
                        imported = scoped.get(sid, {}).get(head)
                        if imported is not None:
                            return "\1" + imported
                first = False
            elif kind == "module":
                candidate = f"{sym.path}::{head}"
                deps.add(candidate)
                if candidate in symbols:
                    return candidate
                if sym.language == "go":
                    for mid in self.modules.get(posixpath.dirname(sym.path) or ".", ()):
                        candidate = f"{mid.split('::', 1)[0]}::{head}"
                        deps.add(candidate)
                        if candidate in symbols:
                            return candidate
                return None
            sid = sym.parent
        return None

    def _enclosing_class(self, scope: str) -> str | None:
        """The class whose method (or a function nested in one) ``scope`` is, else None. In
        C (``enclosing_class``, fanout_mro.c) when the extension is built."""
        c_enclosing = self._c_enclosing
        if c_enclosing is not None:
            return c_enclosing(self.symbols, scope)
        sid: str | None = scope
        seen_function = False
        while sid is not None:
            sym = self.symbols.get(sid)
            if sym is None:
                return None
            if sym.kind in ("function", "method"):
                seen_function = True
            elif sym.kind == "class":
                return sid if seen_function else None
            sid = sym.parent
        return None
