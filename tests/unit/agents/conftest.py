"""A real sandbox backend for the agent tests (the strongest that works here)."""

from __future__ import annotations

import pytest


@pytest.fixture
def sandbox_backend() -> object:
    import sandbox

    select = getattr(sandbox, "select_sandbox", None)
    if select is not None:
        try:
            return select("auto")
        except Exception as exc:  # SandboxUnavailable lives in sandbox; no backend here
            pytest.skip(f"no sandbox backend works here: {exc}")
    from sandbox.bwrap import BwrapSandbox

    backend = BwrapSandbox()
    probe = backend.probe()
    if not probe.available:
        pytest.skip(f"bubblewrap does not work here: {probe.detail}")
    return backend
