"""The only composition root of the Dagster code location (``workspace.yaml`` loads it)."""

from __future__ import annotations

from dagster import Definitions

defs = Definitions()
