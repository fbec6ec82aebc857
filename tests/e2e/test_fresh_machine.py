"""`make demo` / `make test` on a machine without the Debian packages they need.

The closest real equivalent of a fresh Debian machine that this one allows: a private mount
namespace (``unshare -m``; ``unshare -rm`` for a non-root user) in which every binary the
targets need is hidden by bind-mounting an empty, non-executable file over it (git, bwrap,
chromium, qemu, ...), and the PostgreSQL server binaries, the kernel modules and Debian Python's
``ensurepip`` by an empty tmpfs. The real Makefile and ``scripts/ensure-deps`` then run there in a
copy of the files the targets read (no venv yet, as on a fresh checkout):

- without apt allowed (``FLEET_DEPS_APT=0``, what a non-root user gets) the target stops within
  5 s, before the venv is built or anything runs, with one line naming the ``apt-get install``;
- as root with apt, it calls ``apt-get install`` with the missing packages (an ``apt-get`` on
  PATH that records its arguments stands in for Debian's: the real one would report the hidden
  packages as already installed), then checks again and names what is still missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HIDE_BINARIES = ("git", "bwrap", "chromium", "chromedriver", "gcc", "qemu-system-x86_64",
                 "busybox", "runsc", "mkfs.ext4")
HIDE_DIRS = ("/usr/lib/postgresql", "/lib/modules", "/usr/lib/python3.11/ensurepip")
DEMO_PACKAGES = ("git", "bubblewrap", "python3-venv")
TEST_PACKAGES = (*DEMO_PACKAGES, "postgresql", "chromium", "chromium-driver", "gcc",
                 "qemu-system-x86", "busybox-static", "runsc", "linux-image-amd64", "e2fsprogs")


def _tree(tmp_path: Path) -> Path:
    """The files ``make demo`` / ``make test`` read before their first run, and no venv."""
    tree = tmp_path / "checkout"
    for rel in ("Makefile", "scripts/ensure-deps", "pyproject.toml", "setup.py",
                "fleet/graph/_c/pyextract.c"):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tree / rel)
    return tree


def _in_fresh_namespace(tmp_path: Path, command: str, env: dict[str, str],
                        binaries: tuple[str, ...] = HIDE_BINARIES
                        ) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run ``command`` (sh) in ``_tree`` inside a mount namespace where the packages are gone."""
    empty = tmp_path / "empty"
    empty.write_text("")
    empty.chmod(0o644)
    hide = []
    for name in binaries:
        found = shutil.which(name)
        if found:  # the real file (bind mounts follow symlinks such as gcc -> gcc-12)
            hide.append(f"mount --bind {empty} {os.path.realpath(found)}")
    hide += [f"[ -d {d} ] && mount -t tmpfs -o size=1m none {d}" for d in HIDE_DIRS]
    script = "\n".join(["set -e", "mount --make-rprivate /", *hide, "set +e",
                        f"cd {_tree(tmp_path)}", command])
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
    path = f"{tmp_path / 'bin'}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
    started = time.monotonic()
    done = subprocess.run([*unshare, "sh", "-c", script], capture_output=True, text=True,
                          timeout=30, env={"PATH": path, "HOME": str(tmp_path),
                                           "PY": "/usr/bin/python3", **env})
    return done, time.monotonic() - started


@pytest.mark.parametrize("target, packages", [("demo", DEMO_PACKAGES), ("test", TEST_PACKAGES)])
def test_without_apt_the_target_stops_at_once_with_the_command_to_run(
    tmp_path: Path, target: str, packages: tuple[str, ...]
) -> None:
    done, seconds = _in_fresh_namespace(tmp_path, f"make {target}", {"FLEET_DEPS_APT": "0"})
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert done.returncode == 2, done
    assert seconds < 5, seconds
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("Makefile:") and "Traceback" not in done.stderr + done.stdout
    assert lines[0].endswith(f"run: sudo apt-get install -y {' '.join(packages)}.  Stop."), lines
    assert not (tmp_path / "checkout" / ".venv").exists()  # stopped before the venv and any run


def test_as_root_with_apt_the_target_installs_what_is_missing(tmp_path: Path) -> None:
    record = tmp_path / "apt-args"
    fake = tmp_path / "bin" / "apt-get"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho "$@" >> {record}\n')
    fake.chmod(0o755)
    done, seconds = _in_fresh_namespace(tmp_path, "make demo", {})
    calls = record.read_text().splitlines()
    assert calls[0] == "update -qq"
    assert calls[1] == "install -y -qq --no-install-recommends " + " ".join(DEMO_PACKAGES)
    assert "== installing Debian packages for make demo: git bubblewrap" in done.stderr
    # the stand-in installed nothing: the check after the install says so, in one line
    assert done.returncode == 2 and seconds < 5
    assert "apt-get ran, yet still missing: git bubblewrap python3-venv" in done.stderr
    assert not (tmp_path / "checkout" / ".venv").exists()


def test_fleet_demo_without_a_sandbox_stops_before_any_run(tmp_path: Path) -> None:
    """``fleet demo`` run directly (past the Makefile) where no sandbox backend works: one line
    naming the package, exit 2, no Dagster run (no instance directory), no traceback, within
    5 seconds (the check comes before Dagster's import); ``--fresh`` removes nothing then."""
    fleet = ROOT / ".venv" / "bin" / "fleet"
    home = tmp_path / "state"
    kept = home / "demo" / "earlier.txt"
    kept.parent.mkdir(parents=True)
    kept.write_text("an earlier demo's state\n")
    done, seconds = _in_fresh_namespace(
        tmp_path, f"exec {fleet} demo --fresh --home {home}",
        {"DAGSTER_HOME": str(home / "dagster")}, binaries=("bwrap", "runsc", "qemu-system-x86_64"))
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert done.returncode == 2, done
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("error: --sandbox auto: no sandbox backend works here")
    assert "sudo apt-get install -y bubblewrap" in lines[0]
    assert not (home / "dagster").exists() and seconds < 5, seconds
    assert kept.read_text() == "an earlier demo's state\n"
