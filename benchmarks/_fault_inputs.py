"""The hostile-input and concurrency rows of ``bench_faults.py``: hostile files, hostile merges,
concurrent sweeps. Each drives the real command from outside, as the issue's probes did.

- ``hostile files``: a repository whose committed files are links to ``/dev/zero``, to a FIFO,
  dangling, looping, leaving the repository, a directory link out, a 2.4 MB module, invalid
  UTF-8 and NUL bytes, beside one real finding; ``fleet plan`` with a query campaign
  (``yaml-safe-load``) and a diagnostics campaign (``ruff-up``, ruff over the files), each under
  a 4 GB address-space cap and a 120 s timeout. Failure: an exit other than 0, a traceback, a
  timeout; lost: the real finding missing from the plan.
- ``hostile merges``: real ``git merge``s with ``fleet merge-driver`` configured, on 2,000-deep
  nesting next to conflicting edits, a 1,500-term expression, a 23 MB module with a conflicting
  edit, a 2.2 MB module with disjoint edits, NUL bytes, invalid UTF-8 and CRLF against LF.
  Failure: the driver ending by a signal or a traceback, an exit outside git's 0/1/2, or the
  driver itself (its own peak RSS and CPU, git's child excluded) past 10 s of CPU or 512 MB;
  lost: a clean merge (exit 0) missing either side's edit.
- ``concurrent sweeps``: 5 ``fleet sweep --in-process`` of one campaign started at once on a
  fresh clone, then a normal sweep. Failure: any of the five exiting other than 0 (swept) or 3
  (refused in one line), a traceback, or the normal sweep failing; lost: the finding not fixed
  on ``main`` after the normal sweep.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FLEET = str(Path(sys.executable).parent / "fleet")
Row = dict[str, Any]
_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b.invalid",
        "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b.invalid"}  # fmt: skip


def _git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **_ENV},
                          capture_output=True, text=True, check=check)  # fmt: skip


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (4 * 1024**3, 4 * 1024**3))


CONFIG = "import yaml\n\n\ndef load_config(text):\n    return yaml.load(text)\n"


def _hostile_repo(root: Path) -> None:
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "config.py").write_text(CONFIG)
    outside = root.parent / f"{root.name}-outside"
    outside.mkdir()
    (outside / "x.py").write_text("import yaml\nyaml.load('a')\n")
    links = {"zero.py": "/dev/zero", "fifo.py": "pipe", "dangling.py": "gone.py",
             "loop.py": "loop.py", "outside.py": "/etc/hostname", "alias.py": "config.py",
             "out": str(outside)}  # fmt: skip
    for name, target in links.items():
        os.symlink(target, root / "app" / name)
    (root / "app" / "huge.py").write_text("x = 1\n" * 400_000)
    (root / "app" / "badutf.py").write_bytes(b"\xff\xfe yaml.load(x)\n")
    (root / "app" / "nul.py").write_bytes(b"import yaml\nyaml.load(\0)\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "hostile")
    os.mkfifo(root / "app" / "pipe")  # git cannot hold a FIFO: it is in the worktree only


def bench_hostile_files(tmp: Path, repeat: int) -> Row:
    attempts = failures = lost = 0
    for r in range(repeat):
        repo = tmp / f"hostile-{r}"
        _hostile_repo(repo)
        for campaign in ("yaml-safe-load", "ruff-up"):
            attempts += 1
            try:
                done = subprocess.run(
                    [FLEET, "plan", str(repo), "--campaign", campaign, "--json"],
                    capture_output=True, text=True, timeout=120, preexec_fn=_cap_memory,
                )  # fmt: skip
            except subprocess.TimeoutExpired:
                failures += 1
                continue
            failures += done.returncode != 0 or "Traceback" in done.stdout + done.stderr
            if campaign == "yaml-safe-load":
                lost += "app/config.py::load_config" not in done.stdout
        shutil.rmtree(repo, ignore_errors=True)
    return {"fault": "hostile files (10 kinds) through fleet plan (query + diagnostics "
            "campaigns)", "attempts": attempts, "failures": failures, "lost": lost}  # fmt: skip


# (name, base, ours, theirs): each side's own edit is a line the merged text must keep
def _merge_cases() -> list[tuple[str, bytes, bytes, bytes, tuple[bytes, bytes]]]:
    deep = "(" * 2000 + "1" + ")" * 2000
    many = " + ".join(f"v{i}" for i in range(1500))
    body = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(700_000))
    mid = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(70_000))

    def pair(rest: str) -> tuple[bytes, bytes, bytes]:
        """Adjacent edits of A (ours) and B (theirs): a line conflict for git, so the
        structural stage is asked."""
        return (f"A = 1\nB = 2\n{rest}".encode(), f"A = 10\nB = 2\n{rest}".encode(),
                f"A = 1\nB = 20\n{rest}".encode())  # fmt: skip

    cases = []
    for name, rest in (("2,000-deep nesting", f"DEEP = {deep}\n"),
                       ("1,500-term expression", f"X = {many}\n"),
                       ("23 MB module", body)):  # fmt: skip
        base, ours, theirs = pair(rest)
        cases.append((name, base, ours, theirs, (b"A = 10", b"B = 20")))
    base = f"X = 0\n{mid}Y = 0\n".encode()
    cases.append(("2.2 MB module, disjoint edits", base, base.replace(b"X = 0", b"X = 1"),
                  base.replace(b"Y = 0", b"Y = 2"), (b"X = 1", b"Y = 2")))  # fmt: skip
    base, ours, theirs = pair("Z = b'\0'\n")
    cases.append(("NUL bytes", base.replace(b"'\0'", b"'\0\0'"), ours, theirs,
                  (b"A = 10", b"B = 20")))  # fmt: skip
    base, ours, theirs = pair("# \xff\n")
    cases.append(("invalid UTF-8", base.replace("ÿ".encode(), b"\xff"),
                  ours.replace("ÿ".encode(), b"\xff"), theirs.replace("ÿ".encode(), b"\xff"),
                  (b"A = 10", b"B = 20")))  # fmt: skip
    base, ours, theirs = pair("def g():\n    return 2\n")
    cases.append(("CRLF against LF", base, ours.replace(b"\n", b"\r\n"), theirs,
                  (b"A = 10", b"B = 20")))  # fmt: skip
    return cases


_MEASURED = (
    "import resource, sys\n"
    "from fleet.merge.driver import main\n"
    "code = main(sys.argv[1:])\n"
    "use = resource.getrusage(resource.RUSAGE_SELF)\n"
    "hwm = next(int(line.split()[1]) for line in open('/proc/self/status')\n"
    "           if line.startswith('VmHWM:'))\n"
    "print('fleet-bench-usage', hwm, use.ru_utime + use.ru_stime, file=sys.stderr)\n"
    "raise SystemExit(code)\n"
)


def bench_hostile_merges(tmp: Path, repeat: int) -> Row:
    attempts = failures = lost = 0
    peak_rss_kib, peak_cpu_s = 0, 0.0
    driver = tmp / "measured-driver.py"
    driver.write_text(_MEASURED)
    cases = _merge_cases()
    for r in range(repeat):
        for i, (_, base, ours, theirs, edits) in enumerate(cases):
            repo = tmp / f"merge-{r}-{i}"
            repo.mkdir()
            _git(repo, "init", "-q", "-b", "main")
            log = repo.parent / f"merge-{r}-{i}.usage"
            _git(repo, "config", "merge.fleet.driver",
                 f"{sys.executable} {driver} %O %A %B %P 2>>{log}")  # fmt: skip
            (repo / ".gitattributes").write_text("*.py merge=fleet\n")
            (repo / "m.py").write_bytes(base)
            _git(repo, "add", "-A")
            _git(repo, "commit", "-qm", "base")
            _git(repo, "checkout", "-qb", "left")
            (repo / "m.py").write_bytes(ours)
            _git(repo, "commit", "-qam", "left")
            _git(repo, "checkout", "-q", "main")
            (repo / "m.py").write_bytes(theirs)
            _git(repo, "commit", "-qam", "right")
            _git(repo, "merge", "-q", "left", "-m", "m", check=False)
            attempts += 1
            text = log.read_text(errors="replace") if log.exists() else ""
            usage = [ln.split() for ln in text.splitlines() if ln.startswith("fleet-bench-usage")]
            if not usage or "Traceback" in text:
                failures += 1  # the driver died before reporting (a signal) or raised
            else:
                rss_kib, cpu_s = int(usage[-1][1]), float(usage[-1][2])
                failures += rss_kib > 512 * 1024 or cpu_s > 10.0
                peak_rss_kib, peak_cpu_s = max(peak_rss_kib, rss_kib), max(peak_cpu_s, cpu_s)
            merged = (repo / "m.py").read_bytes()
            if b"<<<<<<<" not in merged:
                lost += not all(edit in merged for edit in edits)
            shutil.rmtree(repo, ignore_errors=True)
    return {"fault": f"hostile merges ({len(cases)} kinds) through git + fleet merge-driver",
            "attempts": attempts, "failures": failures, "lost": lost,
            "driver_peak_rss_mb": round(peak_rss_kib / 1024),
            "driver_peak_cpu_s": round(peak_cpu_s, 2)}  # fmt: skip


SWEEP_FILES = {
    "app/__init__.py": "",
    "app/config.py": CONFIG,
    "tests/__init__.py": "",
    "tests/test_config.py": ("from app.config import load_config\n\n\n"
                             "def test_config():\n    assert load_config('a: 1') == {'a': 1}\n"),
}  # fmt: skip


def bench_concurrent_sweeps(tmp: Path, rounds: int) -> Row:
    attempts = failures = lost = 0
    env = {**os.environ, **_ENV, "FLEET_ENGINE": "in-process"}
    env.pop("FLEET_HOME", None)
    for r in range(rounds):
        repo = tmp / f"concurrent-{r}"
        repo.mkdir()
        for rel, text in SWEEP_FILES.items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text)
        _git(repo, "init", "-q", "-b", "main")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", "init")
        argv = [FLEET, "sweep", str(repo), "--campaign", "yaml-safe-load", "--sandbox", "bwrap"]
        procs = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True) for _ in range(5)]  # fmt: skip
        for proc in procs:
            out, _ = proc.communicate(timeout=900)
            attempts += 1
            failures += proc.returncode not in (0, 3) or "Traceback" in out
        final = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
        failures += final.returncode != 0
        lost += "yaml.safe_load" not in _git(repo, "show", "main:app/config.py").stdout
        shutil.rmtree(repo, ignore_errors=True)
    return {"fault": "5 sweeps of one campaign at once on a fresh state directory, then one",
            "attempts": attempts, "failures": failures, "lost": lost}  # fmt: skip
