"""Dagster assets and asset checks. Thin: each body calls one ``fleet`` function.

``symbol_graph`` and ``code_module_assets(home)`` (the repository's modules as assets), and
``campaign_assets(campaign, gates, symbol_graph, batch_size)`` (one campaign's chain from
``findings`` to ``pull_requests``). Resources are reached through the protocols of
``assets._seams``; the composition root is ``fleet_pipelines.definitions``.

The names are imported on first use (a module ``__getattr__``): every Dagster process opens the
instance through ``fleet_pipelines.storage``, which needs only ``assets._dagster_private``, and
importing a submodule runs this file first - an eager import here loaded all of ``fleet`` into
the daemon, the webserver and each run worker (issue 14).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assets.campaign import (
        AGENT_POOL,
        TARGET_FILES_TAG,
        CampaignAssets,
        campaign_assets,
        pending_units,
        slug,
    )
    from assets.graph import SYMBOL_GRAPH, code_module_assets, symbol_graph

_HOME = {
    "AGENT_POOL": "assets.campaign",
    "TARGET_FILES_TAG": "assets.campaign",
    "CampaignAssets": "assets.campaign",
    "campaign_assets": "assets.campaign",
    "pending_units": "assets.campaign",
    "slug": "assets.campaign",
    "SYMBOL_GRAPH": "assets.graph",
    "code_module_assets": "assets.graph",
    "symbol_graph": "assets.graph",
}

__all__ = [
    "AGENT_POOL",
    "SYMBOL_GRAPH",
    "TARGET_FILES_TAG",
    "CampaignAssets",
    "campaign_assets",
    "code_module_assets",
    "pending_units",
    "slug",
    "symbol_graph",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
