"""Resolution through what typed code writes: subscripted generic annotations (parameters,
returns, ``self.x``, module and class variables), generic bases, calls chained on results (one
line, or one call a line inside brackets), module-level names bound in blocks, aliases of a
class, and a name a module both defines and imports (a fallback def: no exact edge); the
incremental index equal to a full one after such facts change."""

from __future__ import annotations

from pathlib import Path

from fleet.graph import index
from tests.unit.graph.graph_helpers import content, put
from tests.unit.graph.test_graph_types import _targets

GENERIC = {
    "lib/query.py": """\
        from typing import Any, Generic, Optional, TypeVar, cast

        _T = TypeVar("_T")


        class Select(Generic[_T]):
            def where(self, *c: Any) -> "Select[_T]":
                return self

            def limit(self, n: int) -> Select[_T]:
                return self


        def select(*cols: Any) -> Select[Any]:
            return Select()


        class Session:
            current: Optional[Select[Any]] = None

            def __init__(self) -> None:
                self.last: Optional[Select[Any]] = None
                self.pending: list[Select[Any]] = []

            def run(self, stmt: Select[Any], other: "Select[int]", maybe: Select[Any] | None):
                stmt.where()
                other.limit(1)
                maybe.where()
                self.last.limit(2)
                self.pending.append(stmt)
                select().where().limit(3)
                s = select(1)
                s.where()


        if __name__ == "__main__":
            session = Session()
            session.run(select(), select(), None)


        class Rows(Select[int], Generic[_T]):
            def first(self):
                return self.limit(1)

            def chained(self):
                return (
                    select(1)
                    .where(2)
                    .limit(3)
                )
        """,
}


def test_subscripted_annotations_and_module_level_blocks(tmp_path: Path) -> None:
    for rel, text in GENERIC.items():
        put(tmp_path, rel, text)
    got = _targets(index(tmp_path), "lib/query.py")
    where, limit = "lib/query.py::Select.where", "lib/query.py::Select.limit"
    expected = {
        (26, "stmt.where"): where,  # a parameter annotated `Select[Any]`
        (27, "other.limit"): limit,  # quoted: `"Select[int]"`
        (28, "maybe.where"): where,  # `Select[Any] | None`
        (29, "self.last.limit"): limit,  # `self.last: Optional[Select[Any]]`
        (30, "self.pending.append"): None,  # a list of Select is no Select
        (31, "select().where"): where,  # `-> Select[Any]`
        (31, "select().where().limit"): limit,  # then `-> "Select[_T]"`
        (33, "s.where"): where,  # a local bound by a call returning `Select[Any]`
        # a name bound under `if __name__ == "__main__":` is typed as a function's locals are
        (38, "session.run"): "lib/query.py::Session.run",
        (43, "self.limit"): limit,  # inherited from a subscripted generic base
        (47, "select().where().limit"): limit,  # a chain written one call a line
    }
    assert {k: got.get(k) for k in expected} == expected


def test_a_name_a_module_both_imports_and_defines_gets_no_exact_edge(tmp_path: Path) -> None:
    """``try: from ._speedups import escape`` / ``except ImportError: def escape(...)``: which
    one ``speed.escape`` is depends on the run, so users elsewhere get no exact edge to
    either; a name the module only defines (or imports from itself) keeps its edge."""
    put(tmp_path, "lib/__init__.py", "")
    put(tmp_path, "lib/_speedups.py", """\
        def escape(s):
            return s
        """)
    put(tmp_path, "lib/speed.py", """\
        try:
            from lib._speedups import escape
        except ImportError:
            def escape(s):
                return s


        def quote(s):
            return s


        if __name__ == "__main__":
            from lib.speed import quote  # its own name: still the def
        """)
    put(tmp_path, "app.py", """\
        import lib.speed
        from lib.speed import escape, quote

        escape("a")
        lib.speed.escape("b")
        quote("c")
        """)
    before = index(tmp_path)
    got = _targets(before, "app.py")
    assert got[(4, "escape")] is None and got[(5, "lib.speed.escape")] is None
    assert got[(6, "quote")] == "lib/speed.py::quote"
    # the fallback import goes: the users are re-resolved to the def, as a full index does
    speed = tmp_path / "lib/speed.py"
    speed.write_text(speed.read_text().replace("from lib._speedups import escape", "pass"))
    after = index(tmp_path, previous=before)
    assert content(after) == content(index(tmp_path))
    assert _targets(after, "app.py")[(4, "escape")] == "lib/speed.py::escape"


def test_variables_annotated_with_generics(tmp_path: Path) -> None:
    """Class and module variables annotated with what the extractors do not type themselves:
    ``Optional[C]``, ``C[T]``, a quoted ``"C[T]"``, ``C | None``; a container of C is no C."""
    put(tmp_path, "lib/__init__.py", "")
    put(tmp_path, "lib/rows.py", """\
        from typing import Generic, Optional, TypeVar

        T = TypeVar("T")


        class Rows(Generic[T]):
            def first(self):
                return None


        class Holder:
            current: Optional[Rows[int]] = None
            quoted: "Rows[str]"
            either: Rows[int] | None = None
            many: list[Rows[int]] = []

            def use(self):
                self.current.first()
                self.quoted.first()
                self.either.first()
                self.many.first()
                default.first()


        default: Optional[Rows[int]] = None
        """)
    got = _targets(index(tmp_path), "lib/rows.py")
    first = "lib/rows.py::Rows.first"
    assert {k: got.get(k) for k in [(18, "self.current.first"), (19, "self.quoted.first"),
                                     (20, "self.either.first"), (22, "default.first")]} == {
        (18, "self.current.first"): first, (19, "self.quoted.first"): first,
        (20, "self.either.first"): first, (22, "default.first"): first}
    assert (21, "self.many.first") in got and got[(21, "self.many.first")] is None


def test_a_local_or_module_name_that_aliases_a_class(tmp_path: Path) -> None:
    """``_Style = Style`` (a local, or a module variable) names the class: ``_Style.parse()``
    is ``Style.parse``; an alias of an untyped local types nothing."""
    put(tmp_path, "style.py", """\
        class Style:
            @classmethod
            def parse(cls, text):
                return cls()


        Alias = Style


        def use(other):
            _Style = Style
            _Style.parse("bold")
            Alias.parse("dim")
            same = other
            same.parse("x")
        """)
    got = _targets(index(tmp_path), "style.py")
    assert got[(12, "_Style.parse")] == "style.py::Style.parse"
    assert got[(13, "Alias.parse")] == "style.py::Style.parse"
    assert got[(15, "same.parse")] is None
