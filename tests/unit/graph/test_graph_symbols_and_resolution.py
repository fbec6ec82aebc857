"""Symbols, spans and name resolution on small real repositories written to tmp_path."""

from __future__ import annotations

import textwrap
from pathlib import Path

from fleet.graph import SymbolGraph, index


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def targets(graph: SymbolGraph, path: str, src: str | None = None) -> dict[str, str | None]:
    return {
        r.name: r.target
        for r in graph.references_in(path)
        if src is None or r.src == src
    }


def test_symbols_ids_kinds_spans_and_hashes(tmp_path: Path) -> None:
    src = """\
    import os

    LIMIT: int = 3


    class Account(Base):
        rate = 0.5

        @property
        def balance(self) -> int:
            def inner():
                return 1
            return inner()


    def top(a, b=2):
        return a
    """
    g = index(write(tmp_path, {"pkg/acct.py": src}))
    syms = {s.id: s for s in g.symbols_in("pkg/acct.py")}
    assert sorted(syms) == [
        "pkg/acct.py::<module>", "pkg/acct.py::Account", "pkg/acct.py::Account.balance",
        "pkg/acct.py::Account.balance.inner", "pkg/acct.py::Account.rate",
        "pkg/acct.py::LIMIT", "pkg/acct.py::top",
    ]
    kinds = {k: s.kind for k, s in syms.items()}
    assert kinds["pkg/acct.py::Account"] == "class"
    assert kinds["pkg/acct.py::Account.balance"] == "method"
    assert kinds["pkg/acct.py::Account.balance.inner"] == "function"
    assert kinds["pkg/acct.py::Account.rate"] == "variable"
    assert kinds["pkg/acct.py::<module>"] == "module"
    data = (tmp_path / "pkg/acct.py").read_bytes()
    bal = syms["pkg/acct.py::Account.balance"]
    assert data[bal.start_byte : bal.end_byte].startswith(b"@property")
    assert data[bal.sig_start_byte : bal.sig_end_byte] == b"def balance(self) -> int:"
    assert (bal.start_line, bal.end_line) == (9, 13)
    assert bal.parent == "pkg/acct.py::Account" and bal.language == "python"
    assert g.enclosing("pkg/acct.py", data.index(b"return 1")).id == (
        "pkg/acct.py::Account.balance.inner"
    )
    assert g.enclosing("pkg/acct.py", 0).kind == "module"
    # body hash: same text -> same hash, edited text -> new hash
    before = syms["pkg/acct.py::top"].body_hash
    (tmp_path / "pkg/acct.py").write_text(textwrap.dedent(src).replace("return a", "return b"))
    after = {s.id: s for s in index(tmp_path).symbols_in("pkg/acct.py")}
    assert after["pkg/acct.py::top"].body_hash != before
    assert after["pkg/acct.py::Account"].body_hash == syms["pkg/acct.py::Account"].body_hash


def test_imports_aliases_relative_src_layout_and_externals(tmp_path: Path) -> None:
    write(tmp_path, {
        "src/acme/__init__.py": "from acme.billing.legacy import charge as legacy_charge\n",
        "src/acme/billing/__init__.py": "",
        "src/acme/billing/legacy.py": "def charge(amount):\n    return amount\n",
        "src/acme/billing/payments.py": """\
            import yaml
            import acme.billing.legacy
            import acme.billing.legacy as leg
            from . import legacy
            from .legacy import charge as old_charge
            from .. import legacy_charge
            from datetime import datetime as DT
            import datetime as dt

            def pay(x):
                legacy.charge(x)
                leg.charge(x)
                old_charge(x)
                acme.billing.legacy.charge(x)
                legacy_charge(x)
                yaml.load(x)
                DT.utcnow()
                dt.datetime.utcnow()
                return len(x)
            """,
    })
    g = index(tmp_path)
    t = targets(g, "src/acme/billing/payments.py", "src/acme/billing/payments.py::pay")
    charge = "src/acme/billing/legacy.py::charge"
    assert t["legacy.charge"] == charge
    assert t["leg.charge"] == charge
    assert t["old_charge"] == charge
    assert t["acme.billing.legacy.charge"] == charge
    assert t["legacy_charge"] == charge  # through the package's re-export
    assert t["yaml.load"] == "yaml.load"
    assert t["DT.utcnow"] == "datetime.datetime.utcnow"
    assert t["dt.datetime.utcnow"] == "datetime.datetime.utcnow"
    assert t["len"] == "builtins.len"
    assert g.resolve_dotted("acme.billing.legacy.charge") == charge
    assert g.dotted(charge) == "acme.billing.legacy.charge"
    assert g.imports["src/acme/billing/payments.py"]["DT"] == "datetime.datetime"
    deps = g.dependencies("src/acme/billing/payments.py::pay")
    assert deps == {charge}
    assert "calls" in g.graph.edges["src/acme/billing/payments.py::pay", charge]["kinds"]
    assert g.resolved_share() == 1.0


