"""Lease keys are canonical on both stores: every alias of a held symbol (a symlink inside the
repository, NFC vs NFD, a compatibility form, ``::`` inside a name, ``./``) is refused as the
same key, and a key with no canonical form is a ``LeaseKeyError`` that names it."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleet.store import LeaseKeyError, Store, open_store
from fleet.types import Acquired, LeaseRequest, Refused

CAFE_NFC = unicodedata.normalize("NFC", "café")
CAFE_NFD = unicodedata.normalize("NFD", "café")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "billing").mkdir(parents=True)
    (root / "billing" / "legacy.py").write_text("class Foo:\n    def bar(self): ...\n")
    os.symlink("billing/legacy.py", root / "alias.py")  # file link
    os.symlink("billing", root / "money")  # directory link
    os.symlink(str(root / "billing" / "legacy.py"), root / "absolute.py")  # absolute, inside
    os.symlink("alias.py", root / "chain.py")  # a link to a link
    os.symlink("/etc/passwd", root / "out.py")  # leaves the repository
    os.symlink("../../outside.py", root / "billing" / "up.py")
    os.symlink("loop_b", root / "loop_a")
    os.symlink("loop_a", root / "loop_b")
    return root


@pytest.fixture
def rooted(store_url: str, repo: Path) -> Iterator[Store]:
    with open_store(store_url, repo_root=repo) as opened:
        yield opened


def w(symbol: str) -> LeaseRequest:
    return LeaseRequest(symbol, "write")


TEXT_ALIASES = [
    ("a.py::Foo.bar", "a.py::Foo::bar"),
    ("a.py::Foo.bar.baz", "a.py::Foo::bar::baz"),
    ("a.py::Foo", "./a.py::Foo"),
    ("pkg/a.py::Foo", "pkg//a.py::Foo"),
    ("pkg/a.py", "pkg/./a.py"),
    (f"m.py::{CAFE_NFC}", f"m.py::{CAFE_NFD}"),
    ("m.py::fix", "m.py::\ufb01x"),  # LATIN SMALL LIGATURE FI
    ("m.py::Kelvin", "m.py::\u212aelvin"),  # KELVIN SIGN
    ("m.py::x2", "m.py::x\u2082"),  # SUBSCRIPT TWO
    ("m.py::Foo", "m.py::Foo::bar"),  # the method, spelled with ::, is inside the class
]


@pytest.mark.parametrize(("first", "alias"), TEXT_ALIASES)
def test_a_spelling_alias_is_the_same_key(store: Store, first: str, alias: str) -> None:
    got = store.leases.try_acquire("A", "u1", [w(first)], 30)
    assert isinstance(got, Acquired)
    second = store.leases.try_acquire("B", "u2", [w(alias)], 30)
    assert isinstance(second, Refused), alias
    # and the other way round, on a fresh symbol pair
    store.leases.release("A")
    got = store.leases.try_acquire("A", "u1", [w(alias)], 30)
    assert isinstance(got, Acquired)
    assert isinstance(store.leases.try_acquire("B", "u2", [w(first)], 30), Refused)


def test_the_grant_carries_the_canonical_key_and_fencing_accepts_aliases(store: Store) -> None:
    got = store.leases.try_acquire("A", "u1", [w(f"m.py::Foo::{CAFE_NFD}")], 30)
    assert isinstance(got, Acquired)
    grant = got.grants[0]
    assert grant.symbol == f"m.py::Foo.{CAFE_NFC}"
    assert store.leases.check_fence(f"./m.py::Foo.{CAFE_NFD}", grant.token)
    assert [g.lease_id for g in store.leases.held("./m.py")] == [grant.lease_id]


def test_one_request_set_with_two_spellings_is_one_lease(store: Store) -> None:
    got = store.leases.try_acquire("A", "u1", [w("a.py::Foo.bar"), w("a.py::Foo::bar")], 30)
    assert isinstance(got, Acquired) and len(got.grants) == 1


def test_javascript_names_are_bound_as_written(store: Store) -> None:
    # ECMAScript does not normalise identifiers: NFC and NFD café are two bindings there.
    assert isinstance(store.leases.try_acquire("A", "u1", [w(f"a.js::{CAFE_NFC}")], 30), Acquired)
    assert isinstance(store.leases.try_acquire("B", "u2", [w(f"a.js::{CAFE_NFD}")], 30), Acquired)
    # but the spelling of the separator is still one
    assert isinstance(store.leases.try_acquire("A", "u3", [w("a.js::K.m")], 30), Acquired)
    assert isinstance(store.leases.try_acquire("B", "u4", [w("a.js::K::m")], 30), Refused)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("a.py::", "empty name"),
        ("a.py::Foo..bar", "empty name"),
        ("a.py::Foo.", "empty name"),
        ("/etc/a.py::Foo", "relative"),
        ("../a.py::Foo", "'..'"),
        ("a.py::Foo\ud800", "not valid Unicode"),
        ("a\udcff.py", "not valid Unicode"),
        ("a.py::Foo\nbar", "control character"),
        ("a.py::Foo ", "spaces"),
        ("pkg\\a.py::Foo", "'/'"),
    ],
)
def test_a_key_without_canonical_form_is_refused(store: Store, bad: str, message: str) -> None:
    with pytest.raises(LeaseKeyError, match=message):
        store.leases.try_acquire("A", "u1", [w(bad)], 30)
    assert store.leases.held() == []


@pytest.mark.parametrize(
    "alias",
    [
        "alias.py::Foo.bar",
        "money/legacy.py::Foo.bar",
        "absolute.py::Foo.bar",
        "chain.py::Foo::bar",
        "alias.py",
    ],
)
def test_a_symlink_inside_the_repository_is_its_target(rooted: Store, alias: str) -> None:
    got = rooted.leases.try_acquire("A", "u1", [w("billing/legacy.py::Foo.bar")], 30)
    assert isinstance(got, Acquired)
    second = rooted.leases.try_acquire("B", "u2", [w(alias)], 30)
    assert isinstance(second, Refused), alias
    assert second.blocking == (("billing/legacy.py::Foo.bar", "A"),)


def test_a_symlink_lease_is_granted_on_the_real_path(rooted: Store) -> None:
    got = rooted.leases.try_acquire("A", "u1", [w("alias.py::Foo")], 30)
    assert isinstance(got, Acquired)
    assert got.grants[0].symbol == "billing/legacy.py::Foo"
    assert [g.symbol for g in rooted.leases.held("money/legacy.py")] == ["billing/legacy.py::Foo"]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("out.py::Foo", "leaving the repository"),
        ("billing/up.py::Foo", "outside the repository"),
        ("loop_a::Foo", "symlink loop"),
        ("loop_b", "symlink loop"),
    ],
)
def test_a_symlink_leaving_the_repository_or_looping_is_refused(
    rooted: Store, bad: str, message: str
) -> None:
    with pytest.raises(LeaseKeyError, match=message):
        rooted.leases.try_acquire("A", "u1", [w(bad)], 30)
    with pytest.raises(LeaseKeyError, match=message):
        rooted.leases.held(bad)


def test_a_path_spelled_nfd_is_the_nfc_file_that_exists(rooted: Store, repo: Path) -> None:
    # Linux names are bytes: café.py (NFC) exists, cafe\u0301.py (NFD) does not; the
    # NFD request used to be its own key, a second writer on the same file (both stores)
    (repo / f"{CAFE_NFC}.py").write_text("x = 1\n")
    assert isinstance(rooted.leases.try_acquire("A", "u1", [w(f"{CAFE_NFC}.py::x")], 30), Acquired)
    refused = rooted.leases.try_acquire("B", "u2", [w(f"{CAFE_NFD}.py::x")], 30)
    assert not isinstance(refused, Acquired), refused
    # and a name that does not exist yet is one key in both spellings (its NFC form)
    new = rooted.leases.try_acquire("A", "u1", [w(f"new-{CAFE_NFD}.py")], 30)
    assert isinstance(new, Acquired) and new.grants[0].symbol == f"new-{CAFE_NFC}.py"
    assert not isinstance(rooted.leases.try_acquire("B", "u2", [w(f"new-{CAFE_NFC}.py")], 30),
                          Acquired)
