"""Is a service a deployment needs up? One line naming it when it is not (no password)."""

from __future__ import annotations

import logging
import time

__all__ = ["OneLineRetries", "broker_down", "database_down", "storage_failure"]


def broker_down(url: str, timeout_s: float = 5.0, wait_s: float = 0.0) -> str | None:
    """One line naming the broker when it does not answer, else None. With ``wait_s``, a
    broker that refuses is tried again every second until it answers or ``wait_s`` has passed
    (a broker restarting takes a few seconds: a sweep rides that out, a broker that stays down
    is still named)."""
    from kombu import Connection

    deadline = time.monotonic() + wait_s
    while True:
        try:
            with Connection(url, connect_timeout=timeout_s) as conn:
                conn.ensure_connection(max_retries=1, timeout=timeout_s)
        except Exception as exc:  # kombu wraps every transport's own error
            if time.monotonic() + 1.0 > deadline:
                return f"the celery broker {_safe(url)} is down: {_reason(exc)}"
            time.sleep(1.0)
            continue
        return None


def database_down(name: str, url: str, timeout_s: float = 5.0) -> str | None:
    """One line naming the database ``name`` (its variable) when it refuses a connection."""
    if not url.startswith(("postgresql", "postgres:")):
        return None
    import psycopg

    dsn = "postgresql://" + url.split("://", 1)[1]
    try:
        with psycopg.connect(dsn, connect_timeout=int(timeout_s)):
            pass
    except psycopg.Error as exc:
        return f"the database {name}={_safe(url)} is down: {_reason(exc)}"
    return None


def _safe(url: str) -> str:
    """``url`` without its password."""
    scheme, sep, rest = url.partition("://")
    creds, at, host = rest.rpartition("@")
    if not at:
        return url
    user = creds.split(":", 1)[0]
    return f"{scheme}{sep}{user}:***@{host}"


def _reason(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[-1] if lines else type(exc).__name__


def storage_failure(exc: BaseException) -> str | None:
    """Why a database refused Dagster's storage, in one line, when ``exc`` (or one of its
    causes) is a database driver's error or dagster-postgres giving up its retries; else None
    (anything else is not a storage that is down)."""
    seen: list[BaseException] = []
    error: BaseException | None = exc
    while error is not None and error not in seen and len(seen) < 20:
        seen.append(error)
        error = error.__cause__ or error.__context__
    driver = [e for e in seen if type(e).__module__.split(".")[0] in {"psycopg", "psycopg2",
                                                                      "sqlite3", "sqlalchemy"}
              or type(e).__name__ == "DagsterPostgresException"]
    if not driver:
        return None
    lines = [ln.strip() for ln in str(driver[-1]).splitlines() if ln.strip()
             and not ln.strip().startswith("(Background on this error")]
    return " ".join(lines) or type(driver[-1]).__name__


class OneLineRetries(logging.Filter):
    """dagster-postgres says each retry of a refused connection as a root-logger warning of
    three lines (the driver's hint, SQLAlchemy's link): as a filter on the root logger, each
    becomes one line that says what is waited for."""

    PREFIX = "Retrying failed database connection"

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "root" and str(record.msg).startswith(self.PREFIX):
            reason = storage_failure(record.args[0]) if isinstance(record.args, tuple) and \
                record.args and isinstance(record.args[0], BaseException) else None
            record.msg = f"the Dagster storage's database refused a connection, retrying: {reason}"
            record.args = ()
        return True