def test_self_cls_bases_class_scope_and_nesting(tmp_path: Path) -> None:
    write(tmp_path, {
        "app/__init__.py": "",
        "app/base.py": """\
            class Base:
                def save(self):
                    return 1
            """,
        "app/models.py": """\
            from app.base import Base

            class Model(Base):
                table = "t"
                alias = table

                def run(self):
                    self.save()
                    self.helper()
                    self.missing_attr.close()

                @classmethod
                def make(cls):
                    return cls.helper()

                def helper(self):
                    def nested():
                        return 1
                    return nested()

            def table():
                return Model
            """,
    })
    g = index(tmp_path)
    refs = {(r.src, r.name): r for r in g.references_in("app/models.py")}
    assert refs["app/models.py::Model.run", "self.save"].target == "app/base.py::Base.save"
    assert refs["app/models.py::Model.run", "self.helper"].target == "app/models.py::Model.helper"
    partial = refs["app/models.py::Model.run", "self.missing_attr.close"]
    assert partial.target == "app/models.py::Model" and not partial.exact
    assert refs["app/models.py::Model.make", "cls.helper"].target == "app/models.py::Model.helper"
    # class scope: `table` inside the class body is the class attribute, not the function
    assert refs["app/models.py::Model.alias", "table"].target == "app/models.py::Model.table"
    assert refs["app/models.py::Model.helper", "nested"].target == (
        "app/models.py::Model.helper.nested"
    )
    inherit = refs["app/models.py::Model", "Base"]
    assert inherit.kind == "inherit" and inherit.target == "app/base.py::Base"
    assert "inherits" in g.graph.edges["app/models.py::Model", "app/base.py::Base"]["kinds"]


def test_resolved_share_beats_naive_short_name_matching(tmp_path: Path) -> None:
    """Two modules define `save`; a short-name matcher cannot tell which one a call means."""
    write(tmp_path, {
        "a.py": "def save():\n    return 1\n",
        "b.py": "def save():\n    return 2\n",
        "c.py": "import a\nimport b as bee\n\ndef go():\n    a.save()\n    bee.save()\n",
    })
    g = index(tmp_path)
    t = targets(g, "c.py", "c.py::go")
    assert t == {"a.save": "a.py::save", "bee.save": "b.py::save"}
    naive = {s.id for s in g.symbols.values() if s.name == "save"}
    assert len(naive) == 2  # the short name is ambiguous; resolution is not


def test_locals_with_an_evident_class(tmp_path: Path) -> None:
    write(tmp_path, {
        "shop.py": """\
            from datetime import datetime

            class Cart:
                total = 0

                def add(self, item):
                    return item

            def checkout(cart: Cart, when: datetime):
                fresh = Cart()
                fresh.add(1)
                cart.add(2)
                when.isoformat()
                other = make()
                other.add(3)
                return cart.total

            def make():
                return Cart()
            """,
    })
    g = index(tmp_path)
    t = targets(g, "shop.py", "shop.py::checkout")
    assert t["fresh.add"] == "shop.py::Cart.add"
    assert t["cart.add"] == "shop.py::Cart.add"
    assert t["cart.total"] == "shop.py::Cart.total"
    assert t["when.isoformat"] == "datetime.datetime.isoformat"
    assert t["other.add"] is None  # a factory's return type is not guessed
    assert "fresh" not in t and "other" not in t  # plain uses of locals are no references
