"""Build the microVM's kernel and initramfs from Debian packages, with the standard library only.

Inputs: ``/boot/vmlinuz-*`` and its modules (linux-image-amd64), ``/bin/busybox``
(busybox-static), and the recipe in ``sandbox/guest/`` (``init``, ``modules.txt``). Outputs,
cached under ``~/.cache/fleet-pipelines/microvm/<key>/``: ``vmlinux`` (the ELF kernel, unpacked
from the bzImage's XZ payload: QEMU's microvm boots it through PVH) and ``initramfs.cpio`` (newc).
The key hashes every input, so a new kernel or recipe builds a new image.
"""

from __future__ import annotations

import hashlib
import lzma
import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

GUEST_DIR = Path(__file__).parent / "guest"
APT_HINT = "apt-get install linux-image-amd64 busybox-static qemu-system-x86"
XZ_MAGIC = b"\xfd7zXZ\x00"
# Host files copied into the guest's /etc: enough for names, the dynamic linker and Python.
# busybox applets the guest's init and generated scripts use (under /.guest/bin)
GUEST_APPLETS = (
    *("sh", "mount", "umount", "insmod", "mkdir", "chmod", "cat", "grep", "echo", "mv", "cp"),
    *("ln", "sync", "reboot", "sleep", "ls", "dmesg", "env", "ip", "date", "timeout"),
    *("tar", "head", "df"),
)
GUEST_ETC = ("passwd", "group", "nsswitch.conf", "ld.so.cache", "ld.so.conf", "hosts")


class GuestImageError(OSError):
    """The kernel, modules or busybox needed for the guest are missing; says what to install."""


@dataclass(frozen=True)
class GuestImage:
    kernel: Path
    initramfs: Path
    kernel_version: str


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fleet-pipelines" / "microvm"


