"""Pick a backend: ``select_sandbox(name | "auto")`` and ``probe_all()`` for the doctor.

The ladder, strongest first: ``microvm`` (only when KVM really works: under TCG it is correct but
seconds per command, so ``auto`` never picks it; Firecracker when its binary is on PATH and KVM is
hardware, else QEMU), ``gvisor``, ``bwrap``. ``local`` is never picked
by ``auto``; ask for it by name.
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass, field

from sandbox._protocol import ProbeResult, Sandbox

__all__ = [
    "AUTO_LADDER",
    "BACKENDS",
    "SandboxUnavailable",
    "Selection",
    "make_sandbox",
    "probe_all",
    "resolve_sandbox",
    "select_sandbox",
]

log = logging.getLogger(__name__)

# name -> "module:Class", strongest first
BACKENDS: dict[str, str] = {
    "microvm": "sandbox.microvm:MicroVMSandbox",
    "gvisor": "sandbox.gvisor:GVisorSandbox",
    "bwrap": "sandbox.bwrap:BwrapSandbox",
    "local": "sandbox.local:LocalSandbox",
}
AUTO_LADDER = ("microvm", "gvisor", "bwrap")


class SandboxUnavailable(OSError):
    """No backend satisfying the request works here; the message lists every probe result."""


@dataclass
class Selection:
    """The chosen backend, why, and every probe made to choose it."""

    sandbox: Sandbox
    reason: str
    probes: list[ProbeResult] = field(default_factory=list)


def make_sandbox(name: str) -> Sandbox:
    """Construct a backend by name without probing it."""
    try:
        target = BACKENDS[name]
    except KeyError:
        raise ValueError(
            f"unknown sandbox backend {name!r}; known: {', '.join(BACKENDS)}"
        ) from None
    module_name, _, cls_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), cls_name)
    sandbox: Sandbox = cls()
    return sandbox


def _probe(sandbox: Sandbox, *, for_auto: bool) -> ProbeResult:
    probe = getattr(sandbox, "probe_for_auto" if for_auto else "probe", None)
    if probe is None:
        probe = sandbox.probe  # type: ignore[attr-defined]
    result: ProbeResult = probe()
    return result


_auto_cache: dict[str, Selection] = {}


def resolve_sandbox(name: str = "auto", *, fresh: bool = False) -> Selection:
    """Resolve ``name`` ("auto" or a backend name) to a working backend, with the reason.

    The ``auto`` probes run once per process (``fresh=True`` probes again); each call still
    returns a new backend instance.
    """
    if name == "auto" and not fresh and "auto" in _auto_cache:
        cached = _auto_cache["auto"]
        return Selection(make_sandbox(cached.sandbox.name), cached.reason, cached.probes)
    if name != "auto":
        sandbox = make_sandbox(name)
        result = _probe(sandbox, for_auto=False)
        if not result.available:
            raise SandboxUnavailable(
                f"sandbox backend {name!r} does not work here: {result.detail}"
            )
        return Selection(sandbox, f"{name} requested: {result.detail}", [result])
    probes: list[ProbeResult] = []
    for candidate in AUTO_LADDER:
        try:
            sandbox = make_sandbox(candidate)
            result = _probe(sandbox, for_auto=True)
        except (OSError, ImportError) as exc:
            probes.append(ProbeResult(candidate, False, f"{type(exc).__name__}: {exc}"))
            continue
        probes.append(result)
        if result.available:
            skipped = "; ".join(f"{p.backend}: {p.detail}" for p in probes[:-1])
            why = f"{candidate} is the strongest backend whose probe passed ({result.detail})"
            why += f"; skipped {skipped}" if skipped else ""
            selection = Selection(sandbox, why, probes)
            _auto_cache["auto"] = selection
            return selection
    lines = "; ".join(f"{p.backend}: {p.detail}" for p in probes)
    raise SandboxUnavailable(
        f"no sandbox backend works here ({lines}). Install bubblewrap or runsc, "
        "or opt in to no isolation with the 'local' backend."
    )


def select_sandbox(name: str = "auto") -> Sandbox:
    """The backend for ``name``; ``"auto"`` = the strongest whose probe passes (logged with why).

    Raises ``SandboxUnavailable`` (an ``OSError``) when none works.
    """
    selection = resolve_sandbox(name)
    log.info("sandbox: %s", selection.reason)
    return selection.sandbox


def probe_all() -> list[ProbeResult]:
    """Probe every backend (including ``local``), strongest first, for ``fleet sandbox doctor``."""
    results: list[ProbeResult] = []
    for name in BACKENDS:
        try:
            sandbox = make_sandbox(name) if name != "local" else _quiet_local()
            results.append(_probe(sandbox, for_auto=False))
        except (OSError, ImportError) as exc:
            results.append(ProbeResult(name, False, f"{type(exc).__name__}: {exc}"))
    return results


def _quiet_local() -> Sandbox:
    from sandbox.local import LocalSandbox

    return LocalSandbox(warn=False)
