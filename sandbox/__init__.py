"""sandbox — where every command of an agent runs. Imports nothing of fleet-pipelines.

One ``Sandbox`` protocol and its backends, strongest first: ``MicroVMSandbox`` (Firecracker
when its binary is on PATH and KVM is hardware, with the worktree on block devices; else QEMU ``-M
microvm``, KVM where a boot probe passes, else TCG), ``GVisorSandbox`` (``runsc``),
``BwrapSandbox`` (bubblewrap), and ``LocalSandbox`` (no isolation, explicit opt-in only).
``select_sandbox("auto")`` picks the strongest that works and logs why; ``probe_all()`` reports
every backend for ``fleet sandbox doctor``. The guest image recipe for the microVM is in
``sandbox/guest/``; ``MicroVMSession`` keeps one microVM booted for the many commands of one
work unit. ``toolchain_dirs()`` are the interpreter directories a backend shares read-only.
Backends are imported lazily by name, so ``import sandbox`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sandbox._protocol import EndReason, ExecResult, Limits, ProbeResult, Sandbox
from sandbox.select import (
    BACKENDS,
    SandboxUnavailable,
    Selection,
    make_sandbox,
    probe_all,
    resolve_sandbox,
    select_sandbox,
)

if TYPE_CHECKING:
    from sandbox._common import toolchain_dirs
    from sandbox.bwrap import BwrapConfig, BwrapSandbox
    from sandbox.gvisor import GVisorSandbox
    from sandbox.local import LocalSandbox
    from sandbox.microvm import MicroVMSandbox
    from sandbox.microvm_session import MicroVMSession

__all__ = [
    "BACKENDS",
    "BwrapConfig",
    "BwrapSandbox",
    "EndReason",
    "ExecResult",
    "GVisorSandbox",
    "Limits",
    "LocalSandbox",
    "MicroVMSandbox",
    "MicroVMSession",
    "ProbeResult",
    "Sandbox",
    "SandboxUnavailable",
    "Selection",
    "make_sandbox",
    "probe_all",
    "resolve_sandbox",
    "select_sandbox",
    "toolchain_dirs",
]

_LAZY = {
    "BwrapSandbox": "sandbox.bwrap",
    "BwrapConfig": "sandbox.bwrap",
    "LocalSandbox": "sandbox.local",
    "GVisorSandbox": "sandbox.gvisor",
    "MicroVMSandbox": "sandbox.microvm",
    "toolchain_dirs": "sandbox._common",
    "MicroVMSession": "sandbox.microvm_session",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sandbox' has no attribute {name!r}")
