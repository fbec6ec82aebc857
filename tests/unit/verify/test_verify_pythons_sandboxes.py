"""The interpreters a verdict is judged with must be visible inside the sandbox that runs the
tests: an interpreter listed in ``$FLEET_TEST_PYTHONS`` (bubblewrap answered "not found" for a
pyenv 3.6 before its directories were shared), and the venvs in the microVM, whose default
toolchain (``readonly_paths=None``) had made ``sandbox_seeing`` leave the venvs out."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fleet.verify.execution import run
from fleet.verify.pythons import plan, sandbox_seeing
from fleet.verify.target import TargetPythons, interpreters
from sandbox import MicroVMSandbox
from sandbox._microvm_blk import block_readonly_paths
from sandbox.microvm import MicroVMConfig

pytestmark = pytest.mark.sandbox

_VERSION = ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"]


def _python36() -> str:
    found = interpreters(TargetPythons(((3, 6),)))
    assert (3, 6) in found, "no Python 3.6 here: pyenv's 3.6-3.13 are part of this machine"
    return found[(3, 6)]


def test_a_listed_interpreter_is_shared_with_bubblewrap(
    bwrap_sandbox: object, tmp_path: Path
) -> None:
    python = _python36()
    chosen = plan(tmp_path, python, setting=f"{python}{os.pathsep}{python}")
    assert chosen.pythons == (python, python)
    assert Path(python).resolve().parent.parent in chosen.paths
    alone = run(bwrap_sandbox, tmp_path, [python, *_VERSION], 60, python)  # type: ignore[arg-type]
    assert alone.exit_code != 0  # bubblewrap shares only the fleet's own interpreter by default
    seen = run(sandbox_seeing(bwrap_sandbox, chosen.paths), tmp_path, [python, *_VERSION], 60,
               python)
    assert (seen.exit_code, seen.stdout.strip()) == (0, "3.6"), seen.stderr


def test_the_microvm_shares_the_venvs_on_top_of_its_default_toolchain(tmp_path: Path) -> None:
    base = _python36()
    made = tmp_path / "venv36"
    # a venv of the 3.6 interpreter, made by that interpreter as provision() makes them
    subprocess.run([base, "-m", "venv", "--without-pip", str(made)], check=True, timeout=120)
    python = str(made / "bin" / "python")
    paths = (made, Path(base).resolve().parent.parent)

    blk = sandbox_seeing(MicroVMSandbox(MicroVMConfig(transport="blk")), paths)
    assert blk.config.readonly_paths == [*block_readonly_paths(), *paths]

    box = MicroVMSandbox(MicroVMConfig(vmm="qemu", transport="9p"))
    seeing = sandbox_seeing(box, paths)
    assert seeing is not box and seeing.config.readonly_paths[0] == Path("/usr")
    assert seeing.config.readonly_paths[-2:] == list(paths)
    work = tmp_path / "work"
    work.mkdir()
    got = run(seeing, work, [python, *_VERSION], 240, python)
    assert (got.exit_code, got.stdout.strip()) == (0, "3.6"), (got.stdout, got.stderr[-1500:])
