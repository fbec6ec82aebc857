"""Rendering libcst nodes to text, each statement once per merge.

Rendering is one of the structural stage's large costs (11% of its samples under ``py-spy`` on
the twenty-seventh set's 933 git-conflicted cases, 7 December, before this module; a quarter
under cProfile). The stage renders a top-level symbol to compare the sides,
then, where they differ, each of its members, then each statement of a member's body: a
statement three levels down was rendered three times. :func:`render_recorded` renders a
statement once and notes where each statement nested in it begins and ends among the tokens;
the text a nested statement has alone is then those tokens without the indentation of the
blocks around it, read when it is first asked for (:meth:`Recorded.text`).

That text is exactly what rendering the statement alone gives: libcst renders a statement in a
block (``IndentedBlock``, ``Module``) without arguments, and what surrounds it shows only in
the indentation tokens the blocks push (``CodegenState.indent_tokens``), which every line of it
starts with. The one statement rendered with an argument is an ``elif``: an ``If`` node in an
``If``'s ``orelse``, rendered ``elif``; such nodes are not noted.
"""

from __future__ import annotations

import inspect
from bisect import bisect_left

import libcst as cst
from libcst._nodes.internal import CodegenState

__all__ = ["Recorded", "render", "render_recorded"]


class _NoPosition:
    """What ``record_syntactic_position`` returns while rendering: a context that does nothing."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_NO_POSITION = _NoPosition()


class _State(CodegenState):
    """libcst's own code generation state, whose ``record_syntactic_position`` is a generator
    context manager that does nothing unless positions are computed: entered for nearly every
    node, it was two fifths of the time spent rendering. The same tokens, in a cheaper way."""

    __slots__ = ()

    def record_syntactic_position(self, *args: object, **kwargs: object) -> _NoPosition:  # type: ignore[override]
        return _NO_POSITION


def _concrete(base: type) -> frozenset[type]:
    found: set[type] = set()
    todo: list[type] = [base]
    while todo:
        sub: type
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if not inspect.isabstract(sub):
                found.add(sub)
    return frozenset(found)


# SimpleStatementLine, If, For, While, Try, TryStar, With, FunctionDef, ClassDef, Match: checked
# by exact type, since ``isinstance`` against libcst's abstract classes is slow on every node.
_STATEMENTS = _concrete(cst.BaseStatement)


class Recorded:
    """The tokens of one rendering and, for each statement nested in it, its span: the text that
    statement has alone, without rendering it again."""

    __slots__ = ("_marks", "_tokens", "spans")

    def __init__(self, tokens: list[str], marks: list[int],
                 spans: dict[int, tuple[cst.CSTNode, int, int, int]]) -> None:
        self._tokens = tokens
        self._marks = marks  # where each line's indentation tokens begin, ascending
        # id(node) -> (node, first token, end token, blocks around it), the root left out
        self.spans = spans

    def text(self, start: int, end: int, depth: int) -> str:
        """The tokens ``start:end`` without the ``depth`` outer indentation tokens of each of
        their lines."""
        tokens = self._tokens
        if depth == 0:
            return "".join(tokens[start:end])
        marks = self._marks
        parts: list[str] = []
        position = start
        index = bisect_left(marks, start)
        while index < len(marks) and marks[index] < end:
            mark = marks[index]
            parts.extend(tokens[position:mark])
            position = mark + depth
            index += 1
        parts.extend(tokens[position:end])
        return "".join(parts)


class _Recording(_State):
    """:class:`_State` that notes each nested statement's span among its tokens."""

    __slots__ = ("elifs", "marks", "open", "spans")

    def __init__(self, default_indent: str, default_newline: str) -> None:
        super().__init__(default_indent=default_indent, default_newline=default_newline)
        self.marks: list[int] = []
        self.open: list[tuple[cst.CSTNode, int, int] | None] = []
        self.spans: dict[int, tuple[cst.CSTNode, int, int, int]] = {}
        self.elifs: set[int] = set()

    def add_indent_tokens(self) -> None:
        self.marks.append(len(self.tokens))
        self.tokens.extend(self.indent_tokens)

    def before_codegen(self, node: cst.CSTNode) -> None:
        kind = type(node)
        if kind not in _STATEMENTS:
            return
        if kind is cst.If:
            orelse = node.orelse  # type: ignore[attr-defined]
            if type(orelse) is cst.If:
                self.elifs.add(id(orelse))  # rendered ``elif``: not its text alone
        if id(node) in self.elifs:
            self.open.append(None)
        else:
            self.open.append((node, len(self.tokens), len(self.indent_tokens)))

    def after_codegen(self, node: cst.CSTNode) -> None:
        if type(node) not in _STATEMENTS:
            return
        entry = self.open.pop()
        if entry is not None:
            self.spans[id(node)] = (entry[0], entry[1], len(self.tokens), entry[2])


def render(node: cst.CSTNode, indent: str = "    ", newline: str = "\n") -> str:
    """``cst.Module(body=[], default_indent=indent, default_newline=newline).code_for_node(node)``,
    the same text, faster (``_State``)."""
    state = _State(default_indent=indent, default_newline=newline)
    node._codegen(state)
    return "".join(state.tokens)


def render_recorded(node: cst.CSTNode) -> tuple[str, Recorded]:
    """:func:`render` of ``node`` with the defaults, and the spans of the statements in it (none
    for a module, which may drop its last token, a newline, after they were noted)."""
    state = _Recording("    ", "\n")
    node._codegen(state)
    if isinstance(node, cst.Module):
        state.spans.clear()
    state.spans.pop(id(node), None)
    return "".join(state.tokens), Recorded(state.tokens, state.marks, state.spans)
