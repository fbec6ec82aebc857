"""A real sandbox for the agent tests: bubblewrap (fast, and what CI installs). The stronger
backends are covered by the sandbox contract suite; here the loop is under test."""

from __future__ import annotations

import pytest


@pytest.fixture
def sandbox_backend() -> object:
    from sandbox import SandboxUnavailable, select_sandbox

    try:
        return select_sandbox("bwrap")
    except SandboxUnavailable as exc:
        pytest.skip(f"bubblewrap does not work here: {exc}")
