"""Tool environments: the command-line fixers a campaign pins (``tool: {pip: [ruff==0.17.6]}``),
installed from PyPI into a virtualenv of their own, once per set of pins, and shared read-only
into the unit's sandbox.

The environments live under ``$FLEET_TOOLS_DIR``, by default ``<sys.prefix>/fleet-tools``: inside
the fleet's own environment, which every sandbox backend already shares read-only (the
interpreter's directories), so a tool runs in the sandbox with no extra mount. A campaign without
pins uses the target's own environment (``$FLEET_TEST_PYTHON``'s bin) or the fleet's.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from fleet.campaigns._schema import FILES, Tool
from fleet.errors import FleetError
from fleet.verify.execution import sandbox_env

__all__ = ["ToolInstallFailed", "command_env", "expand_command", "tool_bin", "tools_dir"]


class ToolInstallFailed(FleetError):
    """pip could not install a campaign's pinned tools; the message ends with pip's last lines."""


def tools_dir() -> Path:
    return Path(os.environ.get("FLEET_TOOLS_DIR") or Path(sys.prefix) / "fleet-tools")


def tool_bin(tool: Tool, timeout_s: float = 600.0) -> Path | None:
    """The ``bin`` directory of the environment holding ``tool.pip`` (created on first use, under
    a file lock so concurrent units install once); ``None`` without pins."""
    if not tool.pip:
        return None
    pins = "\n".join(sorted(tool.pip))
    key = hashlib.sha256(f"{sys.version_info[:2]}\n{pins}".encode()).hexdigest()[:16]
    root = tools_dir()
    root.mkdir(parents=True, exist_ok=True)
    env_dir = root / key
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (env_dir / ".ready").is_file():
            return env_dir / "bin"
        shutil.rmtree(env_dir, ignore_errors=True)
        steps = [[sys.executable, "-m", "venv", str(env_dir)],
                 [str(env_dir / "bin" / "python"), "-m", "pip", "install", "--no-input", "-q",
                  "--disable-pip-version-check", *sorted(tool.pip)]]
        for argv in steps:
            try:
                proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s,
                                      check=False)
            except subprocess.TimeoutExpired as exc:
                shutil.rmtree(env_dir, ignore_errors=True)
                raise ToolInstallFailed(f"installing {', '.join(tool.pip)}: timed out after "
                                        f"{timeout_s:.0f}s") from exc
            if proc.returncode != 0:
                shutil.rmtree(env_dir, ignore_errors=True)
                tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-10:])
                raise ToolInstallFailed(f"installing {', '.join(tool.pip)} failed "
                                        f"(exit {proc.returncode}):\n{tail}")
        (env_dir / "fleet-tool.txt").write_text(pins + "\n")
        (env_dir / ".ready").write_text("")
    return env_dir / "bin"


def command_env(bin_dir: Path | None) -> dict[str, str]:
    """The sandbox's secret-free environment, with the tool environment's ``bin`` first."""
    env = sandbox_env()
    if bin_dir is not None:
        env["PATH"] = f"{bin_dir}:{env['PATH']}"
    return env


def expand_command(argv: Sequence[str], files: Sequence[str]) -> list[str]:
    """``argv`` with the ``{files}`` element replaced by ``files``."""
    out: list[str] = []
    for arg in argv:
        out.extend(files if arg == FILES else [arg])
    return out
