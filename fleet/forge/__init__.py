"""Forges and workspaces: per-unit git worktrees, ``LocalGitForge`` (branch + change record in the
store) and ``GitHubForge`` (PyGithub).

``branch_url(ref)`` is where a person looks at a handed-over change's branch: on GitHub the
branch's page (from the pull request's URL), locally the repository's ``file://`` URL with the
branch as fragment (what ``LocalGitForge`` puts in its refs).

The git helpers the layers above use (``assets``, ``fleet_pipelines``) come from here; they are
those of ``fleet.forge._git``, the one module through which fleet runs git."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fleet.forge._git import branch_commit, commit_of, head_commit, is_ancestor
from fleet.forge._git import output as git_output
from fleet.forge._git import run as run_git
from fleet.forge._url import is_url

if TYPE_CHECKING:  # (fleet.types: ~15 ms of imports that `fleet index` does not otherwise need)
    from fleet.types import ChangeRef

__all__ = ["branch_commit", "branch_url", "commit_of", "git_output", "head_commit", "is_ancestor",
           "is_url", "issue_links", "run_git"]


def branch_url(ref: ChangeRef) -> str:
    """The web (or file) URL of ``ref``'s branch; ``""`` when the forge gives none."""
    pull = re.fullmatch(r"(https?://.+)/pull/\d+/?", ref.url)
    if pull:
        return f"{pull.group(1)}/tree/{ref.branch}"
    local = ref.url.startswith("file://") or (ref.forge == "local" and "#" in ref.url)
    return ref.url if local else ""  # the local forge's URL#BRANCH (a remote's, by URL)


def issue_links(urls: list[str] | tuple[str, ...], limit: int = 50) -> str:
    """Markdown list of issue links (``[#N](url)``, clickable in a PR body and in the Dagster
    UI), at most ``limit`` of them and a count of the rest."""
    lines = []
    for url in urls[:limit]:
        number = re.search(r"/(\d+)/?$", url)
        label = f"#{number.group(1)}" if number else url
        lines.append(f"- [{label}]({url})")
    if len(urls) > limit:
        lines.append(f"- ... {len(urls) - limit} more")
    return "\n".join(lines)
