"""Is a service a deployment needs up? One line naming it when it is not (no password)."""

from __future__ import annotations

__all__ = ["broker_down", "database_down"]


def broker_down(url: str, timeout_s: float = 5.0) -> str | None:
    """One line naming the broker when it does not answer, else None."""
    from kombu import Connection

    try:
        with Connection(url, connect_timeout=timeout_s) as conn:
            conn.ensure_connection(max_retries=1, timeout=timeout_s)
    except Exception as exc:  # kombu wraps every transport's own error
        return f"the celery broker {_safe(url)} is down: {_reason(exc)}"
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