def _version_key(name: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", name)]


def find_kernel() -> tuple[Path, str]:
    """The newest ``/boot/vmlinuz-*`` whose modules include 9p (not the cloud kernel)."""
    candidates = []
    for vmlinuz in Path("/boot").glob("vmlinuz-*"):
        version = vmlinuz.name.removeprefix("vmlinuz-")
        if list(Path("/lib/modules", version).rglob("9p.ko*")):
            candidates.append((vmlinuz, version))
    if not candidates:
        raise GuestImageError(f"no kernel with 9p modules in /boot: {APT_HINT}")
    return max(candidates, key=lambda c: _version_key(c[1]))


def _module_names() -> list[str]:
    lines = (GUEST_DIR / "modules.txt").read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


def _find_module(version: str, name: str) -> Path:
    for path in Path("/lib/modules", version, "kernel").rglob(f"{name}.ko*"):
        return path
    raise GuestImageError(f"kernel module {name} missing for {version}: {APT_HINT}")


def _read_module(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".xz":
        return lzma.decompress(data)
    if path.suffix == ".zst":
        raise GuestImageError(f"{path} is zstd-compressed; unpack it or use an .xz/.ko kernel")
    return data


def extract_vmlinux(bzimage: bytes) -> bytes:
    """The ELF kernel inside a bzImage whose payload is XZ-compressed (Debian's)."""
    start = 0
    while (offset := bzimage.find(XZ_MAGIC, start)) >= 0:
        try:
            elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(bzimage[offset:])
        except lzma.LZMAError:
            start = offset + 1
            continue
        if elf.startswith(b"\x7fELF"):
            return elf
        start = offset + 1
    raise GuestImageError("no XZ-compressed ELF kernel found in the bzImage")


class _Cpio:
    """A minimal newc writer: directories, files, symlinks and device nodes."""

    def __init__(self) -> None:
        self.out = bytearray()
        self.ino = 1

    def _entry(
        self, name: str, mode: int, data: bytes = b"", rdev: tuple[int, int] = (0, 0)
    ) -> None:
        encoded = name.encode() + b"\0"
        fields = (self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(encoded), 0)
        self.ino += 1
        self.out += b"070701" + b"".join(b"%08X" % f for f in fields) + encoded
        self.out += b"\0" * (-len(self.out) % 4) + data
        self.out += b"\0" * (-len(self.out) % 4)

    def dir(self, name: str, mode: int = 0o755) -> None:
        self._entry(name, stat.S_IFDIR | mode)

    def file(self, name: str, data: bytes, mode: int = 0o644) -> None:
        self._entry(name, stat.S_IFREG | mode, data)

    def symlink(self, name: str, target: str) -> None:
        self._entry(name, stat.S_IFLNK | 0o777, target.encode())

    def chardev(self, name: str, major: int, minor: int) -> None:
        self._entry(name, stat.S_IFCHR | 0o600, rdev=(major, minor))

    def finish(self) -> bytes:
        self._entry("TRAILER!!!", 0)
        return bytes(self.out) + b"\0" * (-len(self.out) % 512)


def build_initramfs(version: str, busybox: Path) -> bytes:
    cpio = _Cpio()
    for d in ("dev", "proc", "sys", "tmp", "home", "usr", "etc", "root", "run", "var", "mnt"):
        cpio.dir(d)
    cpio.chardev("dev/console", 5, 1)
    cpio.chardev("dev/null", 1, 3)
    for link in ("bin", "sbin", "lib", "lib64"):
        if Path("/", link).is_symlink():  # merged /usr: /bin -> usr/bin, provided by the /usr share
            cpio.symlink(link, str(Path("/", link).readlink()))
    for d in (".guest", ".guest/bin", ".guest/modules"):
        cpio.dir(d)
    cpio.file(".guest/bin/busybox", busybox.read_bytes(), 0o755)
    for applet in GUEST_APPLETS:
        cpio.symlink(f".guest/bin/{applet}", "busybox")
    names = _module_names()
    for name in names:
        cpio.file(f".guest/modules/{name}.ko", _read_module(_find_module(version, name)))
    cpio.file(".guest/modules.txt", "\n".join(names).encode() + b"\n")
    for name in GUEST_ETC:
        src = Path("/etc", name)
        if src.is_file():
            cpio.file(f"etc/{name}", src.read_bytes())
    cpio.file("init", (GUEST_DIR / "init").read_bytes(), 0o755)
    return cpio.finish()


def _key(vmlinuz: Path, busybox: Path) -> str:
    h = hashlib.sha256()
    for p in (vmlinuz, busybox, GUEST_DIR / "init", GUEST_DIR / "modules.txt", Path(__file__)):
        st = p.stat()
        h.update(f"{p}:{st.st_size}:{int(st.st_mtime)}\n".encode())
    h.update((GUEST_DIR / "init").read_bytes() + (GUEST_DIR / "modules.txt").read_bytes())
    return h.hexdigest()[:16]


def guest_image() -> GuestImage:
    """The cached kernel + initramfs, building them on first use (about a second)."""
    vmlinuz, version = find_kernel()
    busybox = Path(shutil.which("busybox") or "/bin/busybox")
    if not busybox.exists():
        raise GuestImageError(f"busybox not found: {APT_HINT}")
    out = cache_root() / f"{version}-{_key(vmlinuz, busybox)}"
    kernel, initramfs = out / "vmlinux", out / "initramfs.cpio"
    if kernel.exists() and initramfs.exists():
        return GuestImage(kernel, initramfs, version)
    try:
        bzimage = vmlinuz.read_bytes()
    except PermissionError as exc:
        raise GuestImageError(f"cannot read {vmlinuz}: {exc}") from exc
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "vmlinux").write_bytes(extract_vmlinux(bzimage))
    (tmp / "initramfs.cpio").write_bytes(build_initramfs(version, busybox))
    try:
        tmp.rename(out)
    except OSError:  # another process built it first
        shutil.rmtree(tmp, ignore_errors=True)
    return GuestImage(kernel, initramfs, version)


__all__ = ["GuestImage", "GuestImageError", "extract_vmlinux", "guest_image"]
