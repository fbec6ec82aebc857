"""sandbox — where every command of an agent runs. Imports nothing of fleet-pipelines.

One ``Sandbox`` protocol and its backends, strongest first: ``MicroVMSandbox`` (QEMU ``-M
microvm``, KVM where a boot probe passes, else TCG; Firecracker where real KVM and the binary
exist), ``GVisorSandbox`` (``runsc``), ``BwrapSandbox`` (bubblewrap), and ``LocalSandbox`` (no
isolation, explicit opt-in only). ``select_sandbox("auto")`` picks the strongest that works.
The guest image recipe for the microVM is in ``sandbox/guest/``.
"""

from sandbox._protocol import EndReason, ExecResult, Limits, Sandbox

__all__ = ["EndReason", "ExecResult", "Limits", "Sandbox"]
