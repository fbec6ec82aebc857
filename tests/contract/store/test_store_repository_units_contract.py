"""Units and leases of two repositories on one store (both stores): a fork and its upstream at
the same commit plan the same findings into units of the same keys, each its repository's; each
repository plans, loads and resolves only its own units; a unit of another repository is
refused; and the two repositories' leases on the same paths, under the same holder names, never
block, renew, release or fence off each other's, while inside one repository the hierarchy and
fencing hold as before."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fleet.campaigns.spec import load_campaign
from fleet.home import repository_key
from fleet.plan import plan_campaign, plan_from_dict
from fleet.store import Store
from fleet.store._leases import NAMESPACE_SEPARATOR, lease_namespace
from fleet.store.repo_scope import scoped_store
from fleet.types import Acquired, LeaseRequest, Refused, WorkUnit
from fleet.unit import ForeignUnit, load_units, record_planned, resolve_units, unit_from_dict
from tests.conftest import commit_files, git

CAMPAIGN = "yaml-safe-load"
FILES = {
    "app/__init__.py": "",
    "app/config.py": "import yaml\n\n\ndef load_config(text):\n    return yaml.load(text)\n",
}
SYM = "app/config.py::load_config"


def _upstream_and_fork(tmp_path: Path) -> tuple[Path, Path]:
    """``up`` (origin github.com/acme/shop) and ``fork``, a clone of it at the same commit
    whose origin is github.com/fork/shop: two repositories with the same code and history."""
    up = tmp_path / "up"
    up.mkdir()
    git(up, "init", "-q", "-b", "main")
    commit_files(up, FILES, "initial")
    git(up, "remote", "add", "origin", "https://github.com/acme/shop.git")
    fork = tmp_path / "fork"
    git(tmp_path, "clone", "-q", str(up), str(fork))
    git(fork, "remote", "set-url", "origin", "git@github.com:fork/shop.git")
    return up, fork


def test_a_fork_and_its_upstream_plan_units_of_their_own(store: Store, tmp_path: Path) -> None:
    up, fork = _upstream_and_fork(tmp_path)
    keys = {"up": repository_key(up), "fork": repository_key(fork)}
    assert keys == {"up": "github.com/acme/shop", "fork": "github.com/fork/shop"}
    spec = load_campaign(CAMPAIGN)
    bare = plan_campaign(up, spec)
    plans = {name: plan_campaign(r, spec, repository=keys[name])
             for name, r in (("up", up), ("fork", fork))}
    up_units, fork_units = plans["up"].units, plans["fork"].units
    assert len(up_units) == len(fork_units) == 1
    # the same commit, the same code: units of the same key (as `fleet plan` prints it), each
    # its own repository's
    assert up_units[0].base_commit == fork_units[0].base_commit
    assert up_units[0].key == fork_units[0].key == bare.units[0].key
    assert (up_units[0].repository, fork_units[0].repository) == (keys["up"], keys["fork"])
    assert bare.units[0].repository == ""
    assert plans["up"].to_dict()["repository"] == keys["up"]
    assert plan_from_dict(plans["fork"].to_dict()).units == fork_units

    a, b = scoped_store(store, keys["up"]), scoped_store(store, keys["fork"])
    assert record_planned(a.ledger, up_units) == 1
    assert record_planned(b.ledger, fork_units) == 1
    # a unit of the other repository: refused, nothing recorded
    with pytest.raises(ForeignUnit, match=re.escape(
            "belongs to 'github.com/fork/shop', not to the repository 'github.com/acme/shop'")):
        record_planned(a.ledger, fork_units)
    assert [e.repo for e in store.ledger.events(kind="unit.planned")] == [keys["up"],
                                                                           keys["fork"]]
    assert load_units(a.ledger, CAMPAIGN) == list(up_units)  # repository and all, as planned
    assert load_units(b.ledger, CAMPAIGN) == list(fork_units)
    assert resolve_units(a.ledger, CAMPAIGN, ["all"]) == [up_units[0].key]
    # the whole store (no repository named) has both records, each naming its repository
    assert {unit_from_dict(e.payload).repository
            for e in store.ledger.events(kind="unit.planned")} == set(keys.values())


def test_a_unit_of_no_repository_is_loaded_by_none(store: Store) -> None:
    """A ``unit.planned`` event of no repository (written unscoped, before units had one) is not
    any repository's unit on a shared store; a unit planned through a scoped ledger without a
    repository of its own is adopted by it."""
    legacy = WorkUnit("legacy", CAMPAIGN, "a" * 40, (SYM,), (), ())
    record_planned(store.ledger, [legacy])
    a = scoped_store(store, "github.com/acme/shop")
    assert load_units(a.ledger, CAMPAIGN) == []
    # planned again by the repository (the same key): now its own, recorded once
    assert record_planned(a.ledger, [legacy]) == 1
    assert record_planned(a.ledger, [legacy]) == 0
    assert [u.repository for u in load_units(a.ledger, CAMPAIGN)] == ["github.com/acme/shop"]
    adopted = WorkUnit("handmade", CAMPAIGN, "a" * 40, (SYM,), (), ())
    record_planned(a.ledger, [adopted])
    [back] = load_units(a.ledger, CAMPAIGN, ["handmade"])
    assert back.repository == "github.com/acme/shop"


def _write(symbol: str = SYM) -> list[LeaseRequest]:
    return [LeaseRequest(symbol, "write")]


def test_two_repositories_lease_the_same_paths_without_meeting(store: Store) -> None:
    a = scoped_store(store, "github.com/acme/shop").leases
    b = scoped_store(store, "github.com/fork/shop").leases
    got_a = a.try_acquire("fleet:w0:ua", "ua", _write(), 60)
    assert isinstance(got_a, Acquired) and got_a.grants[0].symbol == SYM
    # the same symbol, and the whole file around it, in the other repository: granted
    got_b = b.try_acquire("fleet:w0:ub", "ub", [*_write(), *_write("app/config.py")], 60)
    assert isinstance(got_b, Acquired)
    assert sorted(g.symbol for g in got_b.grants) == ["app/config.py", SYM]
    # inside one repository the hierarchy holds as before: A's file lease is refused
    refused = a.try_acquire("fleet:w1:ua2", "ua2", _write("app/config.py"), 60)
    assert isinstance(refused, Refused)
    assert refused.blocking == ((SYM, "fleet:w0:ua"),)  # named as A gave it
    assert NAMESPACE_SEPARATOR not in refused.reason and SYM in refused.reason
    # each repository sees its own leases; the whole store sees both, each in its namespace
    assert [(g.symbol, g.holder) for g in a.held()] == [(SYM, "fleet:w0:ua")]
    assert sorted(g.symbol for g in b.held(within="app/config.py")) == ["app/config.py", SYM]
    everything = sorted(g.symbol for g in store.leases.held())
    assert everything == sorted(
        [f"{lease_namespace('github.com/acme/shop')}{NAMESPACE_SEPARATOR}{SYM}",
         f"{lease_namespace('github.com/fork/shop')}{NAMESPACE_SEPARATOR}app/config.py",
         f"{lease_namespace('github.com/fork/shop')}{NAMESPACE_SEPARATOR}{SYM}"])
    assert store.leases.held(within=SYM) == []  # a lease of no repository: none here
    # fencing: A's next writer fences off A's first token, never B's
    token_a = got_a.grants[0].token
    token_b = next(g.token for g in got_b.grants if g.symbol == SYM)
    assert a.release("fleet:w0:ua") == 1
    again = a.try_acquire("fleet:w2:ua3", "ua3", _write(), 60)
    assert isinstance(again, Acquired)
    assert not a.check_fence(SYM, token_a)
    assert a.check_fence(SYM, again.grants[0].token)
    assert b.check_fence(SYM, token_b)  # still valid for B's integration
    assert not b.check_fence(SYM, again.grants[0].token)  # A's token is nothing in B
    assert not store.leases.check_fence(SYM, token_b)  # nor outside B


def test_a_repository_key_that_could_split_a_lease_key_is_hashed(store: Store) -> None:
    odd = "/srv/a::b/repo@1111aaaa2222"
    ns = lease_namespace(odd)
    assert ns.startswith("sha256:") and "::" not in ns
    assert lease_namespace("github.com/acme/shop") == "github.com/acme/shop"
    leases = scoped_store(store, odd).leases
    got = leases.try_acquire("h", "u", _write(), 60)
    assert isinstance(got, Acquired) and got.grants[0].symbol == SYM
    assert [g.symbol for g in leases.held(within="app/config.py")] == [SYM]
    assert leases.check_fence(SYM, got.grants[0].token)


def test_one_holder_name_in_two_repositories_keeps_to_its_own(store: Store) -> None:
    """A fork and its upstream run units of one key, so their holders have one name
    (``fleet:w0:<key>``): each renews and releases only its own repository's leases."""
    a = scoped_store(store, "github.com/acme/shop").leases
    b = scoped_store(store, "github.com/fork/shop").leases
    holder = "fleet:w0:0123456789abcdef"
    got_a = a.try_acquire(holder, "0123456789abcdef", _write(), 60)
    got_b = b.try_acquire(holder, "0123456789abcdef", _write(), 60)
    assert isinstance(got_a, Acquired) and isinstance(got_b, Acquired)
    assert got_a.grants[0].holder == got_b.grants[0].holder == holder
    assert [g.holder for g in a.held(holder=holder)] == [holder]
    assert a.renew(holder, 120) == 1  # A's lease only
    assert a.release(holder) == 1
    assert a.held() == [] and [g.symbol for g in b.held(holder=holder)] == [SYM]
    assert b.release(holder, [got_a.grants[0].lease_id]) == 0  # A's id is not B's holder's
    assert b.check_fence(SYM, got_b.grants[0].token)
    assert b.release(holder) == 1 and store.leases.held() == []
