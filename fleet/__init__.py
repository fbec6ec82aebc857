"""fleet — the domain core of fleet-pipelines. Never imports dagster.

Stages, one folder each, in data-flow order:

- ``graph``: tree-sitter index of a repository into a ``SymbolGraph`` (networkx).
- ``campaigns``: campaign specs, matchers -> findings, built-in campaigns and their libcst codemods.
- ``plan``: findings -> work units, lock ranks, waves.
- ``store``: leases, task queue, ledger, controls, memory (SQLite and PostgreSQL).
- ``agents``: ``CodemodAgent``, ``ClaudeAgent``, ``ScriptedModel``.
- ``verify``: gates and reviewer lenses.
- ``merge``: structural 3-way merge and the git merge driver.
- ``forge``: worktrees, ``LocalGitForge``, ``GitHubForge``.
- ``unit``: the life of one work unit (leases -> workspace -> agent -> gates -> ledger).
- ``integrate``: verified patches -> structural merge -> re-verify -> bisect.
- ``api``: the HTTP coordinator.

The seams between stages are the protocols in :mod:`fleet.protocols` and the value types in
:mod:`fleet.types`.
"""

from fleet.errors import FleetError

__all__ = ["FleetError"]
__version__ = "0.1.0"
