"""Resolution through declared attribute types and through locals that alias another binding
(found on pytest 8.3.4's own code): ``self.config: Config = config`` in one branch of
``__init__`` and ``self.config = parent.config`` in the other types ``config`` as ``Config``;
``tr = terminalreporter`` (a typed parameter), ``pm = self.config.pluginmanager`` and
``self._mp = mp = monkeypatch`` resolve what is called on them, as does ``x = cast("C", v)``;
an incremental index after an annotation changes equals a full one."""

from __future__ import annotations

from pathlib import Path

from fleet.graph import index
from tests.unit.graph.graph_helpers import content, put
from tests.unit.graph.test_graph_types import _targets

CONFIG = """\
    class Config:
        def getoption(self, name):
            return name


    class Other:
        def getoption(self, name):
            return None
    """

NODES = """\
    import abc

    from lib.config import Config, Other


    class Node(abc.ABC):
        def __init__(self, config=None, parent=None):
            if config:
                self.config: Config = config
            else:
                self.config = parent.config
            self.other = Other()
            self.other = parent


    class Collector(Node, abc.ABC):
        pass


    class Twice:
        def __init__(self, a, b):
            self.config: Config = a
            self.config: Other = b


    def run(collector: Collector, node: Node, twice: Twice):
        collector.config.getoption("x")
        node.config.getoption("y")
        node.other.getoption("z")
        twice.config.getoption("w")
    """


def test_an_annotated_attribute_has_its_declared_type(tmp_path: Path) -> None:
    """The annotation wins over the class's unannotated assignments, also through a subclass
    with a base outside the repository; unannotated facts that disagree, or two different
    annotations, still type nothing."""
    put(tmp_path, "lib/__init__.py", "")
    put(tmp_path, "lib/config.py", CONFIG)
    put(tmp_path, "lib/nodes.py", NODES)
    got = _targets(index(tmp_path), "lib/nodes.py")
    assert got[(27, "collector.config.getoption")] == "lib/config.py::Config.getoption"
    assert got[(28, "node.config.getoption")] == "lib/config.py::Config.getoption"
    assert got[(29, "node.other.getoption")] is None  # Other() and an unknown value
    assert got[(30, "twice.config.getoption")] is None  # declared two ways


ALIASES = """\
    from lib.config import Config


    class Session:
        config: Config

        def __init__(self, config: Config) -> None:
            self.config = config
            self.plugins = Registry()

        def find(self):
            pm = self.plugins
            pm.lookup("a")
            cfg = self.config
            cfg.getoption("b")


    class Registry:
        def lookup(self, name):
            return name


    def summary(reporter: Config, session: Session) -> None:
        tr = reporter
        tr.getoption("c")
        opts = session.config
        opts.getoption("d")
        session.found = mp = reporter
        mp.getoption("e")


    def loop(node):
        node = node.parent
        node.getoption("f")
    """


def test_a_local_that_aliases_another_binding(tmp_path: Path) -> None:
    """A local bound once to another name or to an attribute chain resolves what is called on
    it as the chain it names; a local that names itself (``node = node.parent``) stays
    unresolved."""
    put(tmp_path, "lib/__init__.py", "")
    put(tmp_path, "lib/config.py", CONFIG)
    put(tmp_path, "lib/session.py", ALIASES)
    got = _targets(index(tmp_path), "lib/session.py")
    getoption = "lib/config.py::Config.getoption"
    assert got[(13, "pm.lookup")] == "lib/session.py::Registry.lookup"
    assert got[(15, "cfg.getoption")] == getoption
    assert got[(25, "tr.getoption")] == getoption
    assert got[(27, "opts.getoption")] == getoption
    assert got[(29, "mp.getoption")] == getoption
    assert got[(34, "node.getoption")] is None


def test_incremental_after_a_declared_type_changes(tmp_path: Path) -> None:
    """An edit of the declaring annotation re-resolves the users in other files (the class's
    ``attrs`` key), and a parameter's annotation the aliases of it: equal to a full index."""
    put(tmp_path, "lib/__init__.py", "")
    put(tmp_path, "lib/config.py", CONFIG)
    put(tmp_path, "lib/nodes.py", NODES)
    put(tmp_path, "lib/session.py", ALIASES)
    put(tmp_path, "app.py", """\
        from lib.nodes import Node


        def use(node: Node):
            node.config.getoption("x")
        """)
    before = index(tmp_path)
    assert _targets(before, "app.py")[(5, "node.config.getoption")] == (
        "lib/config.py::Config.getoption")
    nodes = tmp_path / "lib/nodes.py"
    nodes.write_text(nodes.read_text().replace(
        "self.config: Config = config", "self.config: Other = config"))
    session = tmp_path / "lib/session.py"
    session.write_text(session.read_text().replace("reporter: Config", "reporter: Registry"))
    after = index(tmp_path, previous=before)
    assert content(after) == content(index(tmp_path))
    assert _targets(after, "app.py")[(5, "node.config.getoption")] == (
        "lib/config.py::Other.getoption")
    assert _targets(after, "lib/session.py")[(25, "tr.getoption")] is None  # Registry has none


def test_a_local_bound_by_typing_cast_has_the_casts_type(tmp_path: Path) -> None:
    """``rec = cast("Rec", x)`` (SQLAlchemy's pool) types ``rec`` as ``Rec`` whichever way
    ``typing.cast`` is imported; a function of the project named like it types nothing."""
    put(tmp_path, "m.py", """\
        import typing as t
        from typing import cast


        class Rec:
            def get_connection(self):
                return 1


        def cast2(a, b):
            return b


        def f(x, y):
            rec = cast("Rec", x)
            rec.get_connection()
            o = t.cast(Rec, y)
            o.get_connection()
            w = cast("t.Optional[Rec]", x)
            w.get_connection()
            z = cast2(Rec, y)
            z.get_connection()
        """)
    got = _targets(index(tmp_path), "m.py")
    method = "m.py::Rec.get_connection"
    assert got[(16, "rec.get_connection")] == got[(18, "o.get_connection")] == method
    assert got[(20, "w.get_connection")] == method
    assert got[(22, "z.get_connection")] is None
