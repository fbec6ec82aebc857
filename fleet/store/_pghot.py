"""The PostgreSQL lease hot path on libpq directly: a named statement, prepared once per
connection, executed with text parameters and read as text, without psycopg's cursor, adaptation
and row machinery (about a third of the client CPU of the same call through a cursor).

Lists travel as one text parameter (symbols joined by ``\\x1f``, ids by ``,``) and are split by
the server with ``string_to_array``. Errors leave as psycopg exceptions (the caller translates
them at the store's edge, as for every other statement).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import errors, pq

__all__ = ["SEPARATOR", "HotStatement", "numbered"]

SEPARATOR = "\x1f"  # ASCII unit separator: never part of a symbol id (try_acquire refuses it)
_UNDEFINED_STATEMENT = b"26000"


def numbered(sql: str, names: Sequence[str]) -> str:
    """``sql`` with its ``%(name)s`` parameters replaced by ``$1, $2, ...`` in the order of
    ``names`` (each must occur exactly once, in that order)."""
    found = re.findall(r"%\(([a-z_]+)\)s", sql)
    if found != list(names):
        raise ValueError(f"expected parameters {list(names)}, the query has {found}")
    counter = iter(range(1, len(names) + 1))
    return re.sub(r"%\(([a-z_]+)\)s", lambda _: f"${next(counter)}", sql)


class HotStatement:
    """One named statement of ``queries.sql``, run on an autocommit connection. It is prepared
    on a connection the first time that connection lacks it (the server answers 26000)."""

    def __init__(self, name: str, sql: str, params: Sequence[str]) -> None:
        self.name = f"fleet_{name}".encode()
        self.sql = numbered(sql, params).encode("utf-8")

    def rows(self, conn: psycopg.Connection[Any], params: Sequence[bytes]) -> list[list[Any]]:
        """The result rows as lists of ``bytes`` (text format) or ``None`` for NULL."""
        pgconn = conn.pgconn
        result = pgconn.exec_prepared(self.name, params)
        if (
            result.status == pq.ExecStatus.FATAL_ERROR
            and result.error_field(pq.DiagnosticField.SQLSTATE) == _UNDEFINED_STATEMENT
        ):
            prepared = pgconn.prepare(self.name, self.sql)
            if prepared.status != pq.ExecStatus.COMMAND_OK:
                raise errors.error_from_result(prepared)
            result = pgconn.exec_prepared(self.name, params)
        if result.status != pq.ExecStatus.TUPLES_OK:
            if pgconn.status == pq.ConnStatus.BAD:
                raise psycopg.OperationalError(
                    pgconn.get_error_message() or "the connection to the server was lost"
                )
            raise errors.error_from_result(result)
        width = result.nfields
        return [[result.get_value(r, c) for c in range(width)] for r in range(result.ntuples)]
