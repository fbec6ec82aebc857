"""The interpreters a target's tests run on, beyond the target interpreter: one virtualenv per
supported Python present on the machine (pyenv's 3.6-3.13 here), made with the target's test
requirements from PyPI and cached, so the tests run on an old Python without anyone having
installed pytest there.

``$FLEET_TEST_PYTHONS`` chooses them (:func:`plan`):

- unset or ``floor``: the target interpreter and the oldest supported Python present;
- ``all`` (or ``auto``): the target interpreter and every supported Python present;
- ``target``: the target interpreter alone;
- a ``:``-separated list of interpreters: exactly those, as given (no venv is made).

A supported Python that is absent, or whose venv cannot be made, is said in one line of the
verdict (:attr:`Plan.note`), never passed over in silence.

The venvs live under ``$FLEET_PYTHONS_CACHE``, else ``$FLEET_HOME/pythons``, else
``~/.cache/fleet/pythons``, one per (interpreter, requirements), made once: pip installs wheels
only (``--only-binary :all:``), so no package's build code runs on the host, from the index
alone (``PIP_INDEX_URL``, default PyPI: not the machine's find-links, see ``_pip_env``).
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fleet.verify._requirements import test_requirements
from fleet.verify.target import (
    KNOWN,
    TargetPythons,
    Version,
    interpreters,
    supported_pythons,
    version_text,
)
from sandbox import MicroVMSandbox, toolchain_dirs

__all__ = ["Plan", "cache_dir", "judged_environment", "plan", "provision", "sandbox_seeing"]

_MARK = ".fleet-provisioned"
_PIP_TIMEOUT_S = 900


@dataclass(frozen=True)
class Plan:
    """``pythons``: the interpreters to run the tests on, the target interpreter first;
    ``note``: one line on the supported Pythons not run and why (empty when nothing is left);
    ``paths``: directories the sandbox must share read-only for them (venvs, their bases)."""

    pythons: tuple[str, ...]
    note: str = ""
    paths: tuple[Path, ...] = field(default_factory=tuple)


def cache_dir() -> Path:
    """Where the venvs are kept (see the module docstring)."""
    from fleet.home import state_cache

    return state_cache("FLEET_PYTHONS_CACHE", "pythons")


def _version_of(python: str) -> Version | None:
    try:
        done = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    major, _, minor = done.stdout.strip().partition(".")
    return (int(major), int(minor)) if done.returncode == 0 and minor.isdigit() else None


def plan(root: Path, target: str, setting: str | None = None,
         roots: Sequence[Path] | None = None) -> Plan:
    """The interpreters for ``root``'s tests (``target`` = the target interpreter) under
    ``setting`` (default ``$FLEET_TEST_PYTHONS``)."""
    setting = (os.environ.get("FLEET_TEST_PYTHONS", "") if setting is None else setting).strip()
    if setting and setting not in ("floor", "all", "auto", "target"):
        listed = tuple(p for p in setting.split(os.pathsep) if p)
        # the sandbox shares what each needs: its venv (or prefix) and its real interpreter's
        dirs = {d: None for p in listed
                for d in (Path(p).absolute().parent.parent, Path(p).resolve().parent.parent)}
        return Plan(listed, "", tuple(dirs))
    supported = supported_pythons(root)
    if setting == "target" or not supported.versions:
        return Plan((target,))
    found = interpreters(supported, *([tuple(roots)] if roots is not None else []))
    own = _version_of(target)
    absent = [v for v in supported.versions if v not in found and v != own]
    wanted = sorted(v for v in found if v != own)
    if setting in ("", "floor"):
        wanted = wanted[:1]
        if wanted and own is not None and wanted[0] > own:
            wanted = []  # the target interpreter is the oldest supported Python here
    pythons, paths, notes = [target], [], []
    requirements = test_requirements(root)
    for version in wanted:
        got = provision(found[version], version, requirements)
        if isinstance(got, str):
            notes.append(f"Python {version_text(version)}: {got}")
            continue
        pythons.append(str(got))
        paths += [got.parent.parent, Path(found[version]).resolve().parent.parent]
    skipped = [v for v in found if v != own and v not in wanted]
    if skipped:
        notes.append(f"not run on {', '.join(version_text(v) for v in sorted(skipped))} "
                     "(FLEET_TEST_PYTHONS=all runs them)")
    if absent:
        notes.append(f"supported but not on this machine: "
                     f"{', '.join(version_text(v) for v in absent)}")
    if supported.python2:
        notes.append(supported.python2_note())
    note = ""
    if notes:
        note = f"pythons ({supported.describe()}): " + "; ".join(notes)
    return Plan(tuple(pythons), note, tuple(paths))


def judged_environment(target: str, setting: str | None = None) -> dict[str, Any]:
    """What the interpreters a verdict is judged with are, for its key (``fleet.unit``'s
    ``judged_with``), without the target's tree: the target interpreter ``target`` (its real
    path and the digest of its installed distributions,
    :func:`fleet.verify._base_runs.environment_digest`); under a ``:``-separated
    ``$FLEET_TEST_PYTHONS`` list each listed interpreter the same way; under ``floor`` / ``all``
    (and the default) every Python the plan may add (each version present: its real path, size
    and mtime, so an upgraded or newly installed interpreter re-keys the verdict).

    Where the venvs of those Pythons are kept (:func:`cache_dir`, under ``$FLEET_HOME``) is not
    part of it: which venv a tree gets follows from its interpreter and the base commit's declared
    requirements (in the key already), and the processes of one deployment - a sweep, its run
    workers, the celery workers - each have a home of their own, so a location in the key would
    make every process see every other's verdicts as stale and judge them again."""
    from fleet.verify._base_runs import environment_digest

    setting = (os.environ.get("FLEET_TEST_PYTHONS", "") if setting is None else setting).strip()
    out: dict[str, Any] = {"target": [os.path.realpath(target), environment_digest(target)]}
    if setting and setting not in ("floor", "all", "auto", "target"):
        listed = [p for p in setting.split(os.pathsep) if p]
        out["listed"] = [[os.path.realpath(p), environment_digest(p)] for p in listed]
    elif setting != "target":
        present = interpreters(TargetPythons(((2, 7), *KNOWN)))
        out["present"] = {version_text(v): _stat_identity(p) for v, p in sorted(present.items())}
    return out


