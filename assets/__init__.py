"""Dagster assets and asset checks. Thin: each body calls one ``fleet`` function.

``symbol_graph`` and ``code_module_assets(home)`` (the repository's modules as assets), and
``campaign_assets(campaign, gates, symbol_graph, batch_size)`` (one campaign's chain from
``findings`` to ``pull_requests``). Resources are reached through the protocols of
``assets._seams``; the composition root is ``fleet_pipelines.definitions``.
"""

from assets.campaign import (
    AGENT_POOL,
    TARGET_FILES_TAG,
    CampaignAssets,
    campaign_assets,
    pending_units,
    slug,
)
from assets.graph import SYMBOL_GRAPH, code_module_assets, symbol_graph

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
