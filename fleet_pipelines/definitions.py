"""The only composition root of the Dagster code location (``workspace.yaml`` loads it).

``build_definitions(settings)`` assembles assets, checks, jobs, schedules, sensors and resources
for one deployment; ``defs`` is that for ``FleetSettings.from_env()``, built on its first use (a
code server or a run worker loading the location; ``dir()`` lists it, so Dagster's module loader
finds it), not on import: the ``fleet`` command line and the tests import ``build_definitions``
without paying for a build of every campaign of the environment's settings.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dagster import BetaWarning, Definitions, PreviewWarning

from assets import CampaignAssets, campaign_assets, code_module_assets, symbol_graph
from assets.graph import SYMBOL_GRAPH
from fleet.verify import GATES as VERIFY_GATES
from fleet_pipelines.jobs import build_jobs
from fleet_pipelines.resources import FleetSettings, StoreResource, build_resources
from fleet_pipelines.schedules import build_schedules
from fleet_pipelines.sensors import build_sensors

if TYPE_CHECKING:
    from collections.abc import Sequence

    from fleet.campaigns.spec import Campaign

__all__ = ["GATES", "build_campaigns", "build_definitions", "current_summary", "defs", "gates_for"]

log = logging.getLogger(__name__)
# The gates a campaign may list (test-first only runs for bug-fix campaigns, none of the
# built-in ones).
GATES = tuple(g for g in VERIFY_GATES if g != "test_first")


def gates_for(campaign: Campaign) -> tuple[str, ...]:
    """The gates (= blocking checks) of ``campaign``: the ones its file lists, in its order
    (``VerifyGates`` runs exactly those; the file's loader refuses a name that is no gate)."""
    return tuple(g for g in campaign.gates if g in VERIFY_GATES)


def build_definitions(settings: FleetSettings,
                      campaigns: list[CampaignAssets] | None = None) -> Definitions:
    """The definitions of ``settings``: with ``campaigns`` (``build_campaigns``' chains, built
    once by the caller), those, so every build of one sweep uses the campaign files as they
    were read once; else each campaign file is read now."""
    # backfill_policy and pools are marked beta/preview in dagster 1.13; we rely on them
    # knowingly, and the test suite turns warnings into errors.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BetaWarning)
        warnings.simplefilter("ignore", PreviewWarning)
        return _build(settings, campaigns)


def build_campaigns(settings: FleetSettings,
                    loaded: Sequence[Campaign] | None = None) -> list[CampaignAssets]:
    """The asset chain of every campaign of ``settings``; its loaded value is what the assets,
    schedules and sensors use: ``loaded`` (the campaigns of ``settings``, in order, as the caller
    loaded them: no file is read again), else each campaign file read here, once per build."""
    from fleet.campaigns.spec import load_campaign

    specs = list(loaded) if loaded is not None else [load_campaign(n) for n in settings.campaigns]
    chains = []
    for spec in specs:
        chains.append(campaign_assets(spec, gates_for(spec), SYMBOL_GRAPH,
                                      batch_size=settings.batch_size))
    return chains


def current_summary(settings: FleetSettings) -> dict[str, Any] | None:
    """The module summary of the repository's last index that this process's definitions
    use: on a shared store the one published there (the index may have run in another process,
    on another machine: the ``symbol_graph`` asset publishes it), else — and when the store cannot
    be read, said as a warning — the one saved under ``FLEET_HOME``."""
    from assets.graph import graph_dir, load_summary, published_summary
    local = load_summary(graph_dir(Path(settings.home)))
    store = StoreResource(url=settings.store_url, repo=settings.repository_key())
    if not store.shared():
        return local
    try:
        published = published_summary(store.store())
    except Exception as exc:  # the definitions still load: without the published modules
        log.warning("the published module summary could not be read from the store (%s: %s); "
                    "using the one under %s", type(exc).__name__, exc, settings.home)
        return local
    return published if published is not None else local


def _build(settings: FleetSettings, campaigns: list[CampaignAssets] | None) -> Definitions:
    if campaigns is None:
        campaigns = build_campaigns(settings)
    code = code_module_assets(Path(settings.home), current_summary(settings))
    jobs = build_jobs(campaigns, code)
    return Definitions(
        assets=[symbol_graph, *code, *(a for c in campaigns for a in c.assets)],
        jobs=jobs,
        schedules=build_schedules(campaigns),
        sensors=build_sensors(campaigns, settings.batch_size, jobs),
        resources=build_resources(settings),
    )


defs: Definitions  # annotated only: bound by __getattr__ on first use
_DEFAULT: list[Definitions] = []


def __getattr__(name: str) -> Definitions:
    if name != "defs":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if not _DEFAULT:
        _DEFAULT.append(build_definitions(FleetSettings.from_env()))
    return _DEFAULT[0]


def __dir__() -> list[str]:
    return sorted([*globals(), "defs"])
