"""Ledger checkpoints: the head of the chain (sequence number and hash) kept outside the database.

The hash chain alone proves only that the events agree with each other: deleting the newest
events, or editing one and recomputing every later hash, leaves a chain that verifies. A
checkpoint written somewhere the database's writer cannot rewrite -- a git note on the
integration branch's commit at every hand-over (``refs/notes/fleet-ledger``), or a file on
request (``fleet ledger checkpoint --out``) -- pins event ``seq`` to ``hash``: the ledger must
still reach ``seq`` (else it was truncated) and hold that hash there (else the chain was
recomputed). Text form, one line::

    fleet-ledger-checkpoint seq=200 hash=<64 hex digits>
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from fleet.errors import ConfigError

__all__ = ["NOTES_REF", "Checkpoint", "parse_checkpoints", "read_checkpoint"]

NOTES_REF = "refs/notes/fleet-ledger"
_LINE = re.compile(r"fleet-ledger-checkpoint seq=(?P<seq>[0-9]{1,18}) hash=(?P<hash>[0-9a-f]{64})")


@dataclass(frozen=True)
class Checkpoint:
    """Event ``seq`` of the ledger had hash ``hash``; ``source`` says where it was read."""

    seq: int
    hash: str
    source: str = ""

    def text(self) -> str:
        return f"fleet-ledger-checkpoint seq={self.seq} hash={self.hash}"


def parse_checkpoints(text: str, source: str) -> list[Checkpoint]:
    """Every checkpoint line in ``text`` (a note may hold several)."""
    return [Checkpoint(int(m.group("seq")), m.group("hash"), source) for m in _LINE.finditer(text)]


def read_checkpoint(path: str | Path) -> Checkpoint:
    """The checkpoint in the file ``path``; ``ConfigError`` (one line) when there is none."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"checkpoint {path}: cannot read it ({exc.strerror})") from None
    found = parse_checkpoints(data.decode("utf-8", "replace"), str(path))
    if len(found) != 1:
        raise ConfigError(
            f"checkpoint {path}: expected one line 'fleet-ledger-checkpoint seq=N hash=H', "
            f"found {len(found)}"
        )
    return found[0]


def check(checkpoint: Checkpoint, hashes: dict[int, str], last_seq: int) -> list[str]:
    """What ``checkpoint`` finds wrong with a ledger whose events have ``hashes`` by seq."""
    where = f"checkpoint {checkpoint.source}: " if checkpoint.source else "checkpoint: "
    if checkpoint.seq == 0:
        return []
    if last_seq < checkpoint.seq:
        return [
            f"{where}the ledger ends at seq {last_seq} but had reached seq {checkpoint.seq} "
            "(events deleted)"
        ]
    stored = hashes.get(checkpoint.seq)
    if stored is None:
        return [f"{where}event seq {checkpoint.seq} is missing"]
    if stored != checkpoint.hash:
        return [
            f"{where}event seq {checkpoint.seq} has hash {stored[:12]}, the checkpoint says "
            f"{checkpoint.hash[:12]} (the chain was rewritten)"
        ]
    return []
