"""Static test-integrity checks: a patch must not delete, skip, or weaken a test.

Compares every test (``test*`` functions and methods) of each test file the patch touches,
before and after: deleted tests, new skip/xfail markers or calls, fewer or weaker assertions
(``==`` loosened to ``in``/``>=``/truthiness, ``approx`` tolerances, ``assert True``), expected
values removed from assertions, and collection hooks or pytest options that deselect tests.
"""

from __future__ import annotations

import ast
import copy
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from fleet import pyast
from fleet.types import Verdict
from fleet.verify._patch import FilePatch, Trees, read
from fleet.verify.gates import is_test_path

__all__ = [
    "assert_strength",
    "collect_tests",
    "compare_tests",
    "early_exits",
    "gate_test_integrity",
    "holds_tests",
]

_SKIP = re.compile(
    r"(^|\.)(skip|skipif|skipIf|skipUnless|xfail|expectedFailure|skipTest|importorskip|SkipTest)$"
)
_STRONG_CALLS = re.compile(
    r"^(assert(Equals?|Is|IsNone|Raises\w*|Warns\w*|ListEqual|DictEqual|TupleEqual|SetEqual|"
    r"CountEqual|SequenceEqual|MultiLineEqual|AlmostEquals?|NotAlmostEquals?|NotIn|IsNot|NotEquals?)"
    r"|failUnlessEqual|failIfEqual|failUnlessRaises|failUnlessAlmostEqual|failIfAlmostEqual"
    r"|assert_called_once_with|assert_called_with|assert_any_call|assert_has_calls"
    r"|assert_not_called|assert_awaited_once_with)$"
)
_HOOKS = {"pytest_collection_modifyitems", "pytest_ignore_collect", "pytest_runtest_setup",
          "pytest_runtest_call", "pytest_deselected", "pytest_collection"}
_CONFIG_FILES = ("pytest.ini", "setup.cfg", "tox.ini", "pyproject.toml")
_CONFIG_WEAKENERS = re.compile(
    r"(--deselect|--ignore|\s-k\s|-p\s+no:|--co\b|xfail_strict\s*=\s*false)"
)


