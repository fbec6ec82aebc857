"""The block transport's host side, without a VM: tar disks in and out, the safe apply of the
guest's result (nothing outside the worktree), toolchain images, and the Firecracker config."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from sandbox._disks import (
    Snapshot,
    apply_output,
    read_ctl,
    toolchain_image,
    write_ctl_disk,
    write_work_disk,
)
from sandbox._guest_image import GuestImage
from sandbox._microvm_blk import output_disk_size, quota_size
from sandbox.firecracker import (
    FIRECRACKER_CMDLINE,
    firecracker_argv,
    firecracker_binary,
    firecracker_config,
    kvm_is_hardware,
)
from sandbox.microvm import MicroVMConfig, MicroVMSandbox
from sandbox.microvm_session import MicroVMSession


def _result_tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> None:
    """Write a result tar the way the guest (or an attacker in the guest) could."""
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)


def _file(name: str, data: bytes, mtime: int = 1_700_000_000) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.mode, info.mtime = 0o644, mtime
    return info, data


def _entry(name: str, kind: bytes, link: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, 0o755
    return info, None


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    work = tmp_path / "wt"
    (work / "pkg").mkdir(parents=True)
    (work / "keep.txt").write_text("keep\n")
    (work / "edit.txt").write_text("old\n")
    (work / "gone.txt").write_text("bye\n")
    (work / "pkg" / "mod.py").write_text("x = 1\n")
    (tmp_path / "outside").mkdir()
    return work, tmp_path / "outside"


def test_worktree_round_trip_applies_changes_and_deletions(tree: tuple[Path, Path]) -> None:
    work, _ = tree
    disk = work.parent / "work.tar"
    snap = write_work_disk(disk, work)
    assert disk.stat().st_size % 512 == 0
    assert set(snap.files) == {"keep.txt", "edit.txt", "gone.txt", "pkg/mod.py"}
    with tarfile.open(disk) as tar:  # what the guest unpacks
        assert sorted(m.name for m in tar if m.isfile()) == [
            "./edit.txt", "./gone.txt", "./keep.txt", "./pkg/mod.py"
        ]  # fmt: skip
    keep_mtime = int((work / "keep.txt").stat().st_mtime)
    (work / "keep.txt").write_text("host edit after packing\n")  # unchanged in the guest
    os.utime(work / "keep.txt", (keep_mtime, keep_mtime))
    rel = str(work).lstrip("/")
    out = work.parent / "out.img"
    _result_tar(out, [
        _file(".ctl/exit", b"0\n"),
        _entry(rel, tarfile.DIRTYPE),
        _file(f"{rel}/keep.txt", b"xxxx\n", keep_mtime),  # as it went in: size 5, same mtime
        _file(f"{rel}/edit.txt", b"new\n"),
        _entry(f"{rel}/pkg", tarfile.DIRTYPE),
        _file(f"{rel}/pkg/mod.py", b"x = 1\n", int((work / "pkg/mod.py").stat().st_mtime)),
        _entry(f"{rel}/new", tarfile.DIRTYPE),
        _file(f"{rel}/new/made.py", b"made\n"),
        _entry(f"{rel}/new/link", tarfile.SYMTYPE, "made.py"),
        _entry(f"{rel}/new/hard", tarfile.LNKTYPE, f"{rel}/new/made.py"),
    ])  # fmt: skip
    done = apply_output(out, work, snap)
    assert done.refused == []
    assert (work / "edit.txt").read_text() == "new\n"
    assert (work / "keep.txt").read_text() == "host edit after packing\n"  # same size+mtime: kept
    assert (work / "new" / "made.py").read_text() == "made\n"
    assert (work / "new" / "link").readlink() == Path("made.py")
    assert (work / "new" / "hard").read_text() == "made\n"
    assert not (work / "gone.txt").exists() and done.deleted == 1
    assert done.written == 5  # edit.txt, new/, made.py, link, hard


def test_escapes_in_the_result_tar_are_refused(tree: tuple[Path, Path]) -> None:
    work, outside = tree
    (work / "host-link").symlink_to(outside)  # planted on the host, carried through untouched
    snap = write_work_disk(work.parent / "work.tar", work)
    rel = str(work).lstrip("/")
    out = work.parent / "out.img"
    dev = tarfile.TarInfo(f"{rel}/null")
    dev.type, dev.devmajor, dev.devminor = tarfile.CHRTYPE, 1, 3
    _result_tar(out, [
        _file(str(outside / "absolute.txt"), b"abs"),
        _file(f"{rel}/../outside/dotdot.txt", b"dotdot"),
        _file(str(outside).lstrip("/") + "/sibling.txt", b"sibling"),
        _entry(f"{rel}/evil-link", tarfile.SYMTYPE, str(outside)),
        _file(f"{rel}/evil-link/through.txt", b"through"),
        _entry(f"{rel}/rel-link", tarfile.SYMTYPE, "../outside"),
        _entry(f"{rel}/host-link", tarfile.SYMTYPE, str(outside)),
        _file(f"{rel}/host-link/via-host-link.txt", b"via"),
        _entry(f"{rel}/hard-passwd", tarfile.LNKTYPE, "etc/passwd"),
        (dev, None),
        _file(f"{rel}/legit.txt", b"legit\n"),
    ])  # fmt: skip
    done = apply_output(out, work, snap)
    assert sorted(p.name for p in outside.iterdir()) == []
    assert not (work.parent / "dotdot.txt").exists()
    assert (work / "legit.txt").read_text() == "legit\n"
    assert not (work / "evil-link").exists() and not (work / "rel-link").exists()
    assert not (work / "hard-passwd").exists() and not (work / "null").exists()
    assert (work / "host-link").readlink() == outside  # the host's own link is left alone
    assert len(done.refused) == 9, done.refused  # every member but legit.txt and host-link
    assert done.written == 1


def test_ctl_disk_and_capped_results(tmp_path: Path) -> None:
    write_ctl_disk(tmp_path / "ctl.tar", {"run.sh": "echo hi\n", "setup.sh": ""})
    with tarfile.open(tmp_path / "ctl.tar") as tar:
        assert tar.getnames() == [".ctl/run.sh", ".ctl/setup.sh"]
    _result_tar(tmp_path / "out.img", [
        _file(".ctl/exit", b"3\n"), _file(".ctl/stdout", b"y" * 5000),
        _file(".ctl/../escape", b"no"), _file(".ctl/sub/x", b"no"),
    ])  # fmt: skip
    ctl = tmp_path / "ctl"
    ctl.mkdir()
    read_ctl(tmp_path / "out.img", ctl, {"stdout": 100})
    assert sorted(p.name for p in ctl.iterdir()) == ["exit", "stdout"]
    assert (ctl / "stdout").read_bytes() == b"y" * 101  # cap + 1: the reader sees the overflow


def test_toolchain_image_is_a_real_ext4_of_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    debugfs = shutil.which("debugfs") or "/usr/sbin/debugfs"
    if not Path(debugfs).exists() or not (
        shutil.which("mkfs.ext4") or Path("/usr/sbin/mkfs.ext4").exists()
    ):
        pytest.skip("e2fsprogs is not installed")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    src = tmp_path / "tc"
    (src / "bin").mkdir(parents=True)
    (src / "bin" / "tool").write_text("#!/bin/sh\necho tool\n")
    (src / "bin" / "tool").chmod(0o755)
    image = toolchain_image(src)
    assert image.parent == tmp_path / "cache" / "fleet-pipelines" / "toolchain"
    assert toolchain_image(src) == image  # cached
    out = subprocess.run([debugfs, "-R", "cat /bin/tool", str(image)],
                         capture_output=True, text=True, check=True)  # fmt: skip
    assert out.stdout == "#!/bin/sh\necho tool\n"
    (src / "bin" / "other").write_text("new")
    assert toolchain_image(src) != image  # the fingerprint saw the change


def test_firecracker_config_shape(tmp_path: Path) -> None:
    image = GuestImage(tmp_path / "vmlinux", tmp_path / "initramfs.cpio", "6.1.0")
    disks = [(tmp_path / "ctl.tar", True), (tmp_path / "out.img", False)]
    cfg = firecracker_config(image, disks, vcpus=2, mem_mb=512)
    assert set(cfg) == {"boot-source", "drives", "machine-config"}  # no network-interfaces
    assert cfg["boot-source"] == {
        "kernel_image_path": str(tmp_path / "vmlinux"),
        "initrd_path": str(tmp_path / "initramfs.cpio"),
        "boot_args": FIRECRACKER_CMDLINE,
    }
    assert "fleet.transport=blk" in FIRECRACKER_CMDLINE.split()
    assert "reboot=k" in FIRECRACKER_CMDLINE.split()  # guest reboot ends firecracker
    assert cfg["drives"] == [
        {"drive_id": "d0", "path_on_host": str(tmp_path / "ctl.tar"),
         "is_root_device": False, "is_read_only": True},
        {"drive_id": "d1", "path_on_host": str(tmp_path / "out.img"),
         "is_root_device": False, "is_read_only": False},
    ]  # fmt: skip
    assert cfg["machine-config"] == {"vcpu_count": 2, "mem_size_mib": 512, "smt": False}
    json.dumps(cfg)  # what --config-file gets
    argv = firecracker_argv("/usr/bin/firecracker", tmp_path / "cfg.json")
    assert argv[:4] == [
        "/usr/bin/firecracker",
        "--no-api",
        "--config-file",
        str(tmp_path / "cfg.json"),
    ]


def test_kvm_probe_wants_hardware_virtualization(tmp_path: Path) -> None:
    kvm = tmp_path / "kvm"
    kvm.write_text("")
    modules = tmp_path / "module"
    (modules / "kvm").mkdir(parents=True)
    (modules / "kvm_pvm").mkdir()
    assert not kvm_is_hardware(modules, str(kvm))  # kvm_pvm (these machines): no
    (modules / "kvm_intel").mkdir()
    assert kvm_is_hardware(modules, str(kvm))
    assert not kvm_is_hardware(modules, str(tmp_path / "absent"))


def test_firecracker_means_the_block_transport_and_kvm(tmp_path: Path) -> None:
    box = MicroVMSandbox(MicroVMConfig(vmm="firecracker", firecracker=str(tmp_path / "nope")))
    assert box.vmm() == "firecracker" and box.transport() == "blk"
    assert box.accelerator() == "kvm"
    with pytest.raises(FileNotFoundError, match="firecracker"):
        box._binary()
    qemu = MicroVMSandbox(MicroVMConfig(vmm="qemu"))
    assert qemu.transport() == "9p"
    assert MicroVMSandbox(MicroVMConfig(vmm="qemu", transport="blk")).transport() == "blk"
    with pytest.raises(ValueError, match="9p transport"):
        MicroVMSession(tmp_path, box).start()


def test_auto_vmm_is_firecracker_only_with_its_binary_and_hardware_kvm() -> None:
    box = MicroVMSandbox()
    expected = firecracker_binary() is not None and kvm_is_hardware()
    assert box.vmm() == ("firecracker" if expected else "qemu")


def test_with_a_disk_quota_the_output_disk_is_bounded_by_the_worktree_and_the_quota() -> None:
    # the guest is root and may write anything onto its output disk (it can rewrite finish.sh):
    # the disk's size is what bounds the host's disk use, so with a quota it is no larger than
    # the result tar can be - the worktree tmpfs's bytes and members plus the capped streams
    snap = Snapshot(files={"a.py": (10, 0), "b.bin": (5000, 0)}, other={".", "d"})
    size, inodes = quota_size(snap, 100 * 1024**2)
    assert size == 4096 + 8192 + 100 * 1024**2  # block-rounded files + the quota
    assert inodes == 4 + 100 * 1024**2 // 4096 + 64
    out = output_disk_size(1 << 20, (size, inodes), 1024**2)
    assert size < out <= size + inodes * 2048 + 2 * 1024**2 + 16 * 1024**2
    assert out < 200 * 1024**2
    assert output_disk_size(1 << 20, None, 1024**2) == 4 * 1024**3  # no quota: as before
