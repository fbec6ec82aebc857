"""The base tree's pytest runs (and its mypy run, :mod:`fleet.verify.dynamic`), cached on disk:
every unit of a sweep on one base commit, every patch of the corpus and every later process
judging a patch on that base reuse the "before" run instead of running the same tests on the same
tree again.

A base run depends only on (:func:`base_key`): the base *tree* id (``git rev-parse REV^{tree}``:
the same content in another clone or commit shares it), the environment (the interpreter's real
path and full version, the digest of what is installed where it looks: its ``.dist-info`` /
``.egg-info`` / ``.egg-link`` entries and ``.pth`` files, :func:`environment_digest`), the
sandbox kind, the test selection, the timeout, the tool and the gate version (a hash of this
module, :mod:`fleet.verify.execution` and :mod:`fleet.verify.dynamic`, which run the tools and
read their reports). The entry's name is the
SHA-256 of that key (content-addressed), and the entry repeats the key, so a collision or a
half-written file is never taken for a result.

The entries live under ``$FLEET_VERIFY_CACHE``, else ``$FLEET_HOME/verify``, else
``~/.cache/fleet/verify`` - beside the test venvs (:func:`fleet.verify.pythons.cache_dir`),
``base-runs/<2 hex>/<sha256>.json``. Two processes that need the same entry take a lock on it
(the second waits and reads what the first wrote: the base tests run once); the entry is written
to a temporary file and renamed into place, so a reader never sees half of one. An entry that
does not parse or does not match its key is ignored with a warning (``logging``) and recomputed.
Only a run that reported (or that a conftest aborted) is kept: a timeout is judged afresh; an
entry older than :data:`MAX_AGE_S` (6 hours) is run again, so a date-dependent test sees about
the same day before and after the patch.

The patched tree's runs are never cached: they are the thing being judged.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any, TypeVar

from fleet.forge._git import run as run_git
from fleet.verify import execution
from fleet.verify._patch import Trees
from fleet.verify.execution import PytestRun, sandbox_env
from sandbox import EndReason, ExecResult

__all__ = ["base_key", "cache_root", "cached_base_check", "cached_base_run",
           "environment_digest", "tree_id"]

log = logging.getLogger(__name__)

FORMAT = 1
# A base run older than this is run again: a date-dependent test (an expiry date, a "today")
# must see the same day before and after the patch, and the patch's run is always today's.
MAX_AGE_S = 6 * 3600
_GATE_VERSION = hashlib.sha256(
    b"".join(Path(m).read_bytes() for m in (__file__, execution.__file__,
                                            Path(__file__).with_name("dynamic.py"),
                                            Path(__file__).with_name("layout.py")))
).hexdigest()[:16]

# Prints what a run in ``python`` depends on, for any Python from 2.7 on (venvs of 3.6 here).
_PROBE = r"""
import os, sys
print(sys.version.replace('\n', ' '))
print(os.path.realpath(sys.executable))
print(sys.prefix)
for d in sys.path:
    if not d or not os.path.isdir(d):
        continue
    print('D ' + d)
    for n in sorted(os.listdir(d)):
        p = os.path.join(d, n)
        if n.endswith(('.dist-info', '.egg-info', '.egg-link')):
            print(p)
        elif n.endswith('.pth'):
            with open(p, 'rb') as f:
                print(p + ' ' + repr(f.read()))
"""

# python -> (digest, mtime of each directory on its sys.path): reused while none has changed
_DIGESTS: dict[str, tuple[str, dict[str, int]]] = {}
_MEMORY: dict[str, Any] = {}
_TREE_IDS: dict[tuple[str, str], str] = {}
T = TypeVar("T")


def cache_root() -> Path:
    """Where the entries live (see the module docstring)."""
    from fleet.home import state_cache

    return state_cache("FLEET_VERIFY_CACHE", "verify")


def environment_digest(python: str) -> str:
    """A digest of ``python``'s version, real path and installed distributions as a run in the
    sandbox sees them (the same environment, :func:`fleet.verify.execution.sandbox_env`), or
    ``""`` when it does not run (then nothing is cached for it). Asked once per process and
    path, and again when a directory on its ``sys.path`` changed (a package installed)."""
    known = _DIGESTS.get(python)
    if known is not None and _mtimes(known[1]) == known[1]:
        return known[0]
    try:
        done = subprocess.run([python, "-c", _PROBE], capture_output=True, timeout=60, cwd="/",
                              env=sandbox_env(python))
    except (OSError, subprocess.TimeoutExpired):
        return ""
    if done.returncode != 0:
        return ""
    dirs = [ln[2:] for ln in done.stdout.decode(errors="replace").splitlines()
            if ln.startswith("D ")]
    digest = hashlib.sha256(done.stdout).hexdigest()
    _DIGESTS[python] = (digest, _mtimes(dict.fromkeys(dirs, 0)))
    return digest


def _mtimes(dirs: dict[str, int]) -> dict[str, int]:
    out = {}
    for d in dirs:
        try:
            out[d] = os.stat(d).st_mtime_ns
        except OSError:
            out[d] = -1
    return out


def base_key(tree_id: str, python: str, sandbox: str, targets: Sequence[str],
             timeout_s: float, tool: str = "pytest") -> dict[str, Any] | None:
    """What a base run of ``tool`` (``pytest``; ``mypy``) depends on, or ``None`` when the
    environment cannot be told (then it is not cached)."""
    digest = environment_digest(python)
    if not tree_id or not digest:
        return None
    return {"format": FORMAT, "gate_version": _GATE_VERSION, "tool": tool, "tree": tree_id,
            "python": python, "environment": digest, "sandbox": sandbox,
            "targets": list(targets), "timeout_s": timeout_s}


def tree_id(trees: Trees) -> str:
    """The tree id of ``trees``' base commit (``""`` when git cannot say: nothing is cached)."""
    where = (str(trees.repo.resolve()), trees.base_sha)
    if where not in _TREE_IDS:
        done = run_git(trees.repo, "rev-parse", f"{trees.base_sha}^{{tree}}")
        if done.returncode != 0 or not trees.base_sha:
            return ""
        _TREE_IDS[where] = done.stdout.decode().strip()
    return _TREE_IDS[where]


