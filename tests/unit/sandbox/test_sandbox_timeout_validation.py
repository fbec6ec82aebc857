"""A zero, negative or NaN ``timeout`` (or ``limits.wall_s``) is refused up front with a
``ValueError`` naming the argument, on every backend, and the command never starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox import EndReason, Limits, Sandbox, make_sandbox
from sandbox.local import LocalSandbox


def _backend(name: str) -> Sandbox:
    box = LocalSandbox(warn=False) if name == "local" else make_sandbox(name)
    probe = box.probe()  # type: ignore[attr-defined]
    if not probe.available:
        pytest.skip(f"sandbox backend {name} does not work here: {probe.detail}")
    return box


@pytest.mark.sandbox
@pytest.mark.parametrize("backend", ["bwrap", "local"])
@pytest.mark.parametrize(
    ("timeout", "limits", "named"),
    [
        (0, None, "timeout"),
        (-1.5, None, "timeout"),
        (float("nan"), None, "timeout"),
        (None, Limits(wall_s=0), "limits.wall_s"),
        (5.0, Limits(wall_s=-2), "limits.wall_s"),
    ],
)
def test_non_positive_timeout_is_refused_before_the_command_runs(
    backend: str, timeout: float | None, limits: Limits | None, named: str, tmp_path: Path
) -> None:
    box = _backend(backend)
    marker = tmp_path / "ran"
    with pytest.raises(ValueError, match=rf"^{named} must be a positive number of seconds"):
        box.run(["/bin/sh", "-c", f"touch {marker}"], tmp_path, timeout=timeout, limits=limits)
    assert not marker.exists()


@pytest.mark.sandbox
@pytest.mark.parametrize("backend", ["bwrap", "local"])
def test_a_small_positive_timeout_still_runs_and_times_out(backend: str, tmp_path: Path) -> None:
    box = _backend(backend)
    done = box.run(["/bin/sh", "-c", "echo ok"], tmp_path, timeout=5)
    assert done.reason is EndReason.EXITED and done.exit_code == 0 and done.stdout == "ok\n"
    slow = box.run(["/bin/sh", "-c", "sleep 5"], tmp_path, timeout=0.3)
    assert slow.reason is EndReason.TIMEOUT and slow.wall_s < 4
