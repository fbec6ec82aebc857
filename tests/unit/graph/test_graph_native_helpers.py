"""The C helpers beside the extractor against the Python they replace: the type facts' scan for
calls on a call's result (``facts.c``, ``_facts._CALL_TAIL``) and a snapshot's edge encoding
(``condense.c``, the loop in ``_persist._save``)."""

from __future__ import annotations

import random
import sysconfig
from pathlib import Path

import pytest

import fleet.graph._facts as facts
import fleet.graph._persist as persist
from fleet.graph import index
from fleet.graph._extract_native import available, extract_python
from fleet.graph._model import FileRecord
from tests.unit.graph.graph_helpers import put

pytestmark = pytest.mark.skipif(not available(), reason="the extension is not built")

_HOSTILE = [
    b"f().a\n", b"f()  .  a  (\n", b"f(\t).\tb.c.d(x)\n", b"f(a(b(c)))).x\n",
    b"f(a(b(c(d)))).x\n", b"f(\n  x,\n  y\n).z\n", b"f(().x\n", b"f()).x\n", b"f()..x\n",
    b"f().1x\n", b"f().x\xc3\xa4y()\n", b"f(\xc3\xa4).x\n", b"super(A, self).m()\n",
    b"super().m\n", b"a.b(x)(y).c\n", b"f(", b"f()", b"f().", b"f() .\n", b"f()\n.x\n",
    b"x = f(a, (b, [c])).m(\n", b"f(')').x\n",
]


def _both(src: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[list, list]:
    fd = extract_python("m.py", src, "m", FileRecord("m.py", "python", "", 0, len(src), "ok"))
    native = list(facts._call_tails(fd.refs, src))
    with monkeypatch.context() as m:
        m.setattr(facts, "native_module", lambda: None)
        python = list(facts._call_tails(fd.refs, src))
    return native, python


def test_call_tails_in_c_match_the_regular_expression(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hand-made edge cases, then every fourth stdlib file and mutations of some of them."""
    hits = 0
    for src in _HOSTILE:
        native, python = _both(src, monkeypatch)
        assert native == python, src
        hits += len(native)
    assert hits >= 8
    rnd = random.Random(7)
    stdlib = sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py"))
    compared = 0
    for path in stdlib[::4]:
        if "site-packages" in path.parts:
            continue
        src = path.read_bytes()
        variants = [src]
        if compared % 10 == 0:
            mutated = bytearray(src)
            for _ in range(20):
                at = rnd.randrange(len(mutated) + 1)
                mutated[at:at] = rnd.choice([b"(", b")", b".", b" ", b"\t", b"().a", b"(\n"])
            variants.append(bytes(mutated))
        for variant in variants:
            native, python = _both(variant, monkeypatch)
            assert native == python, path
            hits += len(native)
        compared += 1
    assert compared > 300 and hits > 1000


def test_edge_rows_in_c_encode_as_the_python_loop(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot saved with the C edge encoding is byte for byte the one the Python loop
    writes."""
    repo = tmp_path / "repo"
    put(repo, "pkg/__init__.py", "")
    put(repo, "pkg/core.py", "class Base:\n    def run(self):\n        return helper()\n\n\n"
        "def helper():\n    return Base().run()\n")
    put(repo, "pkg/app.py", "from pkg.core import Base, helper\n\n\nclass App(Base):\n"
        "    def go(self):\n        return self.run() + helper()\n")
    g = index(repo)
    native = g.save(tmp_path / "native.pickle").read_bytes()
    with monkeypatch.context() as m:
        m.setattr(persist, "native_module", lambda: None)
        python = g.save(tmp_path / "python.pickle").read_bytes()
    assert native == python
    assert len(g.edge_list()) >= 5
