"""Resolution through types: ``super()``, typed attributes, locals and parameters,
module-level instances, star re-exports with ``__all__``, return annotations and properties;
ambiguity stays unresolved; an incremental re-index after an edit of a type fact equals a full
index and re-resolves the users of that fact."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.graph import SymbolGraph, index
from fleet.graph._facts import annotation_name
from tests.unit.graph.graph_helpers import content, put

FILES = {
    "lib/__init__.py": """\
        from lib.conn import *
        from lib.hidden import *
        """,
    "lib/conn.py": """\
        __all__ = ["Conn", "connect"]

        class Conn:
            def close(self):
                return 1

        class Other:
            def close(self):
                return 2

        def connect() -> "Conn":
            return Conn()

        def maybe() -> Conn | None:
            return None

        def _private():
            return 0
        """,
    "lib/hidden.py": """\
        __all__ = ["shown"]

        def shown():
            return 1

        def secret():
            return 2
        """,
    "app/base.py": """\
        from lib.conn import Conn, Other

        class Base:
            pool: Conn
            spare = Other()

            def __init__(self, conn: Conn):
                self.conn = conn
                self.made = Conn()
                self.mixed = Conn()
                self.lazy = None

            def setup(self):
                self.mixed = Other()
                self.lazy = Conn()
                return 0

            def save(self):
                return 1

            @property
            def current(self) -> Conn:
                return self.made
        """,
    "app/child.py": """\
        from typing import Optional

        import lib
        from app.base import Base
        from lib.conn import Conn, connect, maybe

        registry = Base(Conn())


        class Child(Base):
            def save(self):
                super().save()
                super(Child, self).setup()
                self.conn.close()
                self.made.close()
                self.pool.close()
                self.spare.close()
                self.mixed.close()
                self.lazy.close()
                self.current.close()
                return 2


        def use(b: Base, o: Optional[Conn]):
            c = Conn()
            c.close()
            b.conn.close()
            o.close()
            registry.made.close()
            connect().close()
            maybe().close()
            lib.Conn().close()
            lib.shown()
            lib.secret()
            lib.connect().close()
        """,
}


def _targets(g: SymbolGraph, path: str) -> dict[tuple[int, str], str | None]:
    out: dict[tuple[int, str], str | None] = {}
    for r in g.references_in(path):
        if r.kind == "call":
            out.setdefault((r.line, r.name), r.target if r.exact else None)
    return out


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        put(tmp_path, rel, text)
    return tmp_path


def test_calls_resolve_through_types(repo: Path) -> None:
    got = _targets(index(repo), "app/child.py")
    close, other = "lib/conn.py::Conn.close", "lib/conn.py::Other.close"
    expected = {
        (12, "super().save"): "app/base.py::Base.save",
        (13, "super(Child)().setup"): "app/base.py::Base.setup",
        (14, "self.conn.close"): close,  # an attribute assigned a typed parameter
        (15, "self.made.close"): close,  # assigned a constructor call
        (16, "self.pool.close"): close,  # a class-level annotation
        (17, "self.spare.close"): other,  # a class attribute
        (18, "self.mixed.close"): None,  # Conn() in __init__, Other() in setup: ambiguous
        (19, "self.lazy.close"): close,  # None, then Conn(): None is no type
        (20, "self.current.close"): close,  # a property's return annotation
        (26, "c.close"): close,
        (27, "b.conn.close"): close,
        (28, "o.close"): close,  # Optional[Conn]
        (29, "registry.made.close"): close,  # a module-level instance
        (30, "connect().close"): close,  # a string return annotation
        (31, "maybe().close"): close,  # Conn | None
        (32, "lib.Conn().close"): close,  # a star re-export
        (33, "lib.shown"): "lib/hidden.py::shown",
        (35, "lib.connect().close"): close,
    }
    assert {k: got.get(k) for k in expected} == expected
    assert got.get((34, "lib.secret")) is None  # not in hidden.py's __all__


def test_chains_through_calls_that_do_not_resolve_are_not_references(repo: Path) -> None:
    put(repo, "app/other.py", """\
        def f(x):
            return x().run() + unknown().go() + unknown().go().more()
        """)
    names = {r.name for r in index(repo).references_in("app/other.py")}
    assert "x().run" not in names and "unknown().go" not in names
    assert "unknown().go().more" not in names
    assert "unknown" in names


def test_annotation_names() -> None:
    assert annotation_name("'pkg.Cls'") == "pkg.Cls"
    assert annotation_name("Optional[Cls]") == "Cls"
    assert annotation_name("None | Cls") == "Cls"
    assert annotation_name("Cls | Other") is None
    assert annotation_name("list[Cls]") is None
    # a subscripted generic names its origin; the wrappers of one type name that type
    assert annotation_name("Select[Tuple[int, str]]") == "Select"
    assert annotation_name("'Result[_T]'") == "Result"
    assert annotation_name("typing.Optional[a.Cls[int]]") == "a.Cls"
    assert annotation_name("Union[Cls, None]") == "Cls"
    assert annotation_name("Cls[int] | None") == "Cls"
    assert annotation_name("Annotated[Cls, 'meta']") == "Cls"
    assert annotation_name("Final[Cls]") == "Cls"
    assert annotation_name("Union[Cls, Other]") is None
    assert annotation_name("Dict[str, Cls]") is None
    assert annotation_name("ClassVar[List[Cls]]") is None
    assert annotation_name("Callable[[Cls], None]") is None


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


def reresolved(new: SymbolGraph, old: SymbolGraph) -> set[str]:
    return {p for p in new.files if new._refs.get(p) is not old._refs.get(p)}


@pytest.mark.parametrize(("rel", "old", "new", "users"), [
    # an attribute's type changes: its users in other files are re-resolved
    ("app/base.py", "self.made = Conn()", "self.made = Other()", {"app/child.py"}),
    # a class-level annotation
    ("app/base.py", "pool: Conn", "pool: Other", {"app/child.py"}),
    # ... one the extractors do not type themselves (a quoted union)
    ("app/base.py", "pool: Conn", 'pool: "Other | None" = None', {"app/child.py"}),
    # a return annotation
    ("lib/conn.py", 'def connect() -> "Conn":', "def connect() -> Other:", {"app/child.py"}),
    # a property stops being one
    ("app/base.py", "@property", "@staticmethod", {"app/child.py"}),
    # __all__ grows
    ("lib/hidden.py", '__all__ = ["shown"]', '__all__ = ["shown", "secret"]', {"app/child.py"}),
    # a parameter's annotation, which an attribute's type comes from
    ("app/base.py", "def __init__(self, conn: Conn):", "def __init__(self, conn: Other):",
     {"app/child.py"}),
])
def test_incremental_equals_full_after_type_edits(repo: Path, rel: str, old: str, new: str,
                                                  users: set[str]) -> None:
    before = index(repo)
    path = repo / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    got = index(repo, previous=before)
    assert content(got) == content(index(repo))
    assert users | {rel} <= reresolved(got, before)
    assert _targets(got, "app/child.py") != _targets(before, "app/child.py")


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