def _stat_identity(path: str) -> str:
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError:
        return f"{real} absent"
    return f"{real} {info.st_size} {info.st_mtime_ns}"


def provision(interpreter: str, version: Version, requirements: Sequence[str]) -> str | Path:
    """The python of a venv of ``interpreter`` with pytest and ``requirements`` installed (made
    once, then cached), or one line saying why it could not be made."""
    real = os.path.realpath(interpreter)
    key = hashlib.sha256("\n".join([real, *sorted(requirements)]).encode()).hexdigest()[:16]
    base = cache_dir()
    venv = base / f"py{version_text(version)}-{key}"
    python = venv / "bin" / "python"
    if (venv / _MARK).is_file():
        return python
    base.mkdir(parents=True, exist_ok=True)
    with open(base / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be making the same venv
        if (venv / _MARK).is_file():
            return python
        shutil.rmtree(venv, ignore_errors=True)
        steps = [
            [interpreter, "-m", "venv", str(venv)],
            [str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"],
            [str(python), "-m", "pip", "install", "-q", "--only-binary", ":all:", "pytest",
             *requirements],
        ]
        for argv in steps:
            why = _run(argv)
            if why:
                shutil.rmtree(venv, ignore_errors=True)
                return f"no test venv ({' '.join(argv[2:5])}... failed: {why})"
        (venv / _MARK).write_text("\n".join(requirements) + "\n")
    return python


# pip's settings the venvs keep: the index, its certificate, the timeout. Find-links and extra
# local indexes go (and pip's config files with them): a wheel directory has no Requires-Python
# metadata, and an old pip (18.1 on 3.6) installs whatever newest wheel it finds there.
_PIP_KEPT = ("PIP_INDEX_URL", "PIP_CERT", "PIP_DEFAULT_TIMEOUT", "PIP_TRUSTED_HOST")


def _pip_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "PIP_")) or k in _PIP_KEPT}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    if "PIP_CERT" not in env and Path("/etc/ssl/certs/ca-certificates.crt").is_file():
        env["PIP_CERT"] = "/etc/ssl/certs/ca-certificates.crt"
    return env


def _run(argv: list[str]) -> str:
    env = _pip_env()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S,
                              env=env)
    except subprocess.TimeoutExpired:
        return f"timed out after {_PIP_TIMEOUT_S} s"
    except OSError as exc:
        return str(exc)
    if done.returncode == 0:
        return ""
    lines = [ln.strip() for ln in (done.stderr + done.stdout).splitlines()
             if ln.strip() and not ln.startswith("WARNING")]
    return (lines[-1] if lines else f"exit {done.returncode}")[:300]


def sandbox_seeing(sandbox: Any, paths: Sequence[Path]) -> Any:
    """``sandbox``, or a sandbox of the same backend that also shares ``paths`` read-only
    (bubblewrap, gVisor and the microVM keep a ``config.readonly_paths`` list; the microVM's
    ``None`` - its default toolchain - is spelled out first, so the venvs come on top of it, as
    9p shares or as disk images); a backend without one is returned as it is (``local`` sees
    everything)."""
    config = getattr(sandbox, "config", None)
    shared = getattr(config, "readonly_paths", None)
    spelled = shared is not None
    if shared is None and paths and isinstance(sandbox, MicroVMSandbox):
        shared = (sandbox.block_readonly() if sandbox.transport() == "blk"
                  else [Path("/usr"), *toolchain_dirs()])  # MicroVMConfig's default for 9p
    if (not paths or not isinstance(shared, list) or not dataclasses.is_dataclass(config)
            or isinstance(config, type)):
        return sandbox
    missing = [p for p in paths if not any(p == s or p.is_relative_to(s) for s in shared)]
    if not missing and spelled:
        return sandbox
    return type(sandbox)(dataclasses.replace(config, readonly_paths=[*shared, *missing]))
