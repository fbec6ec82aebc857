"""Stores behind the protocols of :mod:`fleet.protocols`: leases, task queue, ledger, controls
(kill switch, budgets), project memory and the artifact library. ``sqlite.py`` (embedded default)
and ``postgres.py`` (shared); SQL in ``sql/*.sql`` named blocks."""
