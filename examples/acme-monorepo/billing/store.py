"""In-memory persistence for charges and refunds (the production build swaps in PostgreSQL)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class ChargeRecord:
    charge_id: str
    customer_id: str
    amount_cents: int
    currency: str
    memo: str
    status: str
    idempotency_key: str | None = None
    refunded_cents: int = 0
    metadata: dict = field(default_factory=dict)


class ChargeStore:
    """Thread-safe charge records, indexed by id and by idempotency key."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_id: dict[str, ChargeRecord] = {}
        self._by_key: dict[str, str] = {}

    def add(self, record: ChargeRecord) -> ChargeRecord:
        with self._lock:
            self._by_id[record.charge_id] = record
            if record.idempotency_key:
                self._by_key[record.idempotency_key] = record.charge_id
        return record

    def get(self, charge_id: str) -> ChargeRecord | None:
        return self._by_id.get(charge_id)

    def by_idempotency_key(self, key: str) -> ChargeRecord | None:
        charge_id = self._by_key.get(key)
        return self._by_id.get(charge_id) if charge_id else None

    def for_customer(self, customer_id: str) -> list[ChargeRecord]:
        return [r for r in self._by_id.values() if r.customer_id == customer_id]

    def all(self) -> list[ChargeRecord]:
        return list(self._by_id.values())

    def clear(self) -> None:
        with self._lock:
            self._by_id.clear()
            self._by_key.clear()


charges = ChargeStore()
