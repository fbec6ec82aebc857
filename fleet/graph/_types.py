"""Types for name resolution: what class a value is, so ``x.m`` can resolve to ``Cls.m``.

Flow-insensitive and conservative: a value gets a class only when every fact about it agrees.
The facts (``_facts``): locals and parameters bound by a constructor call or an annotation,
module and class variables (``register = Library()``, ``conn: Conn``), ``self.attr``
assignments in a class's methods (``self.x = Cls()``, ``self.x: Cls``, ``self.x = typed_param``;
``None`` is ignored, two different classes or an unknown value leave the attribute untyped;
where the class annotates the attribute, its annotations alone), locals that alias another
typed local or parameter (``tr = terminalreporter``) or an attribute chain of ``self`` / ``cls``
(``pm = self.config.pluginmanager``), ``x = cast("C", v)``, loop variables (the items of a
container annotation's ``[]C``),
return annotations (a call's result; ``@property`` / ``@cached_property`` results without a
call) and ``super()`` (the class's MRO after it).

Dependency keys, besides the symbol ids looked up on the way: ``attrs\\0<class>`` (its
``self.attr`` facts), ``returns\\0<function>`` (its return annotation, and whether it is a
property), ``types\\0<scope>`` (the typed locals and bindings of a function, or a variable's
value), ``stars\\0<path>`` / ``exports\\0<path>`` (a module's star imports and ``__all__``).
Results are memoised with the keys their computation recorded, replayed on every reuse.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from fleet.graph._model import FileData, RawRef, Symbol, name_ref

__all__ = ["T", "Typing"]

T = TypeVar("T")

_SELF_TYPES = frozenset({"Self", "typing.Self", "typing_extensions.Self"})
_OWN = ("self.", "cls.")  # an alias of an attribute chain of these (``_typed_local``)


class Typing:
    """Mixed into ``Resolver``: the type lookups it makes while walking a dotted chain."""

    files: Mapping[str, FileData]
    symbols: Mapping[str, Symbol]
    _deps: set[str]
    _depth: int
    _memo: dict[tuple[str, str], tuple[object, frozenset[str]]]

    # provided by Resolver
    def _resolve(self, ref: RawRef, fd: FileData) -> tuple[str | None, bool]:
        raise NotImplementedError

    def _lookup_scopes(self, head: str, scope: str, fd: FileData) -> str | None:
        raise NotImplementedError

    def _walk(self, start: str, parts: list[str], depth: int = 0) -> tuple[str, bool]:
        raise NotImplementedError

    def _walk_chain(self, start: str, rest: str) -> tuple[str | None, bool]:
        raise NotImplementedError

    def _mro(self, cls: str) -> list[str]:
        raise NotImplementedError

    def _enclosing_class(self, scope: str) -> str | None:
        raise NotImplementedError

    # -- memo ----------------------------------------------------------------------------
    def _memoised(self, key: tuple[str, str], compute: Callable[[], T | None]) -> T | None:
        hit = self._memo.get(key)
        if hit is not None:
            self._deps |= hit[1]
            return hit[0]  # type: ignore[return-value]
        if self._depth > 12:
            return None
        outer = self._deps
        own: set[str] = set()
        self._deps = own
        self._memo[key] = (None, frozenset())  # a cycle of facts resolves to nothing
        self._depth += 1
        try:
            result = compute()
        finally:
            self._depth -= 1
            self._deps = outer
        self._memo[key] = (result, frozenset(own))
        outer |= own
        return result

    # -- types ---------------------------------------------------------------------------
    def _typed_local(self, found: str, rest: str, fd: FileData) -> tuple[str | None, bool]:
        """``x.attr`` where ``x = Cls(...)`` or ``x: Cls``: ``attr`` looked up on ``Cls``; where
        ``x`` is a loop's variable (``EXPR[]``), on the class of EXPR's items; where it aliases
        ``self.a.b``, as ``self.a.b.attr``. Nothing where ``x`` is a container (``[]C``)."""
        _, scope, type_expr = found.split("\0")
        if not rest or self._depth > 8 or type_expr.startswith("[]"):
            return "", False  # (a container: what is called on it is the builtin's)
        if type_expr.endswith("[]"):  # a loop's variable: an item of the iterable
            self._depth += 1
            try:
                item = self._element_type(scope, type_expr[:-2], fd)
            finally:
                self._depth -= 1
            return ("", False) if item is None else self._walk_chain(item, rest)
        self._depth += 1
        try:
            cls, exact = self._resolve(name_ref(scope, type_expr), fd)
            if (cls is None or cls == "" or not exact) and type_expr.startswith(
                    _OWN) and "(" not in type_expr:
                # an alias of an attribute chain of the instance or class (``pm =
                # self.config.pluginmanager``; its one binding, flow-insensitive): ``x.rest``
                # is ``expr.rest``, resolved as written there (through self's attribute
                # types). Not of another local's chain: ``s = s.parent`` would recurse. An
                # alias of a local or parameter has its type expression already
                # (``_facts_local.follow_aliases``).
                return self._resolve(name_ref(scope, f"{type_expr}.{rest}"), fd)
        finally:
            self._depth -= 1
        if cls is None or cls == "" or not exact:
            return "", False
        if "::" not in cls:
            return (f"{cls}.{rest}", False) if not cls.startswith("builtins.") else ("", False)
        self._deps.add(cls)
        typed = self._value_type(cls, False)
        if typed is None:
            return "", False
        return self._walk_chain(typed, rest)  # memoised across files at the top

    def _type_of(self, scope: str, expr: str, fd: FileData) -> str | None:
        """The class (symbol id) of the value ``expr`` names in ``scope``; ``expr`` ending in
        ``()`` is a call's result. None when unknown or ambiguous."""
        if expr.startswith("[]"):
            return None  # a container of something is no class
        if expr.endswith("[]"):
            return self._element_type(scope, expr[:-2], fd)
        call = expr.endswith("()")
        expr = expr.removesuffix("()")
        self._deps.add(f"types\0{scope}")
        head, _, rest = expr.partition(".")
        if head not in ("self", "cls"):
            found = self._lookup_scopes(head, scope, fd)
            if found is not None and found.startswith("\0"):  # a typed local
                _, sid, type_expr = found.split("\0")
                self._deps.add(f"types\0{sid}")
                if self._depth > 12 or type_expr.partition(".")[0] == head:
                    return None  # `node = node.parent()`: no fixed point sought
                self._depth += 1
                try:
                    base = self._type_of(sid, type_expr, fd)
                finally:
                    self._depth -= 1
                if base is None:
                    return None
                if not rest:
                    return None if call else base
                member, exact = self._walk(base, rest.split("."))
                return self._value_type(member, call) if exact else None
        target, exact = self._resolve(name_ref(scope, expr), fd)
        if target is None or not exact or "::" not in target:
            return None
        return self._value_type(target, call)

    def _value_type(self, target: str, call: bool) -> str | None:
        """A resolved symbol as a value: a class is its instances' type (called or named, as
        in an annotation), a function's call is its return type, a variable its value's."""
        sym = self.symbols.get(target)
        if sym is None:
            return None
        if sym.kind == "class":
            return target
        if sym.kind in ("function", "method"):
            return self._return_type(target)
        if sym.kind == "variable" and not call:
            return self._variable_type(target)
        return None

    def _return_type(self, func: str) -> str | None:
        def compute() -> str | None:
            self._deps.add(f"returns\0{func}")
            sym = self.symbols[func]
            fd = self.files[sym.path]
            ann = fd.returns.get(func)
            if ann is None or sym.parent is None or ann.startswith("[]"):
                return None
            if ann in _SELF_TYPES:
                return sym.parent if self.symbols[sym.parent].kind == "class" else None
            cls = self._type_of(sym.parent, ann, fd)
            return cls if cls is not None and self.symbols[cls].kind == "class" else None
        return self._memoised(("returns", func), compute)

    def _variable_type(self, var: str) -> str | None:
        def compute() -> str | None:
            self._deps.add(f"types\0{var}")
            sym = self.symbols[var]
            fd = self.files[sym.path]
            expr = fd.local_types.get(var, {}).get(sym.name)
            if expr is None or sym.parent is None:
                return None
            return self._type_of(sym.parent, expr, fd)
        return self._memoised(("variable", var), compute)

    def _attribute_type(self, cls: str, attr: str) -> str | None:
        """The class of ``self.attr`` for instances of ``cls``: the facts of the first class
        in its MRO that assigns the attribute, when they agree."""
        def compute() -> str | None:
            for owner in self._mro(cls):
                self._deps.add(f"attrs\0{owner}")
                fd = self.files[self.symbols[owner].path]
                facts = fd.attr_types.get(owner, {}).get(attr)
                if not facts:
                    continue
                found = {self._type_of(scope, expr, fd) for scope, expr in facts}
                return found.pop() if len(found) == 1 else None
            return None
        return self._memoised(("attr", f"{cls}\0{attr}"), compute)

    # -- items of an iterable (``for x in EXPR``) -----------------------------------------
    def _element_type(self, scope: str, expr: str, fd: FileData) -> str | None:
        """The class of the items of the iterable ``expr`` names in ``scope`` (a name, a
        dotted chain, a call of one), from a container annotation (``[]C``: ``-> list[C]``,
        ``x: Sequence[C]``, ``self.x: List[C]``); None when unknown or ambiguous."""
        if expr.startswith("[]"):
            return self._type_of(scope, expr[2:], fd)
        if expr.endswith("[]"):
            return None  # the items of an item: only one level of containers is typed
        call = expr.endswith("()")
        name = expr.removesuffix("()")
        self._deps.add(f"types\0{scope}")
        head, _, rest = name.partition(".")
        found = (self._lookup_scopes(head, scope, fd)
                 if head not in ("self", "cls") and not rest and not call else None)
        if found is not None and found.startswith("\0"):
            _, sid, type_expr = found.split("\0")  # a typed local: what it holds
            if self._depth > 12 or type_expr.partition(".")[0] == head:
                return None
            self._depth += 1
            try:
                return self._element_type(sid, type_expr, fd)
            finally:
                self._depth -= 1
        target, exact = self._resolve(name_ref(scope, name), fd)
        if target is not None and exact and "::" in target:
            sym = self.symbols.get(target)
            if sym is None:
                return None
            if sym.kind in ("function", "method") and (
                    call or target in self.files[sym.path].properties):
                return self._returned_items(target)
            if sym.kind == "variable" and not call:
                return self._items("variable", target, sym.name)
            return None
        if call or not rest:
            return None
        owner_expr, _, attr = name.rpartition(".")  # an instance attribute of a typed owner
        owner = (self._enclosing_class(scope) if owner_expr in ("self", "cls")
                 else self._type_of(scope, owner_expr, fd))
        return None if owner is None else self._items("attrs", owner, attr)

    def _returned_items(self, func: str) -> str | None:
        def compute() -> str | None:
            self._deps.add(f"returns\0{func}")
            sym = self.symbols[func]
            ann = self.files[sym.path].returns.get(func)
            if ann is None or not ann.startswith("[]") or sym.parent is None:
                return None
            return self._type_of(sym.parent, ann[2:], self.files[sym.path])
        return self._memoised(("returned_items", func), compute)

    def _items(self, kind: str, owner: str, attr: str) -> str | None:
        """The class of the items of a module or class variable (``kind`` "variable",
        ``owner`` its id, ``attr`` its name), or of an attribute of the instances of the class
        ``owner`` ("attrs": the facts of the first class in its MRO that assigns it, when they
        agree)."""
        def compute() -> str | None:
            if kind == "variable":
                self._deps.add(f"types\0{owner}")
                sym = self.symbols[owner]
                fd = self.files[sym.path]
                expr = fd.local_types.get(owner, {}).get(attr)
                if expr is None or sym.parent is None:
                    return None
                return self._element_type(sym.parent, expr, fd)
            for cls in self._mro(owner):
                self._deps.add(f"attrs\0{cls}")
                fd = self.files[self.symbols[cls].path]
                facts = fd.attr_types.get(cls, {}).get(attr)
                if facts:
                    found = {self._element_type(scope, expr, fd) for scope, expr in facts}
                    return found.pop() if len(found) == 1 else None
            return None
        return self._memoised((f"{kind}_items", f"{owner}\0{attr}"), compute)

    def _member_type(self, member: str) -> str | None:
        """The class a member's value has when a chain goes on past it: a variable's value,
        a property's return type."""
        sym = self.symbols.get(member)
        if sym is None or sym.kind in ("class", "module", "function"):
            return None
        if sym.kind == "variable":
            return self._variable_type(member)
        if sym.kind == "method":
            fd = self.files[sym.path]
            self._deps.add(f"returns\0{member}")
            if member in fd.properties:
                return self._return_type(member)
        return None

    # -- chains through a call -----------------------------------------------------------
    def _through_call(self, ref: RawRef, fd: FileData) -> tuple[str | None, bool]:
        """``super().m``, ``super(C, self).m``, ``f().m``, ``a.b().m.n``, and chains of them
        (``select().where().limit``: each call's result typed by its callee)."""
        callee, _, rest = ref.name.partition("().")
        segments = rest.split("().")
        first = segments[0]
        if callee == "super" or callee.startswith("super("):
            member, exact = self._after_super(ref, fd, callee, first)
        else:
            cls = self._type_of(ref.scope, callee + "()", fd)
            if cls is None:
                return None, False
            member, exact = self._walk_chain(cls, first)
        for segment in segments[1:]:
            if member is None or not exact:
                return None, False
            cls = self._value_type(member, True)  # the called member's result
            if cls is None:
                return None, False
            member, exact = self._walk_chain(cls, segment)
        return member, exact

    def _after_super(self, ref: RawRef, fd: FileData, callee: str, rest: str
                     ) -> tuple[str | None, bool]:
        """``super().rest`` / ``super(C, self).rest``: the first part looked up in the MRO
        after the class."""
        parts = rest.split(".")
        if callee == "super":
            cls = self._enclosing_class(ref.scope)
        else:
            cls, exact = self._resolve(
                name_ref(ref.scope, callee[6:-1]), fd)
            if cls is None or not exact or self.symbols.get(cls) is None or (
                    self.symbols[cls].kind != "class"):
                return None, False
        if cls is None:
            return None, False
        for owner in self._mro(cls)[1:]:
            candidate = f"{owner}.{parts[0]}"
            self._deps.add(candidate)
            if candidate in self.symbols:
                return (self._walk_chain(candidate, rest.partition(".")[2])
                        if parts[1:] else (candidate, True))
        return None, False
