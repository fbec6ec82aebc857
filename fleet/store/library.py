"""The content-addressed library: artifacts (patches, reviews, transcripts, uploads) stored once
by SHA-256 of their bytes, referenced by campaign, unit, kind and name, and searchable by those and
by text, so one unit's output is easy for the next to find."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from fleet.store._db import Database, Row

__all__ = ["Artifact", "SqlLibrary"]


@dataclass(frozen=True)
class Artifact:
    hash: str
    campaign: str
    unit: str
    kind: str
    name: str
    size: int
    created_at: float


def _artifact(row: Row) -> Artifact:
    return Artifact(
        row["hash"],
        row["campaign"],
        row["unit"],
        row["kind"],
        row["name"],
        int(row["size"]),
        float(row["created_at"]),
    )


class SqlLibrary:
    def __init__(self, db: Database) -> None:
        self.db = db

    def put(
        self,
        content: bytes | str,
        *,
        kind: str,
        name: str,
        campaign: str = "",
        unit: str = "",
    ) -> Artifact:
        """Store ``content`` (text is stored as UTF-8; surrogate escapes of a legacy encoding's
        bytes go back to those bytes) and reference it; idempotent."""
        if isinstance(content, str):
            data = content.encode("utf-8", "surrogateescape")
        else:
            data = bytes(content)
        digest = hashlib.sha256(data).hexdigest()
        try:
            text: str | None = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and "\x00" in text:
            text = None  # PostgreSQL text cannot hold NUL; binary stays searchable by name
        params = {
            "hash": digest,
            "size": len(data),
            "content": data,
            "text": text,
            "campaign": campaign,
            "unit": unit,
            "kind": kind,
            "name": name,
            "now": self.db.now(),
        }
        with self.db.write() as tx:
            tx.run("artifact_insert", params)
            tx.run("artifact_ref_insert", params)
            row = tx.one("artifact_ref_get", params)
        assert row is not None
        return _artifact(row)

    def get(self, digest: str) -> bytes | None:
        with self.db.read() as tx:
            row = tx.one("artifact_get", {"hash": digest})
        return None if row is None else bytes(row["content"])

    def get_text(self, digest: str) -> str | None:
        data = self.get(digest)
        return None if data is None else data.decode("utf-8")

    def search(
        self,
        *,
        campaign: str | None = None,
        unit: str | None = None,
        kind: str | None = None,
        text: str | None = None,
        limit: int = 100,
    ) -> list[Artifact]:
        """Newest first; ``text`` matches the name or the content, case-insensitively."""
        params = {"campaign": campaign, "unit": unit, "kind": kind, "text": text, "limit": limit}
        with self.db.read() as tx:
            return [_artifact(row) for row in tx.all("artifact_search", params)]
