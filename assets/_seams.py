"""What the assets need from their resources, as protocols.

The resource classes live in ``fleet_pipelines.resources`` (the layer above); assets annotate their
parameters with ``ResourceParam[<protocol>]`` so they depend only on these contracts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from fleet.protocols import Agent, Forge, LeaseStore, Ledger
from fleet.store import Store

if TYPE_CHECKING:
    from fleet.campaigns.spec import Campaign
    from fleet.graph import SymbolGraph
    from sandbox import Sandbox

__all__ = ["AgentSource", "ForgeSource", "RepoSource", "SandboxSource", "StoreSource"]


class StoreSource(Protocol):
    """The fleet store: leases, ledger, and the kill switch."""

    lease_ttl_s: float
    """How long a unit's leases outlive their holder's last heartbeat."""

    def store(self) -> Store: ...

    def leases(self) -> LeaseStore: ...

    def ledger(self) -> Ledger: ...

    def killed(self) -> bool:
        """True when the kill switch is engaged; every step and sensor checks it."""
        ...

    def shared(self) -> bool:
        """True when processes without a common filesystem share the store (PostgreSQL): what
        one process indexes is published there for the others (``assets._modules``)."""
        ...


class SandboxSource(Protocol):
    def open(self) -> Sandbox: ...


class AgentSource(Protocol):
    def open(self, campaign: Campaign, graph: SymbolGraph, store: Store) -> Agent:
        """The agent for one campaign's units (it may use the graph and record in the store)."""
        ...


class ForgeSource(Protocol):
    def open(self, store: Store) -> Forge: ...


class RepoSource(Protocol):
    """The target repository, its base branch, the fleet's state dir and the agent pool size."""

    path: str
    base_branch: str
    home: str
    agents: int
