"""Forges and workspaces: per-unit git worktrees, ``LocalGitForge`` (branch + change record in the
store) and ``GitHubForge`` (PyGithub)."""
