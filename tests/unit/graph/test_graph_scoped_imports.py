"""Imports bind names in the scope they appear in (function or class body), not file-wide.

Regression for WebOb 1.4 ``tests/test_response.py``: one test function does
``from datetime import datetime`` and a later one ``import datetime``; the later function's
``datetime.datetime.utcnow()`` must resolve to ``datetime.datetime.utcnow``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from fleet.graph import SymbolGraph, index, load
from tests.unit.graph.graph_helpers import put


def by_src(graph: SymbolGraph, path: str) -> dict[tuple[str, str], str | None]:
    return {(r.src.split("::", 1)[1], r.name): r.target for r in graph.references_in(path)}


WEBOB_LIKE = """\
import time


def test_expires_in_the_past():
    from datetime import datetime, timedelta
    return datetime.utcnow() - timedelta(days=1)


def test_expires_is_not_none():
    import datetime
    return datetime.datetime.utcnow() + datetime.timedelta(days=1)


def test_module_level():
    return datetime.utcnow()


def outer():
    import json as j

    def inner():
        return j.dumps(1)
    return inner


class Holder:
    from os import path as p
    where = p.join("a", "b")

    def method(self):
        return p.join("c")
"""


def test_function_local_imports_shadow_per_scope(tmp_path: Path) -> None:
    put(tmp_path, "tests/test_response.py", WEBOB_LIKE)
    refs = by_src(index(tmp_path), "tests/test_response.py")
    assert refs[("test_expires_in_the_past", "datetime.utcnow")] == "datetime.datetime.utcnow"
    assert refs[("test_expires_in_the_past", "timedelta")] == "datetime.timedelta"
    # the WebOb site: `import datetime` in this function, not the other function's class
    assert refs[("test_expires_is_not_none", "datetime.datetime.utcnow")] == (
        "datetime.datetime.utcnow")
    assert refs[("test_expires_is_not_none", "datetime.timedelta")] == "datetime.timedelta"
    # no module-level binding of `datetime`: another function's import does not leak here
    assert refs[("test_module_level", "datetime.utcnow")] is None
    # nested functions see the enclosing function's imports
    assert refs[("outer.inner", "j.dumps")] == "json.dumps"
    # a class body's import is seen in the body, not in its methods (Python scoping)
    assert refs[("Holder.where", "p.join")] == "os.path.join"
    assert refs[("Holder.method", "p.join")] is None


def test_local_import_shadows_module_import_and_module_table_stays_module_level(
        tmp_path: Path) -> None:
    put(tmp_path, "pkg/__init__.py", "")
    put(tmp_path, "pkg/m.py", """\
        import datetime

        def a():
            return datetime.datetime.utcnow()

        def b():
            from datetime import datetime
            return datetime.utcnow()

        def c():
            from pkg.helpers import shout
            return shout()
        """)
    put(tmp_path, "pkg/helpers.py", "def shout():\n    return 1\n")
    put(tmp_path, "pkg/reexport.py", "from pkg.m import shout\n\nshout()\n")
    g = index(tmp_path)
    refs = by_src(g, "pkg/m.py")
    assert refs[("a", "datetime.datetime.utcnow")] == "datetime.datetime.utcnow"
    assert refs[("b", "datetime.utcnow")] == "datetime.datetime.utcnow"
    assert refs[("c", "shout")] == "pkg/helpers.py::shout"
    assert g.imports["pkg/m.py"] == {"datetime": "datetime"}
    assert g.dependencies("pkg/m.py::c") >= {"pkg/helpers.py::shout"}
    # `shout` is local to `c`: pkg.m does not re-export it
    assert by_src(g, "pkg/reexport.py")[("<module>", "shout")] != "pkg/helpers.py::shout"


def test_scoped_imports_survive_snapshots_and_incremental_index(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    put(repo, "m.py", WEBOB_LIKE)
    put(repo, "base.py", "class Base:\n    pass\n")
    put(repo, "n.py", """\
        def make():
            from base import Base

            class Local(Base):
                pass
            return Local
        """)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t.invalid"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "c"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    g = index(repo)
    assert by_src(g, "n.py")[("make.Local", "Base")] == "base.py::Base"
    back = load(g.save(tmp_path / "graph.pickle"))
    assert sorted(back.references) == sorted(g.references)
    assert back._data["m.py"].scoped_imports == g._data["m.py"].scoped_imports
    # editing only a function-local import re-resolves what depends on it, as a full index does
    put(repo, "n.py", """\
        def make():
            from other import Base

            class Local(Base):
                pass
            return Local
        """)
    put(repo, "other.py", "class Base:\n    pass\n")
    put(repo, "m.py", WEBOB_LIKE.replace("import json as j", "import pickle as j"))
    inc = index(repo, previous=back)
    full = index(repo)
    assert sorted(inc.references) == sorted(full.references)
    assert sorted(inc.graph.edges(data="kinds")) == sorted(full.graph.edges(data="kinds"))
    assert by_src(inc, "n.py")[("make.Local", "Base")] == "other.py::Base"
    assert by_src(inc, "m.py")[("outer.inner", "j.dumps")] == "pickle.dumps"


def test_a_nested_module_named_like_the_stdlib_does_not_take_its_imports(tmp_path: Path) -> None:
    # Sphinx's sphinx/util/logging.py, Django's django/utils/inspect.py: `import logging` in a
    # package module is the standard library, so the file's path suffix is no module name here
    put(tmp_path, "pkg/__init__.py", "")
    put(tmp_path, "pkg/util/__init__.py", "")
    put(tmp_path, "pkg/util/logging.py", """\
        import logging

        def getLogger(name):
            return logging.getLogger(name)
        """)
    put(tmp_path, "pkg/geo/__init__.py", "")
    put(tmp_path, "pkg/geo/collections.py", "class Counter:\n    pass\n")
    put(tmp_path, "pkg/tools/__init__.py", "")
    put(tmp_path, "pkg/tools/helpers.py", "def helper():\n    return 1\n")
    put(tmp_path, "pkg/app.py", """\
        import collections
        import helpers
        from pkg.util import logging as ours

        def run():
            ours.getLogger("x")
            helpers.helper()
            return collections.Counter()
        """)
    g = index(tmp_path)
    inside = {(r.name, r.target) for r in g.references_in("pkg/util/logging.py")}
    assert ("logging.getLogger", "logging.getLogger") in inside
    refs = by_src(g, "pkg/app.py")
    assert refs[("run", "ours.getLogger")] == "pkg/util/logging.py::getLogger"
    assert refs[("run", "collections.Counter")] == "collections.Counter"
    # a unique path suffix that names no standard module still stands for its file
    assert refs[("run", "helpers.helper")] == "pkg/tools/helpers.py::helper"
