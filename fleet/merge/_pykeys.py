"""Python node identities and comparisons for the structural stage (libcst)."""

from __future__ import annotations

import ast
import difflib
import io
import tokenize
from collections import Counter
from collections.abc import Sequence

import libcst as cst
from libcst.helpers import get_full_name_for_node

from fleet import pyast
from fleet.merge._render import Recorded, render, render_recorded
from fleet.merge.profile import KindRule, LanguageProfile

__all__ = [
    "Key",
    "clear_code_cache",
    "code",
    "formatting_only",
    "identity",
    "keyed",
    "kind_name",
    "leading_kept",
    "module_code",
    "normalized",
    "over_formatting",
    "render",
    "render_in",
    "rule_for",
    "same_change",
]

Key = tuple[str, ...]
# Rendering is a large cost of the structural stage; a merge renders each node once, and a statement
# nested in one already rendered not at all (``_render``: its span in that rendering). Entries
# keep their node alive, so an id cannot be reused while it is cached.
_CODE_CACHE: dict[int, tuple[cst.CSTNode, str]] = {}
_SPANS: dict[int, tuple[cst.CSTNode, Recorded, int, int, int]] = {}
_NORMALIZED: dict[int, tuple[cst.CSTNode, tuple[str, tuple[str, ...]] | None]] = {}


def render_in(module: cst.Module, node: cst.CSTNode) -> str:
    """``module.code_for_node(node)``, rendered as :func:`render` does."""
    return render(node, module.default_indent, module.default_newline)


def code(node: cst.CSTNode) -> str:
    """The node's source text, its leading comments and blank lines included, dedented."""
    key = id(node)
    entry = _CODE_CACHE.get(key)
    if entry is not None and entry[0] is node:
        return entry[1]
    span = _SPANS.get(key)
    if span is not None and span[0] is node:
        text = span[1].text(span[2], span[3], span[4])
    else:
        text, recorded = render_recorded(node)
        for inner, (nested, start, end, depth) in recorded.spans.items():
            if inner not in _CODE_CACHE:
                _SPANS[inner] = (nested, recorded, start, end, depth)
    _CODE_CACHE[key] = (node, text)
    return text


def module_code(module: cst.Module) -> str:
    """``module.code``. In a module with the defaults :func:`code` renders with (four spaces,
    ``\\n``) that ends in a newline, a top-level statement's tokens are the ones it has alone, so
    the text is its lines and statements joined, each statement's text :func:`code`'s (most of
    them already rendered to be compared while merging)."""
    if module.default_indent != "    " or module.default_newline != "\n":
        return render_in(module, module)
    if not module.has_trailing_newline:
        return render_in(module, module)  # the module drops its last token, a newline
    text = "".join(
        [render(line) for line in module.header]
        + [code(stmt) for stmt in module.body]
        + [render(line) for line in module.footer]
    )
    return text or "\n"  # nothing at all: libcst writes the newline alone


def clear_code_cache() -> None:
    """Forget rendered texts and shapes (called after each structural merge)."""
    _CODE_CACHE.clear()
    _SPANS.clear()
    _NORMALIZED.clear()


def kind_name(node: cst.CSTNode, first: bool = False) -> str:
    """The profile's name for the node: the libcst class, or of its only small statement."""
    if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1:
        inner = node.body[0]
        if (
            first
            and isinstance(inner, cst.Expr)
            and isinstance(inner.value, cst.SimpleString | cst.ConcatenatedString)
        ):
            return "Docstring"
        return type(inner).__name__
    return type(node).__name__


def rule_for(profile: LanguageProfile, node: cst.CSTNode, first: bool = False) -> KindRule | None:
    return profile.kinds.get(kind_name(node, first))


def _name(node: cst.CSTNode | None) -> str | None:
    if node is None:
        return None
    return get_full_name_for_node(node)


def identity(profile: LanguageProfile, node: cst.CSTNode, first: bool = False) -> Key | None:
    """Kind + qualified name of a node the profile knows, ``None`` for anonymous nodes."""
    rule = rule_for(profile, node, first)
    if rule is None:
        return None
    if isinstance(node, cst.FunctionDef | cst.ClassDef):
        return (rule.kind, node.name.value)
    assert isinstance(node, cst.SimpleStatementLine)
    inner = node.body[0]
    if isinstance(inner, cst.Import):
        names = [
            f"{_name(a.name)} as {_name(a.asname.name) if a.asname else ''}" for a in inner.names
        ]
        return (rule.kind, ",".join(names))
    if isinstance(inner, cst.ImportFrom):
        dots = "." * len(inner.relative)
        star = "*" if isinstance(inner.names, cst.ImportStar) else ""
        return (rule.kind, f"{dots}{_name(inner.module) or ''}{star}")
    if isinstance(inner, cst.Assign):
        if len(inner.targets) == 1 and isinstance(inner.targets[0].target, cst.Name):
            return (rule.kind, inner.targets[0].target.value)
        return None
    if isinstance(inner, cst.AnnAssign):
        if isinstance(inner.target, cst.Name):
            return (rule.kind, inner.target.value)
        return None
    if rule.kind == "docstring":
        return (rule.kind,)
    return None


def _duplicated(raw: list[list[tuple[Key | None, cst.BaseStatement]]]) -> set[Key]:
    duplicated: set[Key] = set()
    for body in raw:
        counts = Counter(key for key, _ in body if key is not None)
        duplicated.update(key for key, count in counts.items() if count > 1)
    return duplicated


