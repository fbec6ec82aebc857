"""A whole-result check beside ``_crossed.call_misfit``, for calls that make an instance: a call
of a class defined in the file (``Config(...)``, or ``cls(...)`` in one of its classmethods) that
does not fit the signature the result gives the class's ``__init__``, where every input that has
the class and the call fits (h5py ``6026179c7faf``, ``setup_configure.py``: theirs gave
``BuildConfig.__init__`` a seventh required parameter, ``direct_vfd``, and passed it where base
called ``cls(...)``; ours added an early ``return cls(...)`` with the six arguments of base; both
kept: a ``TypeError`` whenever that branch runs; the humans passed the new argument there too).

Only classes whose ``__init__`` the call surely reaches are looked at: a top-level class defined
once, bound no other way, without decorators (a dataclass writes its own ``__init__``), keyword
arguments (a metaclass), an enum, named tuple, typed dict or protocol base, or ``__new__``,
defining ``__init__`` once in its body, and that no other class of the file names as a base
(``cls`` may then be a subclass); and a bare ``@dataclass`` without a base, by the ``__init__``
its fields make (:func:`_dataclass_fields`)."""

from __future__ import annotations

import ast
from collections import Counter

from fleet.merge import _parsed
from fleet.merge._crossed import Signature, fits, new_misfit, signature
from fleet.merge._reduce import PLACEHOLDER

__all__ = ["constructor_misfit"]

# Bases whose metaclass answers a call of the class another way (``Color(1)`` looks a member up)
_CALLED_OTHERWISE = ("Enum", "Flag", "NamedTuple", "TypedDict", "Protocol")
_FIELD = ("field", "dataclasses.field")


def _constructors(tree: ast.Module) -> dict[str, Signature]:
    """Each class whose ``__init__`` a call of it surely reaches: that ``__init__``'s signature."""
    found = _parsed.nodes(tree)
    classes = [s for s in tree.body if isinstance(s, ast.ClassDef)]
    count = Counter(c.name for c in _parsed.of(found, ast.ClassDef))
    bound = {n.id for n in _parsed.of(found, ast.Name) if not isinstance(n.ctx, ast.Load)}
    bound.update((a.asname or a.name).split(".")[0] for a in _parsed.of(found, ast.alias))
    bound.update(n.name for n in _parsed.of(found, ast.FunctionDef))
    bound.update(n.name for n in _parsed.of(found, ast.AsyncFunctionDef))
    bases = {_parsed.dotted(b) for c in _parsed.of(found, ast.ClassDef) for b in c.bases}
    result = {}
    for cls in classes:
        if (count[cls.name] != 1 or cls.name in bound or cls.name in bases
                or cls.keywords or any(
                    (_parsed.dotted(b) or "").endswith(_CALLED_OTHERWISE) for b in cls.bases)):
            continue
        if cls.decorator_list:
            fields = _dataclass_fields(cls)
            if fields is not None:
                result[cls.name] = fields
            continue
        defs = [m for m in cls.body if isinstance(m, ast.FunctionDef)]
        names = Counter(m.name for m in defs)
        init = [m for m in defs if m.name == "__init__"]
        if names["__new__"] or names["__init__"] != 1 or init[0].decorator_list:
            continue
        result[cls.name] = signature(init[0], True)
    return result


def _dataclass_fields(cls: ast.ClassDef) -> Signature | None:
    """The ``__init__`` ``@dataclass`` writes for ``cls``: its fields in order, those without a
    default required (esphome ``light.py``: ``LEDStripTimings`` given two more fields by one
    side, a new entry with the old four arguments by the other). None unless the one decorator
    is a bare ``@dataclass`` (no ``init=False``, no ``kw_only``), the class has no base (fields
    it would inherit) and writes no ``__init__``, and every field is a plain name."""
    (decorator,) = cls.decorator_list if len(cls.decorator_list) == 1 else (None,)
    if decorator is None or _parsed.dotted(decorator) not in ("dataclass", "dataclasses.dataclass"):
        return None
    if cls.bases or any(isinstance(m, ast.FunctionDef) and m.name in ("__init__", "__new__")
                        for m in cls.body):
        return None
    required: list[str] = []
    names: list[str] = []
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id.startswith(PLACEHOLDER) for t in stmt.targets):
            return None  # fields set aside (``_reduce``): checked on the whole texts instead
        if not isinstance(stmt, ast.AnnAssign):
            continue
        annotation = _parsed.dotted(stmt.annotation) or ""
        if isinstance(stmt.annotation, ast.Subscript):
            annotation = _parsed.dotted(stmt.annotation.value) or ""
        if annotation.endswith("ClassVar"):
            continue
        if not isinstance(stmt.target, ast.Name) or annotation.endswith("KW_ONLY"):
            return None
        value = stmt.value
        if isinstance(value, ast.Call) and _parsed.dotted(value.func) in _FIELD:
            keys = {k.arg for k in value.keywords}
            if "init" in keys or None in keys:
                return None  # a field left out of __init__, or unknown keywords
            if not keys & {"default", "default_factory"}:
                value = None
        if value is None and len(required) < len(names):
            return None  # a required field after one with a default: no valid class
        names.append(stmt.target.id)
        if value is None:
            required.append(stmt.target.id)
    return tuple(required), len(names), frozenset(names), frozenset(), False, False


def _misfits(tree: ast.Module) -> dict[str, str]:
    """The instance-making calls (as dumped) that do not fit their class's ``__init__``: the
    class's name of each."""
    constructors = _constructors(tree)
    found: dict[str, str] = {}
    if not constructors:
        return found
    calls: list[tuple[ast.Call, str]] = []
    for node in _parsed.of(_parsed.nodes(tree), ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id in constructors:
            calls.append((node, node.func.id))
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or cls.name not in constructors:
            continue
        for method in cls.body:
            if isinstance(method, ast.FunctionDef) and any(
                    _parsed.dotted(d) == "classmethod" for d in method.decorator_list):
                first = method.args.posonlyargs or method.args.args
                if not first:
                    continue
                own = first[0].arg
                calls += [(node, cls.name) for node in _parsed.of(_parsed.nodes(method), ast.Call)
                          if isinstance(node.func, ast.Name) and node.func.id == own]
    for node, name in calls:
        if not fits(node, constructors[name]):
            found[ast.dump(node)] = name
    return found


def constructor_misfit(trees: list[ast.Module]) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    name = new_misfit(trees, _misfits)
    return None if name is None else f"a call of {name} does not fit the __init__ one side gave it"
