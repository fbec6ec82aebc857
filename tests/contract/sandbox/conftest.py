"""Backends for the sandbox contract suite: every backend whose probe passes on this machine.

Backends whose binary is absent locally are skipped (in CI, where all are installed, a skip is a
failure). ``LocalSandbox`` takes part only in the tests that make sense without isolation: the
isolation tests are not generated for it at all, by design.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from sandbox import Sandbox, make_sandbox
from sandbox.local import LocalSandbox

ISOLATING = ["bwrap", "gvisor", "microvm"]
ALL = [*ISOLATING, "local"]
# The microVM under TCG costs seconds per command: it runs only the tests that matter most.
FAST_ISOLATING = ["bwrap", "gvisor"]
FAST_ALL = ["bwrap", "gvisor", "local"]


GROUPS = {
    "isolating": ISOLATING,
    "all": ALL,
    "fast_isolating": FAST_ISOLATING,
    "fast_all": FAST_ALL,
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "backends(group): run the test over the named group of sandbox backends"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``backend`` over the group named by the test's ``backends`` marker."""
    if "backend" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("backends")
    group = marker.args[0] if marker else "all"
    metafunc.parametrize("backend", GROUPS[group])


@functools.cache
def _box(name: str) -> tuple[Sandbox | None, str]:
    box = LocalSandbox(warn=False) if name == "local" else make_sandbox(name)
    probe = box.probe()  # type: ignore[attr-defined]
    return (box if probe.available else None), probe.detail


@pytest.fixture
def box(backend: str) -> Sandbox:
    """The backend under test; skipped only when it does not work on this machine."""
    found, detail = _box(backend)
    if found is None:
        pytest.skip(f"sandbox backend {backend} does not work here: {detail}")
    return found


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    """A worktree with a sibling directory, so escapes into its parent are visible."""
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / "hello.txt").write_text("hello from the worktree\n")
    (tmp_path / "outside").mkdir()
    return wt
