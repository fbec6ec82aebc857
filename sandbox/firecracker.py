"""Firecracker as the microVM's monitor: the KVM probe, the VM config, the launch argv.

Firecracker runs only on real hardware virtualization (``kvm_intel``/``kvm_amd``; not the
``kvm_pvm`` of these machines) and has neither 9p nor virtiofs, so ``MicroVMSandbox`` uses it
with the block transport (``sandbox/_disks.py``): the same guest image, init and disks that the
QEMU block mode boots in the tests here. It starts without an API socket (``--no-api
--config-file``) and with no network interface at all. Debian's kernel finds the virtio-mmio
disks through ACPI, which Firecracker provides from 1.8 on; older releases need a kernel built
with ``CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sandbox._guest_image import GuestImage

FIRECRACKER_CMDLINE = (
    "console=ttyS0 quiet loglevel=1 panic=-1 reboot=k nomodeset i8042.noaux i8042.nomux "
    "i8042.dumbkbd fleet.transport=blk"
)
_HW_KVM_MODULES = ("kvm_intel", "kvm_amd")


def kvm_is_hardware(sys_module: Path = Path("/sys/module"), dev: str = "/dev/kvm") -> bool:
    """Whether ``/dev/kvm`` is usable and backed by VT-x/AMD-V (not kvm_pvm, not absent)."""
    if not os.access(dev, os.R_OK | os.W_OK):
        return False
    return any((sys_module / name).exists() for name in _HW_KVM_MODULES)


def firecracker_binary(name: str = "firecracker") -> str | None:
    """The firecracker binary on PATH, or None."""
    return shutil.which(name)


def firecracker_config(
    image: GuestImage,
    disks: Sequence[tuple[Path, bool]],
    *,
    vcpus: int,
    mem_mb: int,
    boot_args: str = FIRECRACKER_CMDLINE,
) -> dict[str, Any]:
    """The ``--config-file`` JSON: kernel + initramfs, one drive per disk in guest order
    (``/dev/vda`` first), vCPUs and memory, and deliberately no ``network-interfaces``."""
    drives = [
        {
            "drive_id": f"d{i}",
            "path_on_host": str(path),
            "is_root_device": False,
            "is_read_only": readonly,
        }
        for i, (path, readonly) in enumerate(disks)
    ]
    return {
        "boot-source": {
            "kernel_image_path": str(image.kernel),
            "initrd_path": str(image.initramfs),
            "boot_args": boot_args,
        },
        "drives": drives,
        "machine-config": {"vcpu_count": vcpus, "mem_size_mib": mem_mb, "smt": False},
    }


def firecracker_argv(binary: str, config_file: Path) -> list[str]:
    return [binary, "--no-api", "--config-file", str(config_file), "--level", "Error"]


__all__ = [
    "FIRECRACKER_CMDLINE",
    "firecracker_argv",
    "firecracker_binary",
    "firecracker_config",
    "kvm_is_hardware",
]
