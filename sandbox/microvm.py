"""``MicroVMSandbox``: one microVM per command — QEMU ``-M microvm``, or Firecracker.

Firecracker is used when its binary is on PATH and ``/dev/kvm`` is hardware virtualization
(``firecracker.kvm_is_hardware``); it has no 9p, so it always runs the block transport
(``_microvm_blk``), which QEMU can run too (``MicroVMConfig(transport="blk")``: how the tests
here exercise the exact guest protocol Firecracker would). The rest of this docstring describes
QEMU's default 9p transport.

The guest is Debian's kernel with a busybox initramfs (built at first use, see
``_guest_image``; recipe in ``sandbox/guest/``). It has no NIC at all. It sees over virtio-9p
only: a per-run control directory, the worktree (read-write) and the toolchain directories plus
``/usr`` (read-only, enforced by QEMU, so nothing in the guest can write them). Never the host
root, home (beyond the toolchain's own directory) or ``/etc`` (the guest gets a minimal copy
without secrets). Limits apply inside the guest through its own cgroup v2 (memory, pids) and
rlimits; the wall-clock deadline kills QEMU, which takes every guest process with it.

Accelerator: ``kvm`` when a boot probe passes within a few seconds, else ``tcg`` (software
emulation: correct, but seconds per command, so ``select_sandbox("auto")`` takes this backend
only with KVM). Kernel command line carries ``tsc_early_khz=2000000 lpj=4000000
no_timer_check``: without them about one TCG boot in twelve hangs calibrating the clock.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import shlex
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sandbox._common import (
    effective_limits,
    exit_code_of,
    find_binary,
    sandbox_env,
    timed_probe_run,
    toolchain_dirs,
)
from sandbox._guest_image import GuestImage, GuestImageError, guest_image
from sandbox._limits import tree_killer
from sandbox._microvm_blk import block_readonly_paths, run_block
from sandbox._process import RawOutcome, decode, read_capped, run_process
from sandbox._protocol import EndReason, ExecResult, Limits, ProbeResult
from sandbox._quota import disk_quota, doctor_note
from sandbox.firecracker import (
    firecracker_argv,
    firecracker_binary,
    firecracker_config,
    kvm_is_hardware,
)

__all__ = [
    "GUEST_OVERHEAD_MB",
    "KERNEL_CMDLINE",
    "KVM_PROBE_TIMEOUT_S",
    "MicroVMConfig",
    "MicroVMSandbox",
]

KERNEL_CMDLINE = (
    "console=ttyS0 quiet loglevel=1 panic=-1 reboot=t nomodeset "
    "tsc_early_khz=2000000 lpj=4000000 no_timer_check"
)
GUEST_OVERHEAD_MB = 256
KVM_PROBE_TIMEOUT_S = 5.0


@dataclass
class MicroVMConfig:
    """How the microVM runs.

    ``accel``: "kvm", "tcg", or None to probe KVM once and fall back to TCG (QEMU only).
    ``vmm``: "qemu", "firecracker", or None for Firecracker when its binary is on PATH and KVM is
    hardware virtualization, else QEMU. ``transport``: "9p" (host directories shared live, QEMU
    only) or "blk" (worktree and results as tar disks, toolchain as ext4 images: what Firecracker
    needs); None = "blk" with Firecracker, "9p" with QEMU. ``readonly_paths``: the shared
    toolchain (None = ``/usr`` + the interpreter's dirs over 9p, ``block_readonly_paths()`` as
    disks).
    """

    binary: str = "qemu-system-x86_64"
    accel: str | None = None
    readonly_paths: list[Path] | None = None
    cpus: int = 1
    vmm: str | None = None
    transport: str | None = None
    firecracker: str = "firecracker"


@functools.cache
def _kvm_boots(binary: str, kernel: Path, initramfs: Path) -> bool:
    """Whether a guest boots and exits under KVM within seconds (kvm_pvm here: it does not).

    The answer is cached next to the image, keyed by the host's boot id and the QEMU binary, so
    each process does not pay a boot to learn it.
    """
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False
    cache = kernel.parent / "kvm-probe.json"
    key = _kvm_probe_key(binary)
    with contextlib.suppress(OSError, ValueError):
        cached = json.loads(cache.read_text())
        if cached.get("key") == key:
            return bool(cached["kvm"])
    box = MicroVMSandbox(MicroVMConfig(binary=binary, accel="kvm", vmm="qemu"))
    try:
        with tempfile.TemporaryDirectory(prefix="fleet-kvm-probe-") as work:
            ok = box.run(["/bin/true"], Path(work), timeout=KVM_PROBE_TIMEOUT_S).ok
    except OSError:
        ok = False
    with contextlib.suppress(OSError):
        tmp = cache.with_name(f"{cache.name}.{os.getpid()}")
        tmp.write_text(json.dumps({"key": key, "kvm": ok}))
        tmp.replace(cache)
    return ok


def _kvm_probe_key(binary: str) -> str:
    try:
        boot_id = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot_id = "unknown"
    st = Path(binary).stat()
    return f"{boot_id}:{binary}:{st.st_size}:{int(st.st_mtime)}"


class MicroVMSandbox:
    """Runs each command in a fresh QEMU microvm (see the module docstring)."""

    name = "microvm"
    strength = 30

    def __init__(self, config: MicroVMConfig | None = None) -> None:
        self.config = config or MicroVMConfig()

    def _binary(self) -> str:
        if self.vmm() == "firecracker":
            return find_binary(
                self.config.firecracker, "firecracker (github.com/firecracker-microvm)"
            )
        return find_binary(self.config.binary, "qemu-system-x86")

    def vmm(self) -> str:
        """The monitor: ``config.vmm``, else Firecracker if on PATH with hardware KVM, else QEMU."""
        if self.config.vmm is not None:
            return self.config.vmm
        found = firecracker_binary(self.config.firecracker)
        return "firecracker" if found and kvm_is_hardware() else "qemu"

    def transport(self) -> str:
        if self.config.transport is not None:
            return self.config.transport
        return "blk" if self.vmm() == "firecracker" else "9p"

    def block_readonly(self) -> list[Path]:
        paths = self.config.readonly_paths
        return [p for p in (block_readonly_paths() if paths is None else paths) if p.exists()]

    def boot_grace_s(self) -> float:
        """How long past the command's deadline the host waits for the guest to report."""
        return 10.0 if self.accelerator() == "kvm" else 60.0

    def launch_block(
        self, disks: list[tuple[Path, bool]], tmp: Path, mem_mb: int, timeout: float | None
    ) -> RawOutcome:
        """Boot the block-transport guest with ``disks`` (guest order) and wait for it to end."""
        image = guest_image()
        if self.vmm() == "firecracker":
            cfg = firecracker_config(image, disks, vcpus=self.config.cpus, mem_mb=mem_mb)
            (tmp / "firecracker.json").write_text(json.dumps(cfg, indent=1))
            argv = firecracker_argv(self._binary(), tmp / "firecracker.json")
        else:
            argv = self.qemu_argv(image, self.accelerator(), None, None, mem_mb, disks=disks)
        return run_process(
            argv,
            env={"PATH": "/usr/bin:/bin"},
            timeout=timeout,
            output_cap=256 * 1024,
            kill_tree=tree_killer(None),
        )

    def accelerator(self) -> str:
        if self.config.accel is not None:
            return self.config.accel
        if self.vmm() == "firecracker":
            return "kvm"
        image = guest_image()
        return "kvm" if _kvm_boots(self._binary(), image.kernel, image.initramfs) else "tcg"

    def qemu_argv(
        self,
        image: GuestImage,
        accel: str,
        ctl: Path | None,
        work: Path | None,
        mem_mb: int,
        disks: list[tuple[Path, bool]] | None = None,
    ) -> list[str]:
        """QEMU microvm argv: 9p shares of ``ctl``/``work``/read-only dirs, or ``disks``."""
        args = [
            self._binary(),
            "-M", "microvm,x-option-roms=off",
            "-accel", accel,
            "-cpu", "host" if accel == "kvm" else "max",
            "-smp", str(self.config.cpus),
            "-m", f"{mem_mb}M",
            "-nodefaults", "-no-user-config", "-nographic", "-no-reboot",
            "-serial", "stdio",
            "-kernel", str(image.kernel),
            "-initrd", str(image.initramfs),
            "-append", KERNEL_CMDLINE + (" fleet.transport=blk" if disks is not None else ""),
        ]  # fmt: skip
        if disks is not None:
            for i, (path, ro) in enumerate(disks):
                qpath = str(path).replace(",", ",,")
                readonly = "on" if ro else "off"
                args += ["-drive", f"id=d{i},file={qpath},format=raw,if=none,readonly={readonly}"]
                args += ["-device", f"virtio-blk-device,drive=d{i}"]
            return args
        assert ctl is not None and work is not None
        shares = [("ctl", ctl, False), ("work", work, False)]
        shares += [(f"ro{i}", p, True) for i, p in enumerate(self._readonly())]
        for tag, path, ro in shares:
            qpath = str(path).replace(",", ",,")  # QEMU's option syntax escapes commas
            fsdev = f"local,id={tag},path={qpath},security_model=none,multidevs=remap"
            args += ["-fsdev", fsdev + (",readonly=on" if ro else "")]
            args += ["-device", f"virtio-9p-device,fsdev={tag},mount_tag={tag}"]
        return args

    def _readonly(self) -> list[Path]:
        paths = self.config.readonly_paths
        paths = [Path("/usr"), *toolchain_dirs()] if paths is None else paths
        return [p.resolve() for p in paths if p.exists()]

    def mounts_script(self, work: Path) -> str:
        """Guest shell that mounts the worktree (rw) and the read-only shares at their paths."""
        opts = "trans=virtio,version=9p2000.L,msize=262144"
        lines = [f"mkdir -p {shlex.quote(str(work))}"]
        lines.append(f"mount -t 9p -o {opts} work {shlex.quote(str(work))}")
        # read-only and not changing during a run: let the guest cache it (fewer 9p trips)
        ro_opts = "trans=virtio,version=9p2000.L,msize=1048576,ro,cache=loose"
        for i, path in enumerate(self._readonly()):
            q = shlex.quote(str(path))
            lines.append(f"mkdir -p {q} && mount -t 9p -o {ro_opts} ro{i} {q}")
        return "\n".join(lines) + "\n"

    @staticmethod
    def command_scripts(
        argv: Sequence[str],
        work: Path,
        env: Mapping[str, str],
        lim: Limits,
        cgroup: str,
        timeout: float | None = None,
    ) -> tuple[str, str]:
        """Guest shell for one command: (limits.sh for ``cgroup``, run.sh)."""
        limits = []
        if lim.memory_bytes is not None:
            limits.append(f"echo {lim.memory_bytes} > {cgroup}/memory.max")
            limits.append(f"echo 0 > {cgroup}/memory.swap.max")
        if lim.processes is not None:
            limits.append(f"echo {lim.processes} > {cgroup}/pids.max")
        run = [f"echo $$ > {cgroup}/cgroup.procs 2>/dev/null"]
        if lim.cpu_s is not None:
            soft = max(1, int(lim.cpu_s + 0.999))
            run.append(f"ulimit -t {soft + 1}; ulimit -S -t {soft}")
        if lim.file_bytes is not None:
            run.append(f"ulimit -f {max(1, lim.file_bytes // 512)}")
        run.append(f"cd {shlex.quote(str(work))} || exit 126")
        env_args = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
        wrap = "" if timeout is None else f"/.guest/bin/timeout -s KILL {max(1, round(timeout))} "
        run.append(f"exec {wrap}/.guest/bin/env -i {env_args} {shlex.join(argv)}")
        return "\n".join(limits) + "\n", "\n".join(run) + "\n"

    def run(
        self,
        argv: Sequence[str],
        cwd: Path,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        limits: Limits | None = None,
    ) -> ExecResult:
        """Boot a VM, run ``argv`` in ``cwd`` (shared read-write), power off, report."""
        lim, deadline = effective_limits(limits, timeout)
        image = guest_image()
        accel = self.accelerator()
        work = cwd.resolve()
        # Guest RAM above the limit, so the guest cgroup (not the allocator) enforces it; under
        # TCG untouched RAM costs the host nothing.
        mem_mb = GUEST_OVERHEAD_MB + max(lim.memory_bytes or 0, 2 * 1024**3) // 1024**2
        if self.transport() == "blk":
            return run_block(self, argv, work, env, lim, deadline, mem_mb)
        with (
            tempfile.TemporaryDirectory(prefix="fleet-microvm-") as tmp,
            disk_quota(work, lim.disk_bytes) as quota,
        ):
            ctl = Path(tmp)
            limits_sh, run_sh = self.command_scripts(
                argv, work, sandbox_env(env), lim, "/sys/fs/cgroup/cmd"
            )
            (ctl / "setup.sh").write_text(self.mounts_script(work))
            (ctl / "limits.sh").write_text(limits_sh)
            (ctl / "run.sh").write_text(run_sh)
            raw = run_process(
                # the 9p share of the worktree is the disk quota's overlay of it
                [
                    *(quota.enter if quota else []),
                    *self.qemu_argv(image, accel, ctl, quota.merged if quota else work, mem_mb),
                ],
                env={"PATH": "/usr/bin:/bin"},
                timeout=deadline,
                output_cap=256 * 1024,  # the serial console: kernel and init diagnostics only
                kill_tree=tree_killer(None),
            )
            result = self._result(raw.timed_out, raw.wall_s, raw.stdout + raw.stderr, ctl, lim)
            if quota is not None and quota.full() and result.reason is EndReason.EXITED:
                result = dataclasses.replace(result, reason=EndReason.KILLED_BY_LIMIT)
            return result

    def _result(
        self, timed_out: bool, wall_s: float, console: bytes, ctl: Path, lim: Limits
    ) -> ExecResult:
        stdout, out_trunc = read_capped(ctl / "stdout", lim.output_bytes)
        stderr, err_trunc = read_capped(ctl / "stderr", lim.output_bytes)
        exit_file = ctl / "exit"
        limit = (ctl / "limit").read_text().strip() if (ctl / "limit").exists() else ""
        if timed_out:
            code, reason = 137, EndReason.TIMEOUT
        elif not exit_file.exists():
            raise GuestImageError(
                "the microVM ended without reporting an exit code; console and QEMU: "
                f"{decode(console)[-1500:]}"
            )
        else:
            code = exit_code_of(int(exit_file.read_text().strip() or "1"))
            signalled = code - 128 if code > 128 else 0
            limited = limit or signalled in (24, 25) or out_trunc or err_trunc
            reason = EndReason.KILLED_BY_LIMIT if limited else EndReason.EXITED
        peak = (ctl / "peak").read_text().strip() if (ctl / "peak").exists() else ""
        return ExecResult(
            exit_code=code,
            stdout=stdout,
            stderr=stderr,
            wall_s=wall_s,
            peak_memory_bytes=int(peak) if peak.isdigit() else None,
            reason=reason,
            backend=self.name,
            truncated=out_trunc or err_trunc,
        )

    def probe(self) -> ProbeResult:
        """Builds the image if needed, boots a VM running ``true``, and measures it."""
        try:
            self._binary()
            guest_image()
            accel = self.accelerator()
        except OSError as exc:
            return ProbeResult(self.name, False, str(exc), strength=self.strength)
        try:
            res, latency = timed_probe_run(self, ["/bin/true"], timeout=60)
        except OSError as exc:
            return ProbeResult(self.name, False, f"boot failed: {exc}", strength=self.strength)
        vmm = "Firecracker" if self.vmm() == "firecracker" else "QEMU microvm"
        detail = f"{vmm}, accel={accel}, transport={self.transport()}" + (
            "" if accel == "kvm" else " (software emulation: seconds per command)"
        )
        if self.transport() == "9p":
            detail += f"; {doctor_note()}"
        else:
            detail += "; disk quota via a size-limited tmpfs worktree in the guest"
        return ProbeResult(self.name, res.ok, detail, latency, self.strength)

    def probe_for_auto(self) -> ProbeResult:
        """For ``auto``: usable only with KVM, since TCG costs seconds per command."""
        try:
            self._binary()
            accel = self.accelerator()
        except OSError as exc:
            return ProbeResult(self.name, False, str(exc), strength=self.strength)
        if accel != "kvm":
            return ProbeResult(
                self.name, False, "no working KVM (a TCG microVM is too slow for auto)",
                strength=self.strength,
            )  # fmt: skip
        return self.probe()

