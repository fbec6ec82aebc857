"""What both lease stores share: the symbol hierarchy, request normalization, fencing rules and
the ranked all-or-nothing ``acquire_all`` loop with exponential backoff and jitter.

Hierarchy: ``a.py`` (a bare path: the whole file) contains ``a.py::Foo``, which contains
``a.py::Foo.bar``. ``a.py::Foo`` does not contain ``a.py::Foobar``: a child starts with the
parent followed by ``.`` (inside a symbol) or ``::`` (inside a file). Two leases conflict when one
symbol contains the other (or they are equal) and at least one of them is a write.

Repositories: :meth:`LeaseStoreBase.for_repo` is the view of one repository, whose keys are
stored as ``<namespace> U+001E <key>`` (:func:`lease_namespace`). The namespace is part of every
key's path, so all of a repository's keys, their ancestors and their descendant ranges lie in
that repository's own part of the key space: leases of two repositories on one store never
conflict and never fence each other off; holders are stored the same way, so one holder name in
two repositories (a fork and its upstream plan units of the same keys) renews and releases
only its own repository's leases. The store's SQL (and the PostgreSQL hot path,
its advisory locks and fences) stay what they are.
"""

from __future__ import annotations

import copy
import hashlib
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Self

from fleet.backoff import backoff_s
from fleet.store.keys import canonical_symbol
from fleet.types import Acquired, AcquireResult, Grant, LeaseMode, LeaseRequest, Refused

__all__ = [
    "NAMESPACE_SEPARATOR",
    "LeaseStoreBase",
    "ancestors",
    "conflicts",
    "contains",
    "descendant_range",
    "fence_holds",
    "grant_from_row",
    "lease_namespace",
    "normalize",
    "refused_by",
]

NAMESPACE_SEPARATOR = "\x1e"  # a control character: no canonical key contains one


def lease_namespace(repo: str) -> str:
    """The lease namespace of the repository whose store key is ``repo`` (``""``: none): the key
    itself, or ``sha256:<hex>`` of it when it holds what a key's path must not (``::``, a
    control character), so the namespace never splits a key."""
    if not repo:
        return ""
    if "::" in repo or any(ord(c) < 32 or ord(c) == 127 for c in repo):
        return "sha256:" + hashlib.sha256(repo.encode()).hexdigest()[:32]
    return repo


def ancestors(symbol: str) -> list[str]:
    """Every symbol that contains ``symbol``, outermost first (``a.py``, ``a.py::Foo``, ...)."""
    path, sep, qualified = symbol.partition("::")
    if not sep:
        return []
    out = [path]
    parts = qualified.split(".")
    for index in range(1, len(parts)):
        out.append(f"{path}::{'.'.join(parts[:index])}")
    return out


def descendant_range(symbol: str) -> tuple[str, str]:
    """``[lo, hi)`` in binary (bytewise) order covering exactly the symbols inside ``symbol``."""
    if "::" in symbol:
        return symbol + ".", symbol + "/"  # "/" is the byte after "."
    return symbol + "::", symbol + ":;"  # ";" is the byte after ":"


def contains(outer: str, inner: str) -> bool:
    lo, hi = descendant_range(outer)
    return lo <= inner < hi


def conflicts(a: str, a_mode: str, b: str, b_mode: str) -> bool:
    """True when leases ``(a, a_mode)`` and ``(b, b_mode)`` of two holders cannot coexist."""
    if a_mode == "read" and b_mode == "read":
        return False
    return a == b or contains(a, b) or contains(b, a)


def normalize(
    requests: Sequence[LeaseRequest], root: str | Path | None = None
) -> list[LeaseRequest]:
    """One request per canonical key (:mod:`fleet.store.keys`; write wins over read, lowest rank
    kept), by ``(rank, symbol)``. Raises ``LeaseKeyError`` (a ``ValueError``) for a key with no
    canonical form."""
    merged: dict[str, LeaseRequest] = {}
    for request in requests:
        if request.mode not in ("read", "write"):
            raise ValueError(f"lease mode must be 'read' or 'write', not {request.mode!r}")
        if not request.symbol:
            raise ValueError("lease symbol must not be empty")
        symbol = canonical_symbol(request.symbol, root)
        seen = merged.get(symbol)
        if seen is None:
            merged[symbol] = LeaseRequest(symbol, request.mode, request.rank)
        else:
            mode: LeaseMode = "write" if "write" in (seen.mode, request.mode) else "read"
            merged[symbol] = LeaseRequest(symbol, mode, min(seen.rank, request.rank))
    return sorted(merged.values(), key=lambda r: (r.rank, r.symbol))


def fence_holds(token: int, issued: int | None, newest_write: int | None) -> bool:
    """The fencing rule: ``token`` was issued on the symbol (``issued`` is the newest token issued
    there) and no write lease on the symbol, inside it or around it was granted after it by a
    later acquisition (``newest_write`` is the first token of the newest writing acquisition
    there, so the grants of one call never fence each other off)."""
    if issued is None or token > issued or token <= 0:
        return False
    return (newest_write or 0) <= token


