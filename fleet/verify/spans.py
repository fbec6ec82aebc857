"""Symbol spans of a Python source, by qualified name, for lease checks and symbol edits.

Ids follow the graph's convention: ``path::Qualified.name`` for classes, functions and methods
(nested definitions included, ``Outer.inner``), ``path::<module>`` for module-level code. A
span runs from the first decorator line to the last line of the body (1-based, inclusive).
"""

from __future__ import annotations

import ast
import codecs
import io
import tokenize
from dataclasses import dataclass

from fleet import pyast

__all__ = ["MODULE", "Span", "covered_by", "decode_source", "innermost", "python_spans"]

MODULE = "<module>"


@dataclass(frozen=True)
class Span:
    qualname: str
    kind: str  # class | function
    start_line: int
    end_line: int
    parent: str | None

    def contains(self, line: int) -> bool:
        return self.start_line <= line <= self.end_line


def python_spans(source: str) -> dict[str, Span]:
    """Every class and function definition of ``source`` by qualified name.

    Raises ``SyntaxError`` when the source does not parse.
    """
    spans: dict[str, Span] = {}

    def visit(body: list[ast.stmt], prefix: str, parent: str | None) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{node.name}"
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                kind = "class" if isinstance(node, ast.ClassDef) else "function"
                spans[name] = Span(name, kind, start, node.end_lineno or node.lineno, parent)
                visit(node.body, f"{name}.", name)
            elif isinstance(node, ast.If | ast.Try | ast.With | ast.For | ast.While):
                # definitions under `if TYPE_CHECKING:` / `try:` belong to the enclosing scope
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(node, field, []) or [], prefix, parent)
                for handler in getattr(node, "handlers", []) or []:
                    visit(handler.body, prefix, parent)

    visit(pyast.parse(source).body, "", None)
    return spans


def innermost(spans: dict[str, Span], line: int) -> str:
    """The qualified name of the innermost definition containing ``line``, else ``<module>``."""
    best: Span | None = None
    for span in spans.values():
        if span.contains(line) and (best is None or span.start_line >= best.start_line):
            best = span
    return best.qualname if best else MODULE


def covered_by(symbol: str, write_set: set[str] | frozenset[str]) -> bool:
    """True when ``symbol`` is a write-set entry or lies inside one (``a.py::Foo`` covers
    ``a.py::Foo.bar`` but not ``a.py::Foobar``)."""
    path, _, qual = symbol.partition("::")
    for entry in write_set:
        e_path, _, e_qual = entry.partition("::")
        if e_path != path:
            continue
        if e_qual == qual or qual.startswith(f"{e_qual}."):
            return True
    return False


def decode_source(raw: bytes) -> tuple[str, str]:
    """A Python file's text and its encoding: the PEP 263 coding declaration or BOM, else UTF-8
    (newlines kept as written). Raises ``SyntaxError``/``UnicodeDecodeError`` when the bytes do
    not decode."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    if encoding == "utf-8-sig":
        return raw.decode("utf-8-sig"), "utf-8-sig"
    return raw.decode(encoding), "utf-8" if codecs.lookup(encoding).name == "utf-8" else encoding
