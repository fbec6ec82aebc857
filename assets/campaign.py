"""Per-campaign assets, generated from the campaign list:

``<c>/findings`` -> ``<c>/work_units`` (registers the dynamic partitions, deletes obsolete ones)
-> ``<c>/candidate_patches`` (partitioned by unit key, pool ``agent_sandbox``, batched runs, one
blocking check per gate) -> ``<c>/verified_patches`` (only the units whose gates passed) ->
``<c>/integration`` -> ``<c>/pull_requests``.
"""


import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from dagster import (
    AssetCheckSpec,
    AssetExecutionContext,
    AssetKey,
    AssetMaterialization,
    AssetsDefinition,
    BackfillPolicy,
    BetaWarning,
    DagsterType,
    DataVersion,
    DynamicPartitionsDefinition,
    MaterializeResult,
    Nothing,
    PreviewWarning,
    ResourceParam,
    asset,
)

from assets import _fleet
from assets._batch import log_materializations, run_batch
from assets._metadata import content_version, integration_metadata, link, unit_metadata
from assets._seams import AgentSource, ForgeSource, RepoSource, SandboxSource, StoreSource
from fleet.campaigns.spec import Campaign
from fleet.errors import KillSwitchEngaged
from fleet.forge import branch_url
from fleet.unit import TERMINAL, close_clients, latest_results, load_units

__all__ = [
    "AGENT_POOL",
    "NOTHING",
    "TARGET_FILES_TAG",
    "CampaignAssets",
    "agents_per_batch",
    "campaign_assets",
    "pending_units",
    "slug",
]

AGENT_POOL = "agent_sandbox"
TARGET_FILES_TAG = "fleet/target_files"
"""Run tag: comma-separated repository paths that limit planning (a dispatched job)."""
# A Nothing-typed output carries no value (no IO manager) yet lets a batch's downstream
# ``verified_patches`` run in the same run; the per-unit metadata follows as materializations.
NOTHING = cast(DagsterType, Nothing)


def slug(campaign: str) -> str:
    """A campaign name as an asset key part / partitions name (``datetime-utcnow`` ->
    ``datetime_utcnow``)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", campaign)


@dataclass(frozen=True)
class CampaignAssets:
    """One campaign's asset chain, with the campaign as loaded (once per definitions build)."""

    spec: Campaign
    partitions: DynamicPartitionsDefinition
    assets: tuple[AssetsDefinition, ...]

    @property
    def campaign(self) -> str:
        """The campaign's name (its ledger and store records are kept under it)."""
        return self.spec.name

    @property
    def prefix(self) -> str:
        return slug(self.campaign)

    def key(self, name: str) -> AssetKey:
        return AssetKey([self.prefix, name])


def _check_killed(store: StoreSource) -> None:
    if store.killed():
        raise KillSwitchEngaged("kill switch engaged: `fleet stop --off` to resume")


def agents_per_batch(campaign: Campaign, agents: int) -> int:
    """Units at once in one batch: the worker's ``agents`` (``--agents`` / ``FLEET_AGENTS``), at
    most the campaign's ``autonomy.max_parallel_agents``."""
    return max(1, min(agents, campaign.autonomy.max_parallel_agents))


def campaign_assets(
    campaign: Campaign, gates: Sequence[str], symbol_graph: AssetKey, batch_size: int = 8
) -> CampaignAssets:
    """The asset chain of one loaded campaign (its YAML is not read again: the asset bodies get
    this value); ``gates`` names one blocking check each."""
    # backfill policies, pools and partitioned check specs are beta/preview in dagster 1.13:
    # used knowingly (DESIGN.md), so their warnings are not passed on.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BetaWarning)
        warnings.simplefilter("ignore", PreviewWarning)
        return _campaign_assets(campaign, gates, symbol_graph, batch_size)