class LeaseStoreBase(ABC):
    """The dialect-independent half of a :class:`fleet.protocols.LeaseStore`.

    Every symbol it is given is first made its canonical key (:mod:`fleet.store.keys`); with
    ``root`` (the repository the keys' paths are in) paths are resolved through its symlinks."""

    backoff_initial_s = 0.005
    backoff_max_s = 0.5
    root: Path | None = None
    namespace: str = ""
    """The repository these leases are of (:func:`lease_namespace`); ``""``: of none."""

    def key(self, symbol: str) -> str:
        """The canonical key of ``symbol`` in this store (``LeaseKeyError`` when it has none)."""
        return canonical_symbol(symbol, self.root)

    def for_repo(self, repo: str) -> Self:
        """The leases of the repository whose store key is ``repo``, on the same database: its
        keys are its own (see the module docstring); grants, blockers and ``held`` name them as
        given, without the namespace; holders are this repository's too."""
        view = copy.copy(self)
        view.namespace = lease_namespace(repo)
        return view

    def stored(self, symbol: str) -> str:
        """``symbol`` (a canonical key) as this view stores it."""
        return f"{self.namespace}{NAMESPACE_SEPARATOR}{symbol}" if self.namespace else symbol

    def stored_holder(self, holder: str) -> str:
        """``holder`` as this view stores it."""
        return self.stored(holder)

    def stored_requests(self, wanted: list[LeaseRequest]) -> list[LeaseRequest]:
        if not self.namespace:
            return wanted
        return [LeaseRequest(self.stored(r.symbol), r.mode, r.rank) for r in wanted]

    def _bare(self, text: str) -> str:
        if not self.namespace:
            return text
        return text.replace(f"{self.namespace}{NAMESPACE_SEPARATOR}", "")

    def shown(self, result: AcquireResult) -> AcquireResult:
        """``result`` with its keys as the caller gave them (the namespace taken off)."""
        if not self.namespace:
            return result
        if isinstance(result, Acquired):
            return Acquired(tuple(self.shown_grants(result.grants)))
        return Refused(self._bare(result.reason),
                       tuple((self._bare(s), self._bare(h)) for s, h in result.blocking))

    def shown_grants(self, grants: Iterable[Grant]) -> list[Grant]:
        """This view's grants among ``grants``, keys without the namespace."""
        if not self.namespace:
            return list(grants)
        prefix = f"{self.namespace}{NAMESPACE_SEPARATOR}"
        return [Grant(g.lease_id, g.symbol[len(prefix):], g.mode, self._bare(g.holder), g.token,
                      g.expires_at) for g in grants if g.symbol.startswith(prefix)]

    @abstractmethod
    def try_acquire(
        self, holder: str, unit: str, requests: Sequence[LeaseRequest], ttl_s: float
    ) -> AcquireResult: ...

    def acquire_all(
        self,
        holder: str,
        unit: str,
        requests: Sequence[LeaseRequest],
        ttl_s: float,
        deadline_s: float = 45.0,
    ) -> AcquireResult:
        """Attempt the whole set in ``(rank, symbol)`` order in one transaction; when any lease is
        held by another, nothing is kept, and the next attempt waits a random time in
        ``[0, backoff)`` with the backoff doubling up to ``backoff_max_s`` (full jitter). At the
        deadline it returns the last ``Refused``."""
        end = time.monotonic() + deadline_s
        attempts = 0
        while True:
            attempts += 1
            result = self.try_acquire(holder, unit, requests, ttl_s)
            if isinstance(result, Acquired):
                return result
            remaining = end - time.monotonic()
            if remaining <= 0:
                return Refused(
                    f"deadline of {deadline_s:g}s passed after {attempts} attempts: "
                    f"{result.reason}",
                    result.blocking,
                )
            wait = backoff_s(attempts - 1, self.backoff_initial_s, self.backoff_max_s)
            time.sleep(min(remaining, wait))

    @abstractmethod
    def renew(self, holder: str, ttl_s: float) -> int: ...

    @abstractmethod
    def release(self, holder: str, lease_ids: Iterable[str] | None = None) -> int: ...

    @abstractmethod
    def check_fence(self, symbol: str, token: int) -> bool: ...

    @abstractmethod
    def held(self, within: str | None = None, holder: str | None = None) -> list[Grant]:
        """Live leases on ``within`` or inside it (all when ``None``), optionally of one holder."""

    @abstractmethod
    def reap(self) -> int:
        """Delete expired leases (they are already ignored); returns how many."""


def grant_from_row(row: dict[str, object]) -> Grant:
    return Grant(
        lease_id=str(row["id"]),
        symbol=str(row["symbol"]),
        mode="write" if row["mode"] == "write" else "read",
        holder=str(row["holder"]),
        token=int(row["token"]),  # type: ignore[call-overload]
        expires_at=float(row["expires_at"]),  # type: ignore[arg-type]
    )


def refused_by(rows: Iterable[dict[str, object]], symbol: str) -> Refused:
    blocking = tuple(sorted({(str(r["symbol"]), str(r["holder"])) for r in rows}))
    holders = ", ".join(f"{s} held by {h}" for s, h in blocking)
    return Refused(f"{symbol} conflicts with {holders}", blocking)
