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
