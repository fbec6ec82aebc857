"""The parts of the sandbox package that need no sandbox: output caps, rlimit prelude, result
mapping, the guest image builders, backend selection errors and the OCI config."""

from __future__ import annotations

import lzma
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox import EndReason, Limits, SandboxUnavailable, make_sandbox, resolve_sandbox
from sandbox._common import exit_code_of, sandbox_env, to_result, toolchain_dirs
from sandbox._guest_image import _Cpio, extract_vmlinux
from sandbox._limits import prelude
from sandbox._process import TRUNCATION_MARKER, RawOutcome, read_capped, run_process, signal_tree
from sandbox.gvisor import GVisorSandbox


def test_run_process_caps_output_and_kills_the_writer() -> None:
    raw = run_process(
        ["/bin/sh", "-c", "yes abc; echo never-here"],
        env={"PATH": "/usr/bin:/bin"},
        timeout=30,
        output_cap=1000,
        kill_tree=signal_tree,
    )
    assert raw.output_limited and raw.truncated
    assert raw.stdout.startswith(b"abc\n" * 250)
    assert b"1000 byte cap reached" in raw.stdout
    assert raw.wall_s < 10


def test_run_process_times_out_and_kills_the_group() -> None:
    raw = run_process(
        ["/bin/sh", "-c", "sleep 100 & sleep 100"],
        env={"PATH": "/usr/bin:/bin"},
        timeout=0.5,
        output_cap=None,
        kill_tree=signal_tree,
    )
    assert raw.timed_out
    assert raw.wall_s < 5  # the background sleep held the pipes: it was killed too


def test_prelude_sets_rlimits_before_exec() -> None:
    argv = prelude(Limits(file_bytes=512 * 10, cpu_s=3, memory_bytes=None), None)
    out = subprocess.run(
        [*argv, "/bin/sh", "-c", "ulimit -f; ulimit -S -t; ulimit -H -t"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["10", "3", "4"]


def test_result_mapping() -> None:
    base = {"returncode": 0, "stdout": b"o\xff", "stderr": b"e", "wall_s": 0.1}
    ok = to_result(RawOutcome(**base), backend="x")  # type: ignore[arg-type]
    assert ok.ok and ok.stdout == "o\ufffd" and ok.reason is EndReason.EXITED
    timed = to_result(RawOutcome(**{**base, "returncode": -9}, timed_out=True), backend="x")  # type: ignore[arg-type]
    assert timed.reason is EndReason.TIMEOUT and timed.exit_code == 137
    xcpu = to_result(RawOutcome(**{**base, "returncode": 128 + 24}), backend="x")  # type: ignore[arg-type]
    assert xcpu.reason is EndReason.KILLED_BY_LIMIT
    assert exit_code_of(-15) == 143


def test_sandbox_env_is_exactly_env_plus_defaults() -> None:
    env = sandbox_env({"A": "1", "PATH": "/x"})
    assert env["A"] == "1" and env["PATH"] == "/x"
    assert set(env) == {"A", "PATH", "HOME", "LANG", "TMPDIR"}
    assert any(
        Path(sys.prefix).resolve() == d or Path(sys.prefix).resolve().is_relative_to(d)
        for d in toolchain_dirs()
    )


def test_cpio_archive_lists_with_a_real_cpio(tmp_path: Path) -> None:
    cpio_bin = shutil.which("cpio") or shutil.which("busybox")
    if cpio_bin is None:
        pytest.skip("neither cpio nor busybox is installed")
    archive = _Cpio()
    archive.dir("d")
    archive.file("d/f.txt", b"hello", 0o644)
    archive.symlink("d/link", "f.txt")
    (tmp_path / "a.cpio").write_bytes(archive.finish())
    cmd = [cpio_bin, "-t"] if cpio_bin.endswith("cpio") else [cpio_bin, "cpio", "-t"]
    with (tmp_path / "a.cpio").open("rb") as f:
        out = subprocess.run(cmd, stdin=f, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["d", "d/f.txt", "d/link"]
    cmd_x = [*cmd[:-1], "-id"] if cpio_bin.endswith("cpio") else [cpio_bin, "cpio", "-id"]
    with (tmp_path / "a.cpio").open("rb") as f:
        subprocess.run(cmd_x, stdin=f, cwd=tmp_path, capture_output=True, check=True)
    assert (tmp_path / "d" / "f.txt").read_bytes() == b"hello"
    assert (tmp_path / "d" / "link").readlink() == Path("f.txt")


def test_extract_vmlinux_finds_the_xz_elf_payload() -> None:
    elf = b"\x7fELF" + bytes(range(256)) * 64
    decoy = lzma.compress(b"not an elf", format=lzma.FORMAT_XZ)
    bzimage = b"MZ setup code" + decoy + b"\0" * 37 + lzma.compress(elf, format=lzma.FORMAT_XZ)
    assert extract_vmlinux(bzimage + b"trailing") == elf


def test_unknown_backend_and_unavailable_backend() -> None:
    with pytest.raises(ValueError, match="unknown sandbox backend"):
        make_sandbox("firecracker-please")
    with pytest.raises(ValueError):
        resolve_sandbox("nope")
    assert issubclass(SandboxUnavailable, OSError)


def test_oci_config_has_no_host_root_and_no_network(tmp_path: Path) -> None:
    work = tmp_path / "wt"
    work.mkdir()
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    cfg = GVisorSandbox().oci_config(bundle, ["true"], work, {"PATH": "/usr/bin"}, Limits())
    assert cfg["root"] == {"path": "rootfs", "readonly": True}
    sources = {m.get("source") for m in cfg["mounts"]}
    assert "/" not in sources and str(Path.home()) not in sources
    namespaces = {n["type"] for n in cfg["linux"]["namespaces"]}
    assert {"network", "pid", "mount"} <= namespaces
    writable = [
        m["destination"] for m in cfg["mounts"] if m["type"] == "bind" and "rw" in m["options"]
    ]
    assert writable == [str(work.resolve())]
    assert cfg["process"]["capabilities"]["bounding"] == []
    assert cfg["linux"]["resources"]["pids"] == {"limit": 256}
    if Path("/etc/shadow").exists():
        shadow = [m for m in cfg["mounts"] if m["destination"] == "/etc/shadow"]
        assert shadow and shadow[0]["source"] == str(bundle / "empty")


def test_a_guest_output_file_is_read_up_to_its_cap(tmp_path: Path) -> None:
    """The microVM's stdout/stderr files (``read_capped``): cut at the cap with the marker a
    captured pipe gets, nothing for a file the guest never wrote."""
    out = tmp_path / "stdout"
    assert read_capped(out, 10) == ("", False)
    out.write_bytes(b"0123456789")
    assert read_capped(out, 10) == ("0123456789", False)
    assert read_capped(out, None) == ("0123456789", False)
    out.write_bytes(b"0123456789abc")
    assert read_capped(out, 10) == ("0123456789" + TRUNCATION_MARKER.format(n=10), True)