def _campaign_assets(
    spec: Campaign, gates: Sequence[str], symbol_graph: AssetKey, batch_size: int
) -> CampaignAssets:
    campaign = spec.name
    prefix = slug(campaign)
    partitions = DynamicPartitionsDefinition(name=f"{prefix}_units")
    group = f"campaign_{prefix}"

    @asset(key=[prefix, "findings"], deps=[symbol_graph], group_name=group,
           description=f"Findings of campaign {campaign}, fingerprinted and de-duplicated; "
                       "each open finding filed once as an issue through the forge.")
    def findings(store: ResourceParam[StoreSource], repo: ResourceParam[RepoSource],
                 forge: ResourceParam[ForgeSource]) -> MaterializeResult:
        _check_killed(store)
        report = _fleet.find(spec, Path(repo.path), Path(repo.home), store, forge)
        return MaterializeResult(metadata=report.metadata(), data_version=DataVersion(
            content_version(f.fingerprint for f in report.findings)))

    @asset(key=[prefix, "work_units"], deps=[findings], group_name=group,
           description="Work units planned from the findings; registers their partitions.")
    def work_units(context: AssetExecutionContext, store: ResourceParam[StoreSource],
                   repo: ResourceParam[RepoSource]) -> MaterializeResult:
        _check_killed(store)
        targets = context.run.tags.get(TARGET_FILES_TAG)
        only = tuple(t for t in targets.split(",") if t) if targets else None
        plan = _fleet.plan(spec, Path(repo.path), Path(repo.home), repo.base_branch, store,
                           only_paths=only)
        keys = [u.key for u in plan.units]
        existing = set(context.instance.get_dynamic_partitions(partitions.name or ""))
        # a plan limited to some files says nothing about the other units
        obsolete = sorted(existing - set(keys)) if only is None else []
        for key in obsolete:
            context.instance.delete_dynamic_partition(partitions.name or "", key)
        new = [k for k in keys if k not in existing]
        context.instance.add_dynamic_partitions(partitions.name or "", new)
        return MaterializeResult(metadata={**plan.metadata(), "partitions_added": len(new),
                                           "partitions_deleted": len(obsolete)},
                                 data_version=DataVersion(content_version(keys)))

    check_specs = [
        AssetCheckSpec(f"candidate_patches_{g}", asset=[prefix, "candidate_patches"],
                       blocking=True, partitions_def=partitions,
                       description=f"Gate `{g}` on the unit's patch: passes when the gate "
                                   "accepts it (in a batch run: every unit; each unit's "
                                   "verdict is on its partition, failed with ERROR)")
        for g in gates
    ]

    @asset(key=[prefix, "candidate_patches"], deps=[work_units], group_name=group,
           partitions_def=partitions, pool=AGENT_POOL, dagster_type=NOTHING,
           backfill_policy=BackfillPolicy.multi_run(max_partitions_per_run=batch_size),
           check_specs=check_specs,
           description="One agent run per unit under its leases; gate verdicts as metadata.")
    def candidate_patches(context: AssetExecutionContext, store: ResourceParam[StoreSource],
                          repo: ResourceParam[RepoSource], sandbox: ResourceParam[SandboxSource],
                          agent: ResourceParam[AgentSource]) -> Iterator[Any]:
        _check_killed(store)
        units = load_units(store.ledger(), campaign, context.partition_keys)
        env = _fleet.unit_env(spec, Path(repo.path), Path(repo.home), store, sandbox, agent)
        try:  # the campaign's autonomy.max_parallel_agents caps the worker's --agents
            yield from run_batch(context, gates, units, env, agents_per_batch(spec, repo.agents))
        finally:  # the agent's model and a Claude reviewer hold HTTP connections
            close_clients(env.agent, env.gates)

    @asset(key=[prefix, "verified_patches"], deps=[candidate_patches], group_name=group,
           partitions_def=partitions, output_required=False,
           backfill_policy=BackfillPolicy.multi_run(max_partitions_per_run=batch_size),
           description="The units whose every gate passed: committed on their own branch.")
    def verified_patches(context: AssetExecutionContext, store: ResourceParam[StoreSource]
                         ) -> Iterator[AssetMaterialization]:
        _check_killed(store)
        results = latest_results(store.ledger(), spec)
        verified = [(key, unit_metadata(r)) for key in context.partition_keys
                    if (r := results.get(key)) is not None and r.status == "verified"]
        log_materializations(context, verified)
        yield from ()

    @asset(key=[prefix, "integration"], deps=[verified_patches], group_name=group,
           description="Verified patches merged on the latest base, tested together.")
    def integration(context: AssetExecutionContext, store: ResourceParam[StoreSource],
                    repo: ResourceParam[RepoSource], sandbox: ResourceParam[SandboxSource]
                    ) -> MaterializeResult:
        _check_killed(store)
        planned = context.instance.get_dynamic_partitions(partitions.name or "")
        result = _fleet.integrate(spec, Path(repo.path), Path(repo.home), repo.base_branch,
                                  store, sandbox, planned=planned)
        return MaterializeResult(metadata=integration_metadata(result))

    @asset(key=[prefix, "pull_requests"], deps=[integration], group_name=group,
           description="The integration branch handed over through the forge.")
    def pull_requests(store: ResourceParam[StoreSource], repo: ResourceParam[RepoSource],
                      forge: ResourceParam[ForgeSource]) -> MaterializeResult:
        _check_killed(store)
        done = _fleet.publish(spec, Path(repo.path), repo.base_branch, store, forge)
        if done is None:
            return MaterializeResult(metadata={"published": False})
        ref, merge = done.ref, done.self_merge
        return MaterializeResult(metadata={
            "published": True, "forge": ref.forge, "branch": link(branch_url(ref), ref.branch),
            "number": ref.number or 0, "url": link(ref.url), "state": ref.state,
            "self_merged": bool(merge and merge.merged),
            "self_merge": done.self_merge_message if merge else "review required"})

    return CampaignAssets(
        spec=spec,
        partitions=partitions,
        assets=(findings, work_units, candidate_patches, verified_patches, integration,
                pull_requests),
    )


def pending_units(store: StoreSource, campaign: Campaign | str, keys: Sequence[str]
                  ) -> list[str]:
    """Registered unit keys without a terminal result in the ledger (what is left to run);
    ``campaign``: the loaded one, or a name loaded once."""
    results = latest_results(store.ledger(), campaign)
    return [k for k in keys if k not in results or results[k].status not in TERMINAL]