def _is_approx(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and pyast.call_name(node.func) == "approx"


def assert_strength(node: ast.AST) -> int:
    """3 = exact (``==``, ``is``, ``assertEqual``, ``raises``), 2 = partial (``in``, ``<``,
    ``approx``, ``!=``), 1 = truthiness, 0 = constant (always true)."""
    if isinstance(node, ast.Assert):
        return _expr_strength(node.test)
    if isinstance(node, ast.Call):
        name = pyast.call_name(node.func)
        if node.args and all(isinstance(a, ast.Constant) for a in node.args) and name in {
            "assertTrue", "assert_", "failUnless", "assertFalse", "failIf"
        }:
            return 0
        if name in {"raises", "warns"}:
            return 3 if any(k.arg == "match" for k in node.keywords) else 2
        if _STRONG_CALLS.match(name):
            return 3
        if name.startswith(("assert", "fail")):
            return 2 if name not in {"assertTrue", "assertFalse", "assert_", "failUnless",
                                     "failIf", "assertIsNotNone", "assert_called"} else 1
    return 1


def _expr_strength(test: ast.expr) -> int:
    if isinstance(test, ast.Constant):
        return 0
    if isinstance(test, ast.BoolOp):
        return 1 if isinstance(test.op, ast.Or) else min(_expr_strength(v) for v in test.values)
    if isinstance(test, ast.Compare):
        if any(_is_approx(c) for c in [test.left, *test.comparators]):
            return 2
        if ast.dump(test.left) == ast.dump(test.comparators[0]):
            return 0  # x == x
        op = test.ops[0]
        if isinstance(op, ast.IsNot) and isinstance(test.comparators[0], ast.Constant):
            return 1
        return 3 if isinstance(op, ast.Eq | ast.Is) else 2
    return 1


def _assertions(func: ast.AST) -> list[ast.AST]:
    out: list[ast.AST] = []
    for node in ast.walk(func):
        if isinstance(node, ast.Assert):
            out.append(node)
        elif isinstance(node, ast.Call):
            name = pyast.call_name(node.func)
            if name.startswith(("assert", "fail")) or name in {"raises", "warns"}:
                out.append(node)
    return out


def _constants(nodes: Iterable[ast.AST]) -> Counter[str]:
    return Counter(
        repr(c.value)
        for n in nodes
        for c in ast.walk(n)
        if isinstance(c, ast.Constant) and c.value is not None and not isinstance(c.value, bool)
    )


# unittest's deprecated method aliases -> the method: renaming one is not a change of what an
# assertion checks, so shapes compare under the current name (else ``assertEquals(x, 2)`` ->
# ``assertEqual(x, 2)`` next to an ``assertEqual(x, 1)`` looks like swapped expected values).
_ALIASES = {
    "failUnless": "assertTrue", "assert_": "assertTrue", "failIf": "assertFalse",
    "failUnlessEqual": "assertEqual", "assertEquals": "assertEqual",
    "failIfEqual": "assertNotEqual", "assertNotEquals": "assertNotEqual",
    "failUnlessAlmostEqual": "assertAlmostEqual", "assertAlmostEquals": "assertAlmostEqual",
    "failIfAlmostEqual": "assertNotAlmostEqual", "assertNotAlmostEquals": "assertNotAlmostEqual",
    "failUnlessRaises": "assertRaises", "assertRegexpMatches": "assertRegex",
    "assertNotRegexpMatches": "assertNotRegex", "assertRaisesRegexp": "assertRaisesRegex",
}


class _Mask(ast.NodeTransformer):
    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.Constant(value="?")

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if node.attr in _ALIASES:
            node.attr = _ALIASES[node.attr]
        return node


def _shapes(nodes: Iterable[ast.AST]) -> dict[str, Counter[str]]:
    """Assertions by shape (constants masked) -> the constants each one compares, in order."""
    out: dict[str, Counter[str]] = {}
    for node in nodes:
        shape = ast.dump(_Mask().visit(copy.deepcopy(node)), include_attributes=False)
        values = [repr(c.value) for c in ast.walk(node) if isinstance(c, ast.Constant)]
        out.setdefault(shape, Counter())[" ".join(values)] += 1
    return out


def _skips(func: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    count = sum(1 for d in func.decorator_list for n in ast.walk(d) if _SKIP.search(_dotted(n)))
    if not isinstance(func, ast.ClassDef):
        count += sum(
            1 for n in ast.walk(func)
            if isinstance(n, ast.Call) and _SKIP.search(_dotted(n.func))
        )
    return count


def _own_nodes(func: ast.AST) -> Iterable[ast.AST]:
    """The nodes of ``func``'s body, not those of functions, classes or lambdas inside it."""
    todo = list(ast.iter_child_nodes(func))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
                          | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))


def _leaves(node: ast.AST) -> bool:
    """``node`` ends the test early: a ``return``, or a skip (``raise SkipTest``, ``skip()``)."""
    if isinstance(node, ast.Return):
        return True
    target = node.exc if isinstance(node, ast.Raise) else getattr(node, "value", None)
    if isinstance(target, ast.Call):
        target = target.func
    return target is not None and bool(_SKIP.search(_dotted(target)))


def early_exits(func: ast.AST) -> tuple[int, set[str]]:
    """How ``func`` can end before its assertions: the number of its ``return`` statements, and
    the conditions under which it returns or skips (an ``if`` whose body does), as source."""
    returns = sum(isinstance(n, ast.Return) for n in _own_nodes(func))
    conditions = {f"if {ast.unparse(n.test)}" for n in _own_nodes(func)
                  if isinstance(n, ast.If) and any(_leaves(b) for b in n.body)}
    conditions |= {ast.unparse(d) for d in getattr(func, "decorator_list", ())
                   if any(_SKIP.search(_dotted(x)) for x in ast.walk(d))}
    return returns, conditions


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def collect_tests(source: str) -> dict[str, tuple[ast.AST, int]]:
    """``qualname -> (function node, skips incl. class- and module-level markers)``."""
    tree = pyast.parse(source)
    module_skips = sum(
        1 for node in tree.body if isinstance(node, ast.Assign)
        for t in node.targets if _dotted(t) == "pytestmark"
        for n in ast.walk(node.value) if _SKIP.search(_dotted(n))
    )
    out: dict[str, tuple[ast.AST, int]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.startswith("test"):
                out[node.name] = (node, module_skips + _skips(node))
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                    item.name.startswith("test")
                ):
                    skips = module_skips + _skips(node) + _skips(item)
                    out[f"{node.name}.{item.name}"] = (item, skips)
    return out


