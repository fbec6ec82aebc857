"""Bearer tokens of the coordinator API, stored hashed.

A token reads ``fleet_<id>_<secret>``; the store keeps only SHA-256 of the secret, looks the row
up by id and compares the hashes in constant time (:func:`hmac.compare_digest`). Scopes:
``leases``, ``jobs``, ``admin`` (admin may do everything)."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from fleet.store._db import Database, Row

__all__ = ["SCOPES", "SqlApiTokens", "TokenInfo"]

SCOPES = ("leases", "jobs", "admin")


@dataclass(frozen=True)
class TokenInfo:
    token_id: str
    name: str
    scopes: tuple[str, ...]
    created_at: float
    revoked: bool

    def allows(self, scope: str) -> bool:
        return not self.revoked and (scope in self.scopes or "admin" in self.scopes)


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _info(row: Row) -> TokenInfo:
    return TokenInfo(
        row["id"],
        row["name"],
        tuple(json.loads(row["scopes"])),
        float(row["created_at"]),
        row["revoked_at"] is not None,
    )


class SqlApiTokens:
    def __init__(self, db: Database) -> None:
        self.db = db

    def create(self, name: str, scopes: Iterable[str]) -> tuple[str, TokenInfo]:
        """A new token: returns the secret token string (shown once) and its info."""
        wanted = tuple(sorted(set(scopes)))
        unknown = [s for s in wanted if s not in SCOPES]
        if not wanted or unknown:
            raise ValueError(f"scopes must be a non-empty subset of {SCOPES}; got {list(scopes)}")
        token_id = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        with self.db.write() as tx:
            tx.run(
                "token_insert",
                {
                    "id": token_id,
                    "name": name,
                    "secret_hash": _hash(secret),
                    "scopes": json.dumps(list(wanted)),
                    "now": self.db.now(),
                },
            )
            row = tx.one("token_get", {"id": token_id})
        assert row is not None
        return f"fleet_{token_id}_{secret}", _info(row)

    def verify(self, token: str) -> TokenInfo | None:
        """The token's info when it is genuine and not revoked, else None."""
        prefix, _, rest = token.partition("_")
        token_id, _, secret = rest.partition("_")
        if prefix != "fleet" or not token_id or not secret:
            return None
        with self.db.read() as tx:
            row = tx.one("token_get", {"id": token_id})
        if row is None:
            hmac.compare_digest(_hash(secret), _hash(""))  # same work for unknown ids
            return None
        if not hmac.compare_digest(_hash(secret), row["secret_hash"]):
            return None
        info = _info(row)
        return None if info.revoked else info

    def list(self) -> list[TokenInfo]:
        with self.db.read() as tx:
            return [_info(row) for row in tx.all("token_list")]

    def revoke(self, token_id: str) -> bool:
        with self.db.write() as tx:
            return tx.run("token_revoke", {"id": token_id, "now": self.db.now()}) == 1