def _from_names(key: Key | None, node: cst.BaseStatement, duplicated: set[Key]) -> Key | None:
    """A ``from`` import's key with the names it imports, if its module's key is duplicated."""
    if key is None or key[0] != "from" or key not in duplicated:
        return key
    assert isinstance(node, cst.SimpleStatementLine)
    inner = node.body[0]
    assert isinstance(inner, cst.ImportFrom)
    if isinstance(inner.names, cst.ImportStar):  # ``from m import *`` twice: stays anonymous
        return key
    names = sorted(
        f"{_name(a.name)} as {_name(a.asname.name) if a.asname else ''}" for a in inner.names
    )
    return (key[0], f"{key[1]} import {','.join(names)}")


def keyed(
    profile: LanguageProfile, versions: Sequence[Sequence[cst.BaseStatement]]
) -> list[list[tuple[Key, cst.BaseStatement]]]:
    """Each version's statements with their keys. A symbol key that occurs twice in any version
    (overloads, property setters, a redefinition) is unsure to match: all its occurrences become
    anonymous, except ``from`` imports of one module in several statements, which are told apart
    by the names they import first. Anonymous keys are ``("anon", text, occurrence)``."""
    raw = [
        [(identity(profile, node, first=index == 0), node) for index, node in enumerate(body)]
        for body in versions
    ]
    duplicated = _duplicated(raw)
    if any(
        key is not None and key[0] == "from" and key in duplicated
        for body in raw
        for key, _ in body
    ):
        # One module imported by several statements (``from typing import Any`` then ``from
        # typing import Cast``, one name per line): each is the names it imports.
        raw = [[(_from_names(key, node, duplicated), node) for key, node in body] for body in raw]
        duplicated = _duplicated(raw)
    result = []
    for body in raw:
        seen: Counter[str] = Counter()
        items: list[tuple[Key, cst.BaseStatement]] = []
        for key, node in body:
            if key is None or key in duplicated:
                text = code(node)
                seen[text] += 1
                key = ("anon", text, str(seen[text]))
            items.append((key, node))
        result.append(items)
    return result


def _comments(text: str) -> tuple[str, ...]:
    try:
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        return tuple(tok.string.strip() for tok in tokens if tok.type == tokenize.COMMENT)
    except (tokenize.TokenError, SyntaxError):
        return ("<untokenizable>", text)


def normalized(node: cst.CSTNode) -> tuple[str, tuple[str, ...]] | None:
    """The node up to formatting: its AST and its comments. Quotes, trailing commas, wrapping and
    blank lines vanish; a changed comment does not. ``None`` when it does not parse alone.
    Computed once per node while it is cached (a merge asks it of the base twice)."""
    entry = _NORMALIZED.get(id(node))
    if entry is not None and entry[0] is node:
        return entry[1]
    text = code(node)
    try:
        tree = pyast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        shape = None
    else:
        shape = ast.dump(tree), _comments(text)
    _NORMALIZED[id(node)] = (node, shape)
    return shape


def formatting_only(before: cst.CSTNode, after: cst.CSTNode) -> bool:
    """True when ``after`` differs from ``before`` in formatting alone (see :func:`normalized`)."""
    norm_before = normalized(before)
    return norm_before is not None and norm_before == normalized(after)


def leading_kept(
    taken: cst.BaseStatement, base: cst.BaseStatement, other: cst.BaseStatement
) -> cst.BaseStatement:
    """``taken``, the side whose edit wins over ``other``'s formatting-only one, with the blank
    and comment lines above it that ``other`` changed where ``taken`` kept base's: one side
    put a blank line between two import groups, the other reflowed the statement below it
    (django-cms ``59b7487e7fb8``), or one side's new import took the blank line above the
    statement the other reflowed (pydicom ``f57aa14e38e9``)."""

    def above(node: cst.BaseStatement) -> list[str] | None:
        lines = getattr(node, "leading_lines", None)
        return None if lines is None else [code(line) for line in lines]

    kept, before, changed = above(taken), above(base), above(other)
    if kept is None or changed is None or kept != before or changed == before:
        return taken
    return taken.with_changes(leading_lines=other.leading_lines)  # type: ignore[attr-defined]


def over_formatting(
    base: cst.BaseStatement, ours: cst.BaseStatement, theirs: cst.BaseStatement
) -> cst.BaseStatement | None:
    """One side's statement when the other side's edit is formatting alone
    (:func:`formatting_only`), with the lines above it as :func:`leading_kept` says; else None."""
    if formatting_only(base, ours):
        return leading_kept(theirs, base, ours)
    if formatting_only(base, theirs):
        return leading_kept(ours, base, theirs)
    return None


def _changed_lines(base: list[cst.BaseStatement], side: list[cst.BaseStatement]) -> int:
    before = "".join(code(node) for node in base).splitlines()
    after = "".join(code(node) for node in side).splitlines()
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    return len(after) - sum(block.size for block in matcher.get_matching_blocks())


def same_change(
    base: list[cst.BaseStatement], ours: list[cst.BaseStatement], theirs: list[cst.BaseStatement]
) -> list[cst.BaseStatement] | None:
    """Both sides changed these statements into the same program, told apart by formatting only
    (quotes, wrapping, trailing commas; comments equal): one change, made twice. The side with
    more changed lines is the merge, its formatting being the later edit (black
    ``8b427c789db8``: ``str(self.filename)`` written by both, one also rewrapping the call);
    ours on a tie. None when they differ as programs or one does not parse alone."""
    if len(ours) != len(theirs) or not ours:
        return None
    for node_o, node_t in zip(ours, theirs, strict=True):
        shape = normalized(node_o)
        if shape is None or shape != normalized(node_t):
            return None
    return theirs if _changed_lines(base, theirs) > _changed_lines(base, ours) else ours