def holds_tests(tree: Path, path: str, unsure: bool) -> bool:
    """``path`` in ``tree`` defines a test (:func:`collect_tests`); ``unsure`` when it cannot be
    read or parsed."""
    text = read(tree, path)
    if text is None:
        return unsure
    try:
        return bool(collect_tests(text))
    except (SyntaxError, ValueError, RecursionError):
        return unsure


def compare_tests(path: str, before: str, after: str) -> list[str]:
    """Every way ``after`` weakens the tests of ``before`` (empty when it does not)."""
    problems: list[str] = []
    try:
        old, new = collect_tests(before), collect_tests(after)
    except SyntaxError:
        return problems  # the parses gate names it
    for name, (old_fn, old_skips) in old.items():
        if name not in new:
            problems.append(f"{path}::{name} deleted")
            continue
        new_fn, new_skips = new[name]
        (old_returns, old_exits), (new_returns, new_exits) = (early_exits(old_fn),
                                                                 early_exits(new_fn))
        if new_skips > old_skips:
            problems.append(f"{path}::{name} is now skipped or xfailed")
        elif new_returns > old_returns or new_exits - old_exits:
            why = "; ".join(sorted(new_exits - old_exits)) or "a new return"
            problems.append(f"{path}::{name} can now end before its assertions ({why})")
        old_asserts, new_asserts = _assertions(old_fn), _assertions(new_fn)
        if len(new_asserts) < len(old_asserts):
            problems.append(
                f"{path}::{name} has fewer assertions ({len(old_asserts)} -> {len(new_asserts)})"
            )
        elif sum(map(assert_strength, new_asserts)) < sum(map(assert_strength, old_asserts)):
            problems.append(f"{path}::{name} has weaker assertions")
        lost = _constants(old_asserts) - _constants(new_asserts)
        old_shapes, new_shapes = _shapes(old_asserts), _shapes(new_asserts)
        reordered = any(
            shape in new_shapes and new_shapes[shape] != values
            for shape, values in old_shapes.items()
        )
        already = bool(problems) and problems[-1].startswith(f"{path}::{name} ")
        if reordered and not lost and not already:
            problems.append(f"{path}::{name} changed the expected values in its assertions")
        elif lost and not already:
            problems.append(
                f"{path}::{name} changed the expected values "
                f"{', '.join(sorted(lost))} in its assertions"
            )
    for name, (fn, skips) in new.items():
        if name in old:
            continue
        if skips:
            problems.append(f"{path}::{name} is a new test that is skipped")
        if any(assert_strength(a) == 0 for a in _assertions(fn)):
            problems.append(f"{path}::{name} asserts a constant")
    return problems


def _hooks(source: str) -> set[str]:
    try:
        tree = pyast.parse(source)
    except SyntaxError:
        return set()
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in _HOOKS}


def gate_test_integrity(trees: Trees, files: Iterable[FilePatch]) -> Verdict:
    """Reject a patch that deletes, skips or weakens a test, or deselects tests by config."""
    problems: list[str] = []
    checked = 0
    for fp in files:
        name = fp.path.rsplit("/", 1)[-1]
        if name in _CONFIG_FILES:
            for line, text in fp.added_text.items():
                if _CONFIG_WEAKENERS.search(f" {text} "):
                    problems.append(f"{fp.path}:{line} deselects tests: {text.strip()}")
            continue
        if not (fp.path.endswith(".py") and is_test_path(fp.path)):
            continue
        checked += 1
        before = read(trees.base, fp.old_path) or ""
        after = read(trees.patched, fp.new_path) or ""
        problems.extend(compare_tests(fp.path, before, after))
        if name == "conftest.py":
            for hook in sorted(_hooks(after) - _hooks(before)):
                problems.append(f"{fp.path} adds the collection hook {hook}")
    if problems:
        return Verdict("test_integrity", "reject", "; ".join(problems), {"problems": problems})
    return Verdict("test_integrity", "accept", f"{checked} test file(s): no test deleted, "
                   "skipped or weakened")
