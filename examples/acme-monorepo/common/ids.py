"""Prefixed, sortable identifiers (``cus_...``, ``inv_...``, ``ten_...``)."""

from __future__ import annotations

import itertools
import secrets
import threading

_counter = itertools.count(1)
_lock = threading.Lock()

PREFIXES = {"customer": "cus", "invoice": "inv", "tenant": "ten", "charge": "ch", "user": "usr",
            "session": "ses", "subscription": "sub", "refund": "re", "event": "evt"}


def new_id(kind: str) -> str:
    """A new id for ``kind``: its prefix, a process-wide sequence and random suffix."""
    try:
        prefix = PREFIXES[kind]
    except KeyError:
        raise ValueError(f"unknown id kind {kind!r}") from None
    with _lock:
        seq = next(_counter)
    return f"{prefix}_{seq:06d}{secrets.token_hex(4)}"


def kind_of(identifier: str) -> str:
    """The kind of an id made by :func:`new_id`."""
    prefix = identifier.split("_", 1)[0]
    for kind, known in PREFIXES.items():
        if known == prefix:
            return kind
    raise ValueError(f"not an Acme id: {identifier!r}")
