"""The structural stage's speed-ups give what the code they replace gave.

``_pykeys.render`` against libcst's own ``code_for_node``, and ``_pykeys.code`` of a statement
nested in one rendered before (read from that rendering's tokens) against rendering it alone;
``_bounds.depth`` against the
generic walk it replaced; ``_parsed.parse`` handing out one tree per text only inside
``parsing_once``; ``_parsed.nodes`` against ``ast.walk``; the collector off during a file's
structural stages and as it was after them. (The corpus and history fixtures pin
the merge's results themselves.)
"""

from __future__ import annotations

import ast
import gc
import sys
from pathlib import Path
from types import FrameType

import libcst as cst
import pytest

from fleet.merge._bounds import MAX_DEPTH, depth
from fleet.merge._line import line_merge
from fleet.merge._merge3 import after_line_stage
from fleet.merge._parsed import depth_of, nodes, parse, parsing_once
from fleet.merge._pykeys import clear_code_cache, code, module_code, render, render_in

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "merge"
CASES = sorted(p for p in FIXTURES.iterdir() if (p / "base.py").exists())


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


TEXTS = [
    text
    for case in CASES
    for text in ((case / f"{part}.py").read_text() for part in ("base", "ours", "theirs"))
    if _parses(text)
]


def _walk_depth(tree: ast.AST, limit: int) -> int:
    """The depth as ``ast.iter_child_nodes`` sees it, stopping past ``limit`` (the old code)."""
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, level = stack.pop()
        if level > deepest:
            deepest = level
            if deepest > limit:
                return deepest
        stack.extend((child, level + 1) for child in ast.iter_child_nodes(node))
    return deepest


def test_render_is_code_for_node() -> None:
    renderer = cst.Module(body=[])
    two_spaces = "class A:\n  def f(self):\n    return 1  # one\n\n\n  x = [\n    1,\n  ]\n"
    odd = [
        two_spaces,
        "if x:\r\n    y = 1\r\n",
        "x = 1",
        "",
        "\n",
        "# only\n",
        "def f():\n    pass\n# end",
    ]
    for text in [*TEXTS, *odd]:
        module = cst.parse_module(text)
        assert module_code(module) == module.code == text
        for node in module.body:
            assert render(node) == renderer.code_for_node(node)
            assert render_in(module, node) == module.code_for_node(node)


class _Statements(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.BaseStatement] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.BaseStatement):
            self.found.append(node)
        return True


NESTED = [
    # elif chains (an ``If`` rendered ``elif`` inside another), else blocks, decorators
    "def f(x):\n    if x:\n        return 1\n    elif x > 2:\n        return 2\n"
    "    elif x > 3:  # three\n        pass\n    else:\n        return 4\n",
    # tabs, two spaces and four in one file; comments and blank lines above nested statements
    "class A:\n\tdef f(self):\n\t\tif self:\n\t\t\t# why\n\n\t\t\treturn 1\n\n"
    "\t@property\n\tdef g(self):\n\t  while True:\n\t    break\n",
    # a string spanning lines inside nested blocks keeps its own lines as they are
    'class B:\n    def f(self):\n        for x in y:\n            s = """a\n  b\nc"""\n'
    "            try:\n                pass\n            except E:\n                raise\n"
    "            finally:\n                del s\n",
    "with a:\n    with b: c = 1; d = 2\n    match x:\n        case 1:\n            y = 2\n",
]


def test_a_nested_statement_reads_as_rendered_alone() -> None:
    for text in [*TEXTS, *NESTED]:
        module = cst.parse_module(text)
        visitor = _Statements()
        module.visit(visitor)
        clear_code_cache()
        try:
            for node in module.body:  # the top-level statements rendered first...
                assert code(node) == render(node)
            for node in visitor.found:  # ... then what they hold, read from their tokens
                assert code(node) == render(node), (text, render(node))
        finally:
            clear_code_cache()


def test_a_module_rendered_first_leaves_its_statements_to_render_alone() -> None:
    # a module without a final newline drops its last token after its statements were noted
    for text in ("def f():\n    if x:\n        pass", "x = 1\nclass A:\n    y = 2"):
        module = cst.parse_module(text)
        visitor = _Statements()
        module.visit(visitor)
        clear_code_cache()
        try:
            assert code(module) == text
            for node in visitor.found:
                assert code(node) == render(node)
        finally:
            clear_code_cache()


@pytest.mark.parametrize("limit", [1, 3, 10, MAX_DEPTH, 10_000])
def test_depth_is_the_walk_depth(limit: int) -> None:
    texts = [*TEXTS, "", "x = " + "(" * 150 + "1" + ")" * 150 + "\n", "x = " + "+".join("a" * 900)]
    for text in texts:
        tree = ast.parse(text)
        assert depth(tree, limit) == _walk_depth(tree, limit)


def test_one_tree_per_text_only_inside_parsing_once() -> None:
    text = "def f(x):\n    return x\n"
    assert parse(text) is not parse(text)
    with parsing_once():
        tree = parse(text)
        assert parse("".join([text])) is tree
        with parsing_once():
            assert parse(text) is tree
        assert parse(text) is tree
        with pytest.raises(SyntaxError):
            parse("def (")
    assert parse(text) is not tree


@pytest.mark.parametrize("limit", [5, MAX_DEPTH])
def test_nodes_are_ast_walk_by_type_and_depth_of_keeps_them(limit: int) -> None:
    for text in TEXTS:
        expected: dict[type, list[ast.AST]] = {}
        with parsing_once():
            tree = parse(text)
            for node in ast.walk(tree):
                expected.setdefault(type(node), []).append(node)
            assert depth_of(text, tree, limit) == depth(tree, limit)
            found = nodes(tree)
            assert found == expected  # the same node objects, in ast.walk's order
            if depth(tree, limit) <= limit:
                assert nodes(tree) is found  # kept from the walk depth_of made
        assert nodes(tree) == expected and nodes(tree) is not found  # outside: walked again


@pytest.mark.parametrize("was_on", [True, False])
def test_no_collection_during_the_structural_stages(was_on: bool) -> None:
    case = FIXTURES / "both_add_methods_same_place"
    base, ours, theirs = ((case / f"{part}.py").read_text() for part in ("base", "ours", "theirs"))
    line = line_merge(base, ours, theirs)
    after_line_stage(base, ours, theirs, "m.py", line)  # its imports (libcst) made before
    collections: list[str] = []  # the fleet functions running when a collection started

    def seen(phase: str, info: dict[str, int]) -> None:
        frame: FrameType | None = sys._getframe(1)
        names = []
        while frame is not None:
            if "/fleet/merge/" in frame.f_code.co_filename:
                names.append(frame.f_code.co_name)
            frame = frame.f_back
        if phase == "start":
            collections.append(" < ".join(names))

    threshold = gc.get_threshold()
    gc.callbacks.append(seen)
    gc.set_threshold(1)  # with the collector on, the first allocation collects
    (gc.enable if was_on else gc.disable)()
    try:
        result = after_line_stage(base, ours, theirs, "m.py", line)
        assert gc.isenabled() is was_on
        during = [names for names in collections if "structural_merge" in names]
        assert during == []
        if was_on:  # (it does collect in the stage's other steps, before and after)
            assert collections and any("after_line_stage" in names for names in collections)
    finally:
        gc.enable()
        gc.set_threshold(*threshold)
        gc.callbacks.remove(seen)
    assert result.stage == "structural", result
