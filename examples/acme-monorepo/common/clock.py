"""The wall clock, in one place so that tests can freeze it.

Acme stores timestamps as naive UTC datetimes (the database columns are ``timestamp without
time zone``).
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Iterator

_frozen: datetime.datetime | None = None


def utc_now() -> datetime.datetime:
    """The current time as a naive UTC datetime (or the frozen time in tests)."""
    if _frozen is not None:
        return _frozen
    return datetime.datetime.utcnow()


@contextlib.contextmanager
def frozen(at: datetime.datetime) -> Iterator[datetime.datetime]:
    """Freeze :func:`utc_now` at ``at`` for the duration of the block."""
    global _frozen
    previous, _frozen = _frozen, at
    try:
        yield at
    finally:
        _frozen = previous


def today() -> datetime.date:
    return utc_now().date()


def add_months(day: datetime.date, months: int) -> datetime.date:
    """``day`` moved by ``months`` calendar months, clamped to the end of shorter months."""
    month_index = day.month - 1 + months
    year, month = day.year + month_index // 12, month_index % 12 + 1
    for candidate in (31, 30, 29, 28):
        with contextlib.suppress(ValueError):
            return datetime.date(year, month, min(day.day, candidate))
    raise AssertionError("unreachable")
