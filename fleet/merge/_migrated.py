"""Whole-file checks for an old spelling that one side retired everywhere while the other side
adds code written the old way. Each clean result of the kind was found by reading the earlier
sets' clean results that differ from the humans' (5 Dec); each broke at run time where the
humans rewrote the new code. The file conflicts instead.

- :func:`access_retired`: a dotted read (``result.data``, ``utils.from_iso``,
  ``self.assertEqual``) that base makes at least twice, that one side makes no more, having
  rewritten the lines in place (most of base's uses, at most one in four deleted whole: a
  feature removed is not a rename), while the other side makes it more often than base and the
  result keeps it (marshmallow ``669bea38aca0``: ``dump()`` returns the data itself on ours,
  theirs' new tests read ``result.data``; ``98b46e1a39f6``: ``utils.from_iso`` renamed on ours;
  Pillow ``9cbb840861d0``: ours moved the tests off ``TestCase``, theirs added one with
  ``self.assertEqual``). Skipped, as the old spelling likely still works: a read through an
  imported standard-library module, unless that module, loaded here, has no such attribute
  (nipype ``b9039d6cbb50``: ours fixed ``os.join``, which never existed, to ``os.path.join``;
  theirs added ``os.join`` calls), a camelCase name rewritten to its snake_case twin, a private
  name made public (poetry ``92dad18171a7``: ``default._name`` -> ``default.name``) and the same
  attribute read through another receiver (sphinx ``84d3c6508741``: ``self.env.config`` ->
  ``self.config``), but for one reached one step further from the same receiver, which now
  wraps what it was (saleor ``0dfef9812fc1``: every ``root.currency`` made ``root.node.currency``),
  unless that receiver is ``self`` or ``cls``: a class may keep the old attribute delegating
  (sunpy ``fa70048bd2ab``: ``self.plot_settings`` -> ``self.plotter.plot_settings``, the humans
  kept a use of the old one).
- :func:`call_shape_retired`: a callee that base calls at least three times, that one side still
  calls (twice or more) but never with an argument shape base used (how many positional
  arguments; the kinds where one is a list, tuple or dict display), while the other side adds
  calls of a shape base used and the result keeps one (black ``30847e315d37``: theirs made every
  ``read_data(name)`` a ``read_data(subdir, name)``, ours added a one-argument call). Where only
  the count changed, base's first arguments must have moved to a later place: an argument
  appended may be optional.
- :func:`string_retired`: a string constant base uses at least twice, that one side uses no
  more, having rewritten the lines in place, while the other side adds uses of it and the result
  keeps them (pip ``110a26f0edf0``: theirs made the backend write ``{name}-config.json``, ours
  added tests reading ``"config.json"``).
- :func:`keyword_retired`: a keyword that base passes to one callee at least three times, that
  one side passes no more while it passes a keyword of a new name about as often, while the
  other side adds calls with the old one (luigi ``9d0b84da438b``: ours made every
  ``add_task(worker=...)`` and ``get_work(worker=...)`` ``worker_id=``, theirs added 36 calls
  with ``worker=``).
- :func:`doc_line_retired`: the same for a docstring line, a doctest's expected output above all
  (sympy ``9a476c49a542``: theirs made every ``EmptySet()`` output ``EmptySet``, the singleton's
  new repr; ours added a docstring whose doctest expects ``EmptySet()``).
- :func:`~fleet.merge._module_prefix.prefix_retired`: a module path prefix one side renamed in
  every import while the other adds an import under the old one (wagtail ``340226b340c0``), or
  made implicit relative imports explicit while the other adds one (PyGithub ``f9c4303c53b3``);
  :mod:`fleet.merge._exports`: an ``__all__`` one side wrote, missing the other's new imports.
- :func:`~fleet.merge._source_moved.source_retired`: a name imported from a module the other
  side moved its imports away from (fastapi ``bbcc7cafa6b5``, poetry ``56564f4694f2``).
- :func:`~fleet.merge._ordering.used_before_bound`: a statement placed above the definition it
  needs at import time, one side having moved that definition down (mne-python ``e6f9faf42f47``).
- :mod:`fleet.merge._retired_names`: a fixture one side renamed in every test, a class member one
  side removed, while the other side adds uses (pipenv, saleor).

They read the whole texts (what ``_reduce`` set aside included): a use left in a member nobody
changed is a use.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections import Counter
from collections.abc import Callable

from fleet.merge import _parsed
from fleet.merge._exports import export_missed
from fleet.merge._module_prefix import implicit_relative_retired, prefix_retired
from fleet.merge._ordering import used_before_bound
from fleet.merge._retired_names import fixture_retired, member_removed
from fleet.merge._source_moved import source_retired
from fleet.merge._stdlib_reads import module_names, never_there, stdlib_names
from fleet.merge._unused_import import import_left_unused

__all__ = [
    "access_retired",
    "call_shape_retired",
    "doc_line_retired",
    "keyword_retired",
    "retired_spelling",
    "string_retired",
]

_TOKEN = re.compile(r"\w+|\S")
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def _rewritten(base: str, side: str, key: str) -> tuple[int, int, int]:
    """(base's occurrences of ``key`` that ``side`` rewrote in place, that it deleted whole, that
    sit in runs whose new lines still hold ``key``'s last token): each changed run of base lines
    holding it, diffed token by token against the lines that replaced it; an occurrence some of
    whose tokens stay or are replaced is rewritten (``result.data`` -> ``result``), one whose
    tokens are all deleted is dropped."""
    lines_b, lines_s = base.splitlines(), side.splitlines()
    wanted = _TOKEN.findall(key)
    kept = dropped = rerouted = 0
    matcher = difflib.SequenceMatcher(None, lines_b, lines_s, autojunk=False)
    for op, b1, b2, s1, s2 in matcher.get_opcodes():
        if op == "equal":
            continue
        tokens_b = _TOKEN.findall("\n".join(lines_b[b1:b2]))
        starts = [
            i
            for i in range(len(tokens_b) - len(wanted) + 1)
            if tokens_b[i : i + len(wanted)] == wanted
        ]
        if not starts:
            continue
        fate = ["delete"] * len(tokens_b)
        tokens_s = _TOKEN.findall("\n".join(lines_s[s1:s2]))
        if tokens_s:
            inner = difflib.SequenceMatcher(None, tokens_b, tokens_s, autojunk=False)
            for kind, a1, a2, _, _ in inner.get_opcodes():
                fate[a1:a2] = [kind] * (a2 - a1)
        for start in starts:
            if all(f == "delete" for f in fate[start : start + len(wanted)]):
                dropped += 1
            else:
                kept += 1
        if wanted[-1] in tokens_s:
            rerouted += len(starts)
    return kept, dropped, rerouted


def _reads(tree: ast.Module) -> Counter[str]:
    found = _parsed.nodes(tree)
    return Counter(
        dotted
        for node in _parsed.of(found, ast.Attribute)
        if isinstance(node.ctx, ast.Load) and (dotted := _parsed.dotted(node)) is not None
    )


def _calls(text: str, key: str) -> int:
    """How many times ``text`` calls ``key`` itself (``api.schema(``, not ``x.api.schema(``)."""
    return len(re.findall(rf"(?<![\w.]){re.escape(key)}\s*\(", text))


def _line_for_line(base: str, side: str, key: str) -> bool:
    """Whether each run of base lines calling ``key`` that ``side`` changed was replaced by as
    many lines (a call rewritten in place, not a body put in its place)."""
    lines_b, lines_s = base.splitlines(), side.splitlines()
    call = re.compile(rf"(?<![\w.]){re.escape(key)}\s*\(")
    matcher = difflib.SequenceMatcher(None, lines_b, lines_s, autojunk=False)
    return all(
        b2 - b1 == s2 - s1
        for op, b1, b2, s1, s2 in matcher.get_opcodes()
        if op != "equal" and any(call.search(line) for line in lines_b[b1:b2])
    )


def access_retired(texts: list[str], trees: list[ast.Module], least: int = 2) -> str | None:
    """``texts`` and ``trees``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_reads(tree) for tree in trees)
    stdlib = stdlib_names(trees[0])
    modules = module_names(trees[0])
    for key, count in base.items():
        if not merged[key]:
            continue
        # Base's one use rewritten by one side, while the other adds two or more: the only
        # call of a method that side renamed (Flexget ``ed2ecf332266``: theirs made the file's
        # one ``api.schema(...)`` ``api.schema_model(...)``, deleting ``schema``; ours added two).
        fewest = least if count >= least else 1
        module = stdlib.get(key.split(".")[0])
        never = module is not None and never_there(module, key)
        if module is not None and not never:
            continue
        head, _, last = key.rpartition(".")
        twins = {head + "." + _CAMEL.sub(r"_\1", last).lower(), head + "." + last.lstrip("_")}
        twins.discard(key)
        for gone, other, text, added in ((ours, theirs, texts[1], texts[2]),
                                         (theirs, ours, texts[2], texts[1])):
            if gone[key] or other[key] <= count or any(gone[twin] for twin in twins):
                continue
            if count < least and (head.split(".")[0] in modules or _calls(texts[0], key) != count
                                  or _calls(added, key) < count + 2
                                  or not _line_for_line(texts[0], text, key)):
                continue  # a module's function, a prefix of longer reads (``np.testing``), a
                # call replaced by other code (pyglet ``4dba2daf861d``: one ``set_region`` inlined)
            kept, dropped, rerouted = _rewritten(texts[0], text, key)
            deeper = 0 if head.split(".")[0] in ("self", "cls") else len(  # self may delegate
                re.findall(rf"\b{re.escape(head)}(?:\.\w+)+\.{last}\b", text)
            )
            if rerouted * 2 > kept + dropped and not never and deeper * 2 < kept:
                continue  # the same attribute through another receiver: the old path may work
            if kept >= fewest and kept * 2 >= count and dropped * 4 <= kept:
                return f"one side rewrote every {key}; the other adds uses of it"
    return None


def _kind(arg: ast.expr) -> str:
    if isinstance(arg, ast.List | ast.ListComp):
        return "list"
    if isinstance(arg, ast.Tuple):
        return "tuple"
    if isinstance(arg, ast.Dict | ast.DictComp):
        return "dict"
    if isinstance(arg, ast.Constant):
        return type(arg.value).__name__
    return "str" if isinstance(arg, ast.JoinedStr) else "x"


def _shape(call: ast.Call) -> str:
    """How many positional arguments; their kinds too when one is a display (a string constant
    and a name are often the same call)."""
    kinds = [_kind(arg) for arg in call.args]
    shown = any(kind in ("list", "tuple", "dict") for kind in kinds)
    return f"{len(call.args)}" + (":" + ",".join(kinds) if shown else "")


def _call_shapes(tree: ast.Module) -> dict[str, Counter[str]]:
    """Each callee (a name or dotted name) -> how often each argument shape is used; calls that
    unpack ``*``/``**`` are left out."""
    out: dict[str, Counter[str]] = {}
    for call in _parsed.of(_parsed.nodes(tree), ast.Call):
        callee = _parsed.dotted(call.func)
        if callee is None or any(isinstance(a, ast.Starred) for a in call.args):
            continue
        if any(k.arg is None for k in call.keywords):
            continue
        out.setdefault(callee, Counter())[_shape(call)] += 1
    return out


def _argument_texts(tree: ast.Module, callee: str) -> tuple[set[str], set[str]]:
    """(the texts of first positional arguments, of later ones) in calls of ``callee``."""
    first: set[str] = set()
    later: set[str] = set()
    for call in _parsed.of(_parsed.nodes(tree), ast.Call):
        if _parsed.dotted(call.func) == callee:
            for index, arg in enumerate(call.args):
                (first if index == 0 else later).add(ast.unparse(arg))
    return first, later


def call_shape_retired(trees: list[ast.Module], least: int = 3) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_call_shapes(tree) for tree in trees)
    for callee, shapes in base.items():
        if sum(shapes.values()) < least:
            continue
        for side, other in ((ours, theirs), (theirs, ours)):
            now = side.get(callee, Counter())
            if sum(now.values()) < 2 or set(now) & set(shapes):
                continue
            added = sum(other.get(callee, Counter())[s] for s in shapes) - sum(shapes.values())
            kept = merged.get(callee, Counter())
            if added <= 0 or not any(kept[s] for s in shapes):
                continue
            if not any(":" in shape for shape in (*shapes, *now)):
                # Only counts changed: base's first arguments must have moved to a later place
                # (``read_data("x")`` -> ``read_data("sub", "x")``), not an argument appended
                # (aiohttp ``a60ea9a8dd1b``: ``StreamReader(p)`` -> ``StreamReader(p, limit)``).
                first, _ = _argument_texts(trees[0], callee)
                side_tree = trees[1] if side is ours else trees[2]
                side_first, side_later = _argument_texts(side_tree, callee)
                if len(first & side_later) < 2 or len(first & side_first) * 2 > len(first):
                    continue
            return f"one side changed every call of {callee}; the other adds calls the old way"
    return None


def _strings(tree: ast.Module) -> Counter[str]:
    """Each string constant (4 to 80 characters, one line) but docstrings and other bare
    expressions: how often."""
    found = _parsed.nodes(tree)
    bare = {id(node.value) for node in _parsed.of(found, ast.Expr)}
    return Counter(
        node.value
        for node in _parsed.of(found, ast.Constant)
        if isinstance(node.value, str)
        and id(node) not in bare
        and 4 <= len(node.value) <= 80
        and "\n" not in node.value
    )


def _retired(
    texts: list[str],
    counts: list[Counter[str]],
    wanted: Callable[[str, int], bool],
    least: int = 2,
) -> str | None:
    """A text (a string's value, a docstring line) of ``counts`` (base, ours, theirs, result)
    that base has as ``wanted`` asks, that one side no longer has, having rewritten ``least``
    or more of base's lines holding it in place (at most one in four dropped whole), while the
    other side has it more often than base and the result keeps it."""
    base, ours, theirs, merged = counts
    for value, count in base.items():
        if not merged[value] or not wanted(value, count):
            continue
        for gone, other, text in ((ours, theirs, texts[1]), (theirs, ours, texts[2])):
            if gone[value] or other[value] <= count:
                continue
            kept, dropped, _ = _rewritten(texts[0], text, value)
            if kept >= least and dropped * 4 <= kept:
                return value
    return None


def string_retired(texts: list[str], trees: list[ast.Module], least: int = 2) -> str | None:
    """``texts`` and ``trees``: base, ours, theirs, result (see the module docstring)."""
    counts = [_strings(tree) for tree in trees]
    value = _retired(
        texts, counts, lambda v, count: count >= least and re.search(r"\w{3}", v) is not None
    )
    if value is None:
        return None
    return f"one side rewrote every use of {value!r}; the other adds uses of it"


def _doc_lines(tree: ast.Module) -> Counter[str]:
    """Each docstring line (stripped, 3 characters or more, not a ``>>>`` input; a doctest's
    expected output is one): how often."""
    found = _parsed.nodes(tree)
    owners: list[ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef] = [tree]
    owners += _parsed.of(found, ast.FunctionDef) + _parsed.of(found, ast.AsyncFunctionDef)
    owners += _parsed.of(found, ast.ClassDef)
    lines: Counter[str] = Counter()
    for owner in owners:
        doc = ast.get_docstring(owner, clean=False)
        for line in doc.splitlines() if doc else ():
            line = line.strip()
            if len(line) >= 3 and not line.startswith(">>>") and re.search(r"\w", line):
                lines[line] += 1
    return lines


def doc_line_retired(texts: list[str], trees: list[ast.Module]) -> str | None:
    """``texts`` and ``trees``: base, ours, theirs, result (see the module docstring)."""
    line = _retired(texts, [_doc_lines(tree) for tree in trees], lambda _, count: True)
    if line is None:
        return None
    return f"one side rewrote every docstring line {line[:60]!r}; the other adds it"


def _keywords(tree: ast.Module) -> Counter[tuple[str, str]]:
    """(callee, keyword): how often; the callee a name, or a method's name."""
    passed: Counter[tuple[str, str]] = Counter()
    for call in _parsed.of(_parsed.nodes(tree), ast.Call):
        func = call.func
        callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if callee is not None:
            passed.update((callee, k.arg) for k in call.keywords if k.arg is not None)
    return passed


def keyword_retired(trees: list[ast.Module], least: int = 3) -> str | None:
    """``trees``: base, ours, theirs, result (see the module docstring)."""
    base, ours, theirs, merged = (_keywords(tree) for tree in trees)
    for (callee, keyword), count in base.items():
        if count < least or not merged[(callee, keyword)]:
            continue
        for gone, other in ((ours, theirs), (theirs, ours)):
            if gone[(callee, keyword)] or other[(callee, keyword)] <= count:
                continue
            new = [n for (c, k), n in gone.items() if c == callee and (c, k) not in base]
            if new and max(new) * 2 >= count:  # passed under a new name about as often
                return (
                    f"one side renamed the keyword {keyword}= of every {callee}() call; the "
                    "other adds calls with it"
                )
    return None


def retired_spelling(base: str, ours: str, theirs: str, merged: str) -> str | None:
    """Why the clean result ``merged`` of the whole texts keeps an old spelling one side retired
    (see the module docstring), or None. Texts that do not parse: None (other checks see them)."""
    texts = [base, ours, theirs, merged]
    try:
        trees = [_parsed.parse(text) for text in texts]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return (
        access_retired(texts, trees)
        or call_shape_retired(trees)
        or string_retired(texts, trees)
        or doc_line_retired(texts, trees)
        or keyword_retired(trees)
        or prefix_retired(texts, trees)
        or implicit_relative_retired(trees)
        or import_left_unused(trees)
        or used_before_bound(trees)
        or fixture_retired(trees)
        or member_removed(trees)
        or source_retired(trees)
        or export_missed(texts, trees)
    )
