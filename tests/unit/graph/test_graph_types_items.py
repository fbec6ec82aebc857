"""Loop variables typed by the items of what they iterate (click's ``for param in
self.get_params(ctx)``, httpx's ``for child in self.children``; a comprehension's too, when
every loop that binds the name iterates the same thing): container annotations
(``-> List["C"]``, ``x: Sequence[C]``, ``self.x: list[C]``, ``tuple[C, ...]``) on returns,
parameters, attributes and variables; what is no iterable of one class, a loop written in a
string and a comprehension give no fact; an incremental index after a container annotation
changes equals a full one."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.graph import index
from fleet.graph._facts import container_name
from tests.unit.graph.graph_helpers import content, put
from tests.unit.graph.test_graph_types import _targets


@pytest.mark.parametrize(("annotation", "expected"), [
    ("list[C]", "[]C"), ("t.List['C']", "[]C"), ('Sequence["pkg.C"]', "[]pkg.C"),
    ("Optional[List[C]]", "[]C"), ("Iterator[C] | None", "[]C"), ("tuple[C, ...]", "[]C"),
    ("Generator[C, None, None]", "[]C"), ("'frozenset[C[int]]'", "[]C"),
    ("tuple[C, D]", None), ("dict[str, C]", None), ("Mapping[C, C]", None), ("list[C | D]", None),
    ("list[list[C]]", None), ("C", None), ("Optional[C]", None), ("list", None),
])
def test_container_annotations(annotation: str, expected: str | None) -> None:
    assert container_name(annotation) == expected


CORE = '''\
    import typing as t
    from typing import List, Optional, Sequence


    class Parameter:
        def pieces(self, ctx):
            return []


    class Decoder:
        def decode(self, data):
            return data


    class Command:
        params: List[Parameter] = []

        def __init__(self, children: Sequence[Decoder]) -> None:
            self.children = children
            self.more: list[Parameter] = []
            self.mixed = children

        def get_params(self, ctx) -> t.List["Parameter"]:
            return self.params

        def run(self, ctx, pairs: tuple[Parameter, Decoder]):
            for param in self.get_params(ctx):
                param.pieces(ctx)
            for child in self.children:
                child.decode(b"")
            for p in self.params:
                p.pieces(1)
            for m in self.more:
                m.pieces(2)
            for e in decoders(self):
                e.decode(3)
            for x in [Parameter()]:
                x.pieces(4)
            for i, d in enumerate(self.children):
                d.decode(5)
            for pair in pairs:
                pair.pieces(6)
            text = """
            for s in self.children:
                s.decode()
            """
            return [c.decode(7) for c in self.children], text, [
                p.decode(10) for p in self.children]


    def decoders(cmd: Command) -> Optional[List[Decoder]]:
        return None


    def use(items: list[Parameter]):
        for it in items:
            it.pieces(8)
        alias = items
        for y in alias:
            y.pieces(9)
    '''


def test_loop_variables_over_typed_iterables(tmp_path: Path) -> None:
    put(tmp_path, "pkg/__init__.py", "")
    put(tmp_path, "pkg/core.py", CORE)
    got = _targets(index(tmp_path), "pkg/core.py")
    pieces, decode = "pkg/core.py::Parameter.pieces", "pkg/core.py::Decoder.decode"
    assert {k: got[k] for k in [(28, "param.pieces"), (30, "child.decode"),
                                (34, "m.pieces"), (36, "e.decode"), (57, "it.pieces"),
                                (60, "y.pieces")]} == {
        (28, "param.pieces"): pieces, (30, "child.decode"): decode,
        (34, "m.pieces"): pieces, (36, "e.decode"): decode, (57, "it.pieces"): pieces,
        (60, "y.pieces"): pieces}
    assert got[(47, "c.decode")] == decode  # a comprehension's variable
    # a list display, a tuple target, a tuple of two classes, a name two loops bind over
    # different iterables (`p`: self.params and self.children): no type
    for key in [(38, "x.pieces"), (40, "d.decode"), (42, "pair.pieces"), (32, "p.pieces"),
                (48, "p.decode")]:
        assert got[key] is None, key
    assert not any(line in (44, 45) for line, _ in got)  # the loop in a string is text


def test_incremental_after_a_container_annotation_changes(tmp_path: Path) -> None:
    """The return annotation of another file's function and a class's attribute annotation
    change: the loops over them are re-resolved, as a full index does."""
    put(tmp_path, "pkg/__init__.py", "")
    put(tmp_path, "pkg/core.py", CORE)
    put(tmp_path, "app.py", """\
        from pkg.core import Command, decoders


        def main(cmd: Command):
            for d in decoders(cmd):
                d.decode(1)
            for m in cmd.more:
                m.pieces(2)
        """)
    before = index(tmp_path)
    got = _targets(before, "app.py")
    assert got[(6, "d.decode")] == "pkg/core.py::Decoder.decode"
    assert got[(8, "m.pieces")] == "pkg/core.py::Parameter.pieces"
    core = tmp_path / "pkg/core.py"
    core.write_text(core.read_text()
                    .replace("-> Optional[List[Decoder]]", "-> Optional[List[Parameter]]")
                    .replace("self.more: list[Parameter]", "self.more: list[Decoder]"))
    after = index(tmp_path, previous=before)
    assert content(after) == content(index(tmp_path))
    got = _targets(after, "app.py")
    assert got[(6, "d.decode")] is None  # Parameter has no decode
    assert got[(8, "m.pieces")] is None


def test_a_loop_over_a_loops_item_types_nothing(tmp_path: Path) -> None:
    """Only one level of containers is typed: the items of an item (Django's ``for
    migrations in self.migrations.values(): for migration in migrations``) stay unknown, and
    resolving them ends (it once recursed without end)."""
    put(tmp_path, "auto.py", """\
        from typing import List


        class Migration:
            def run(self):
                return None


        class Detector:
            def __init__(self, groups: List[List[Migration]]) -> None:
                self.groups = groups
                self.migrations = {}

            def optimize(self):
                for migrations in self.migrations.values():
                    for migration in migrations:
                        migration.run()
                for group in self.groups:
                    for m in group:
                        m.run()
        """)
    got = _targets(index(tmp_path), "auto.py")
    assert got[(17, "migration.run")] is None and got[(20, "m.run")] is None


def test_loops_over_module_and_class_variables(tmp_path: Path) -> None:
    put(tmp_path, "reg.py", """\
        from typing import ClassVar, List


        class Plugin:
            def load(self):
                return None


        REGISTRY: List[Plugin] = []


        class Host:
            plugins: ClassVar[List[Plugin]] = []

            def start(self):
                for plugin in self.plugins:
                    plugin.load()
                for entry in REGISTRY:
                    entry.load()
        """)
    got = _targets(index(tmp_path), "reg.py")
    assert got[(17, "plugin.load")] == got[(19, "entry.load")] == "reg.py::Plugin.load"
