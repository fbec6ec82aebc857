"""Members of resolved values: dotted chains through modules and classes, MROs, star imports.

``_walk`` follows a chain's parts from a symbol: through modules (submodules, package
``__init__`` re-exports, star imports honouring ``__all__``) and classes (the depth-first MRO
over resolved bases; a member found nowhere in the repository on a class with an external base
is taken to be inherited from it). Base lists and MROs are memoised with the dependency keys
their computation recorded (``bases\\0<class id>`` and the ids looked up), replayed on reuse.
JS/TS/Go imports resolve through ``_foreign_import`` (path-like modules, Go path suffixes).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from fleet.graph._model import MODULE, FileData, RawRef
from fleet.graph._refs import of_kind
from fleet.graph._types import Typing

__all__ = ["Members"]


class Members(Typing):
    """Mixed into ``Resolver``: member lookups, MROs and dotted names over the repository."""

    modules: dict[str, list[str]]
    _bases: dict[str, list[str]]
    _external_bases: dict[str, list[str]]
    _base_refs: dict[str, dict[str, list[RawRef]]]
    _bases_deps: dict[str, frozenset[str]]
    _mro_cache: dict[str, tuple[list[str], frozenset[str]]]
    _computing_bases: int
    _chains: dict[tuple[str, str], tuple[tuple[str | None, bool], frozenset[str]]]
    _c_walk: Callable[..., tuple[str, bool]] | None  # ``walk`` in C (fanout_walk.c), or None
    # ``walk_chain`` and ``dotted_name`` in C (fanout_chain.c), or None
    _c_walk_chain: Callable[..., tuple[str | None, bool]] | None
    _c_dotted_name: Callable[..., tuple[str | None, bool]] | None
    _c_mro: Callable[..., list[str]] | None  # ``mro`` in C (fanout_mro.c), or None

    def _chain(self, key: tuple[str, str], compute: Callable[[], tuple[str | None, bool]]
               ) -> tuple[str | None, bool]:
        """A chain's resolution memoised across files with the dependency keys it recorded
        (replayed on reuse): ``models.CharField`` is looked up once per repository, not once
        per file. Only at the top of a resolution, where no cycle guard (a base list being
        computed, a type fact in progress) can make the result depend on how it was reached."""
        if self._depth or self._computing_bases:
            return compute()
        hit = self._chains.get(key)
        if hit is not None:
            if hit[1]:
                self._deps |= hit[1]
            return hit[0]
        outer = self._deps
        own: set[str] = set()
        self._deps = own
        try:
            result = compute()
        finally:
            self._deps = outer
        outer |= own
        self._chains[key] = (result, frozenset(own))
        return result

    def _walk_chain(self, start: str, rest: str) -> tuple[str | None, bool]:
        """``_walk`` over the dotted ``rest``, memoised (``_chain``). In C (``walk_chain``,
        fanout_chain.c, with the walk and a module's members in C) when the extension is
        built; this stays the specification (a test compares both)."""
        c_walk_chain = self._c_walk_chain
        if c_walk_chain is not None:
            return c_walk_chain(self, start, rest)
        return self._chain((start, rest), lambda: self._walk(start, rest.split(".")))

    def _dotted_name(self, name: str) -> tuple[str | None, bool]:
        """``_dotted(name, 0)``, memoised (``_chain``); in C (``dotted_name``) likewise."""
        c_dotted_name = self._c_dotted_name
        if c_dotted_name is not None:
            return c_dotted_name(self, name)
        return self._chain(("", name), lambda: self._dotted(name, 0))

    def _walk(self, start: str, parts: list[str], depth: int = 0) -> tuple[str, bool]:
        """Follow ``parts`` as members from ``start``. Stops at the deepest symbol reached
        (``exact`` False); a class member found nowhere in the repository but with a base
        class outside it is taken to be inherited: ``unittest.TestCase.assertEquals``. In C
        (``walk``, fanout_walk.c) when the extension is built; ``_walk_py`` stays the
        specification (a test compares both)."""
        c_walk = self._c_walk
        if c_walk is not None and type(parts) is list:
            found: tuple[str, bool] = c_walk(self, start, parts, depth)
            return found
        return self._walk_py(start, parts, depth)

    def _walk_py(self, start: str, parts: list[str], depth: int = 0) -> tuple[str, bool]:
        cur = start
        last = len(parts) - 1
        for i, part in enumerate(parts):
            typed = self._member_type(cur)  # a variable's or a property's class
            if typed is not None:
                cur = typed
            nxt = self._member(cur, part, depth)
            if nxt is None:
                sym = self.symbols.get(cur)
                if sym is not None and sym.kind == "class":
                    if i < last:
                        typed = self._attribute_type(cur, part)  # self.attr's class
                        if typed is not None:
                            cur = typed
                            continue
                    for cls in self._mro(cur):
                        external = self._external_bases.get(cls)
                        if external:
                            return ".".join([external[0], *parts[i:]]), False
                return cur, False
            cur = nxt
        return cur, True

    def _member(self, cur: str, part: str, depth: int) -> str | None:
        deps = self._deps
        deps.add(cur)
        sym = self.symbols.get(cur)
        if sym is None:
            return None
        if sym.kind == "module":
            candidate = f"{sym.path}::{part}"
            deps.add(candidate)  # also stands for a re-export of `part` in that module
            fd = self.files.get(sym.path)
            if candidate in self.symbols:
                # defined and imported there too (`try: from ._speedups import f` / `except
                # ImportError: def f(...)`): which one the name is depends on the run; not a
                # module importing its own name (`from rich.table import Table` in its demo)
                if fd is None:
                    return candidate
                other = fd.imports.get(part)
                return None if other is not None and other != f"{fd.module}.{part}" else (
                    candidate)
            if fd is None:
                return None
            if fd.module is not None:
                sub = self.modules.get(f"{fd.module}.{part}")
                if sub:
                    return sub[0]
                reexport = fd.imports.get(part)
                if reexport is not None and depth < 16:
                    target, exact = self._dotted(reexport, depth + 1)
                    return target if exact else None
                if fd.star_imports and depth < 16:
                    return self._star_member(fd, part, depth + 1)
            elif sym.language == "go":
                for mid in self.modules.get(posixpath.dirname(sym.path) or ".", ()):
                    candidate = f"{mid.split('::', 1)[0]}::{part}"
                    deps.add(candidate)
                    if candidate in self.symbols:
                        return candidate
            return None
        if sym.kind == "class":
            for cls in self._mro(cur):
                candidate = f"{cls}.{part}"
                deps.add(candidate)
                if candidate in self.symbols:
                    return candidate
        return None

    def _mro(self, cls: str) -> list[str]:
        """Depth-first, left to right over resolved bases; memoised with its dependency keys
        (replayed on reuse) unless a base list is being computed (its guard is in place). In
        C (``mro``, fanout_mro.c, which calls ``_compute_bases`` back) when the extension is
        built; this stays the specification (a test compares both)."""
        c_mro = self._c_mro
        if c_mro is not None:
            return c_mro(self, cls)
        hit = self._mro_cache.get(cls)
        if hit is not None:
            self._deps |= hit[1]
            return hit[0]
        outer = self._deps
        own: set[str] = set()
        self._deps = own
        try:
            order = self._compute_mro(cls)
        finally:
            self._deps = outer
        outer |= own
        if not self._computing_bases:
            self._mro_cache[cls] = (order, frozenset(own))
        return order

    def _compute_mro(self, cls: str) -> list[str]:
        order: list[str] = []
        seen: set[str] = set()
        stack = [cls]
        while stack:  # depth-first, left to right, iterative
            cur = stack.pop()
            if cur in seen:
                continue
            seen.add(cur)
            order.append(cur)
            stack.extend(reversed(self._class_bases(cur)))
        return order

    def _class_bases(self, cls: str) -> list[str]:
        bases = self._bases.get(cls)
        outer = self._deps
        outer.add(f"bases\0{cls}")
        if bases is not None:
            found = self._bases_deps.get(cls)
            if found:
                outer |= found
        else:
            self._bases[cls] = []  # guards against inheritance cycles while resolving
            self._deps = own = {cls}
            self._computing_bases += 1
            try:
                bases = self._compute_bases(cls)
            finally:
                self._computing_bases -= 1
                self._deps = outer
            self._bases_deps[cls] = frozenset(own)
            outer |= own
        return bases

    def _compute_bases(self, cls: str) -> list[str]:
        sym = self.symbols[cls]
        fd = self.files[sym.path]
        bases = []
        external: list[str] = []
        by_class = self._base_refs.get(sym.path)
        if by_class is None:
            by_class = self._base_refs[sym.path] = {}
            for raw in of_kind(fd.refs, "inherit"):
                by_class.setdefault(raw.scope, []).append(raw)
        for ref in by_class.get(cls, ()):
            target, exact = self._resolve(ref, fd)
            if target is None or not exact or target == cls:
                continue
            if "::" in target:
                bases.append(target)
            elif not target.startswith("builtins."):
                external.append(target)
        self._bases[cls] = bases
        if external:
            self._external_bases[cls] = external
        return bases

    def _star_member(self, fd: FileData, name: str, depth: int) -> str | None:
        """``name`` (a first part and the rest) through the file's star imports, each
        honouring the imported module's literal ``__all__`` (else its public names)."""
        self._deps.add(f"stars\0{fd.record.path}")
        head = name.partition(".")[0]
        for star in fd.star_imports:
            ids = self.modules.get(star)
            if ids:
                source = self.files.get(ids[0].split("::", 1)[0])
                if source is not None:
                    self._deps.add(f"exports\0{source.record.path}")
                    exports = source.exports
                    if (head not in exports) if exports is not None else head.startswith("_"):
                        continue
            target, exact = self._dotted(f"{star}.{name}", depth)
            if target is not None and exact:
                return target
        return None

    def _dotted(self, name: str, depth: int) -> tuple[str | None, bool]:
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            ids = self.modules.get(".".join(parts[:i]))
            if ids:
                return self._walk(ids[0], parts[i:], depth) if i < len(parts) else (ids[0], True)
        return None, False

    def _foreign_import(self, target: str) -> tuple[str | None, bool]:
        """JS/TS/Go: a path-like module plus optional ``.member`` -> symbol id, or external."""
        candidates = [(target, "")]
        if "." in target.rsplit("/", 1)[-1]:
            module, _, member = target.rpartition(".")
            candidates.append((module, member))
        for module, member in candidates:
            ids = self._foreign_module(module)
            if ids:
                if not member:
                    return ids[0], True
                for mid in ids:
                    candidate = f"{mid.split('::', 1)[0]}::{member}"
                    self._deps.add(candidate)
                    if candidate in self.symbols:
                        return candidate, True
                return ids[0], False
        return target, True

    def _foreign_module(self, module: str) -> list[str] | None:
        if module in self.modules:
            return self.modules[module]
        parts = module.split("/")
        for i in range(1, len(parts)):  # Go: module path suffixes (example.com/proj/util)
            ids = self.modules.get("/".join(parts[i:]))
            if ids and ids[0].endswith(f"::{MODULE}") and ids[0].split("::")[0].endswith(".go"):
                return ids
        return None