def _entry(key: dict[str, Any]) -> Path:
    name = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
    return cache_root() / "base-runs" / name[:2] / f"{name}.json"


def _pytest_run(run: Any) -> PytestRun:
    names = {f.name for f in fields(PytestRun)}
    if not isinstance(run, dict) or set(run) != names:
        raise ValueError("its run has other fields")
    got = PytestRun(**run)
    if not (isinstance(got.outcomes, dict) and isinstance(got.collection_errors, dict)
            and isinstance(got.output, str) and isinstance(got.seen, list)
            and isinstance(got.reported, bool)):
        raise ValueError("its run has fields of the wrong type")
    return got


def _exec_result(run: Any) -> ExecResult:
    names = {f.name for f in fields(ExecResult)}
    if not isinstance(run, dict) or set(run) != names:
        raise ValueError("its run has other fields")
    got = ExecResult(**{**run, "reason": EndReason(run["reason"])})
    if not (isinstance(got.exit_code, int) and isinstance(got.stdout, str)
            and isinstance(got.stderr, str)):
        raise ValueError("its run has fields of the wrong type")
    return got


def _load(path: Path, key: dict[str, Any], decode: Callable[[Any], T]) -> T | None:
    """The run stored at ``path`` for ``key``; ``None`` when absent; a corrupt entry is
    ``None`` with a warning."""
    try:
        if time.time() - path.stat().st_mtime > MAX_AGE_S:
            return None  # too old: run again and replaced, no warning (nothing is wrong with it)
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("base-run cache entry %s unreadable (%s): running the base tree again",
                    path, exc)
        return None
    try:
        data = json.loads(text)
        if data["key"] != key:
            raise ValueError("it was written for another key")
        return decode(data["run"])
    except (ValueError, KeyError, TypeError) as exc:
        log.warning("base-run cache entry %s is corrupt (%s): ignored, running the base tree "
                    "again", path, exc)
        return None


def _store(path: Path, key: dict[str, Any], run: Any) -> None:
    text = json.dumps({"key": key, "run": asdict(run)})
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        log.warning("base-run cache entry %s not written: %s", path, exc)
    _prune(path.parent)


def _prune(bucket: Path) -> None:
    """Removes the entries of one bucket (1/256 of the cache) that are past their age twice
    over, so the cache does not grow without end; a left-over temporary file goes with them."""
    now = time.time()
    for old in [*bucket.glob("*.json"), *bucket.glob(".*.tmp")]:
        try:
            if now - old.stat().st_mtime > 2 * MAX_AGE_S:
                old.unlink()
                if old.suffix == ".json":
                    old.with_suffix(".lock").unlink(missing_ok=True)
        except OSError:
            continue  # another process pruned it first


def cached_base_run(key: dict[str, Any] | None, compute: Callable[[], PytestRun]) -> PytestRun:
    """The base tree's pytest run for ``key``: from this process's memory, from the cache, or
    ``compute()``d and stored (when it reported, or a conftest aborted it). ``key`` ``None``:
    computed."""
    return _cached(key, compute, _pytest_run, lambda run: run.reported or bool(run.aborted_by))


def cached_base_check(key: dict[str, Any] | None,
                      compute: Callable[[], ExecResult]) -> ExecResult:
    """The same for a checker's run on the base tree (mypy, ``fleet.verify.dynamic``): stored
    when it exited with 0 or 1 (errors found or not), never after a timeout or a crash."""
    return _cached(key, compute, _exec_result,
                   lambda run: run.reason is EndReason.EXITED and run.exit_code in (0, 1))


def _cached(key: dict[str, Any] | None, compute: Callable[[], T], decode: Callable[[Any], T],
            keep: Callable[[T], bool]) -> T:
    if key is None:
        return compute()
    path = _entry(key)
    name = path.stem
    if name in _MEMORY:
        return _MEMORY[name]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = open(path.with_suffix(".lock"), "w")  # noqa: SIM115 - held across the run
    except OSError as exc:
        log.warning("base-run cache %s not usable (%s): not cached", path.parent, exc)
        return compute()
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be running the same base tree
        got = _load(path, key, decode)
        if got is None:
            got = compute()
            if not keep(got):
                return got
            _store(path, key, got)
    _MEMORY[name] = got
    while len(_MEMORY) > 256:
        _MEMORY.pop(next(iter(_MEMORY)))
    return got
