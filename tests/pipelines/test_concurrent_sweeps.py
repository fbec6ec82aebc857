"""Issue 18, part 1: any number of fleet processes on one repository and one state directory are
safe. Five ``fleet sweep``s of one campaign start at once on a fresh state directory (so five
processes create its Dagster instance together: that used to leave ``alembic_version`` with two
heads, or fail on its unique key), then a normal sweep must succeed — every round.

Each of the five either sweeps (exit 0) or refuses in one line because another holds the
campaign (exit 3); none ends in a traceback. Rounds: ``FLEET_CONCURRENT_SWEEP_ROUNDS``, default
10 in CI (``CI=true``) and 1 elsewhere; each round is a fresh clone of a tiny repository, the first
with a finding (one unit fixed, verified, integrated), the later ones without (index and plan:
the same race on the instance, the index and the campaign lock at a fraction of the cost). The
first round's sweeps submit their runs, as users' do (queue, daemon, code server); the later
rounds' run them in process (``FLEET_ENGINE=in-process``): the instance, index and campaign locks
are taken before any run either way, and the submitted path is tested in ``tests/engine``, so
those rounds race on the same state for ~1/4 of the time (a submitted tiny sweep here: ~60 s,
in process ~15 s). Their five sweeps are ``fleet_pipelines.cli.main`` in five children forked
from one interpreter that has imported the sweep (``FORKED_SWEEPS``), and so is the normal sweep
after them (a sixth child, once the five have ended): ~2 CPU-s of imports paid once a round
instead of six times, and the five reach the state directory within milliseconds
of each other, a tighter race than five interpreters starting; round 0's are five interpreters.

``test_five_processes_create_one_instance`` is the race alone, cheaply: without the lock, 5
processes opening a fresh instance crashed in 2 of 3 rounds here, leaving ``alembic_version``
with two heads in 2 of the 3 databases (``alembic ... more than one head present``). Its five
processes are forked from one that has imported Dagster already (3 CPU-s of imports per process
otherwise), and released together through a pipe: they reach the instance within milliseconds of
each other, a tighter race than five interpreters starting."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import IN_CI, commit_files, git

CAMPAIGN = "yaml-safe-load"
AT_ONCE = 5
ROUNDS = int(os.environ.get("FLEET_CONCURRENT_SWEEP_ROUNDS") or (10 if IN_CI else 1))
# a round: five starts, one full sweep, one sweep that finds nothing new
pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.timeout(900 * ROUNDS)]
FILES = {
    "app/__init__.py": "",
    "app/config.py": "import yaml\n\n\ndef load_config(text):\n    return yaml.load(text)\n",
    "tests/test_config.py": ("from app.config import load_config\n\n\n"
                             "def test_config():\n    assert load_config('a: 1') == {'a': 1}\n"),
}
CLEAN = {"app/config.py": ("import yaml\n\n\ndef load_config(text):\n"
                           "    return yaml.safe_load(text)\n")}
# Five children forked after the imports, each opening the instance at argv[1] once they are
# all forked (the parent closes the pipe they wait on); exit 1 with the traceback on stderr.
OPEN_INSTANCE = f"""
import os, sys, traceback
from pathlib import Path
from fleet_pipelines.commands._sweep import instance_for
from fleet_pipelines.storage import ensure_instance_config
go_r, go_w = os.pipe()
children = []
for _ in range({AT_ONCE}):
    pid = os.fork()
    if pid == 0:
        os.close(go_w)
        os.read(go_r, 1)
        try:
            instance_for(Path(sys.argv[1]), ensure_instance_config).dispose()
        except BaseException:
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
        os._exit(0)
    children.append(pid)
os.close(go_w)
codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]
print(" ".join(map(str, codes)))
sys.exit(max(codes) != 0)
"""

# The later rounds' five sweeps: ``fleet sweep REPO`` (``fleet_pipelines.cli.main``, as ``python
# -m fleet_pipelines.cli`` runs it) in five children forked after the sweep's imports and released
# together (argv: the repository, then a directory for each child's N.out / N.err / N.code);
# an exception out of ``main`` is printed as a traceback on its stderr, exit 1.
FORKED_SWEEPS = f"""
import os, sys, traceback
from pathlib import Path
import fleet_pipelines.commands._sweep, fleet_pipelines.commands.pipeline  # the imports
from fleet_pipelines.cli import main
repo, out = sys.argv[1], Path(sys.argv[2])
sys.stdout.flush(); sys.stderr.flush()

def sweep(n, go_r=None):
    \"\"\"Fork child ``n`` (its N.out / N.err); ``go_r``: it waits for the pipe to close.\"\"\"
    pid = os.fork()
    if pid:
        return pid
    for fd, name in ((1, f"{{n}}.out"), (2, f"{{n}}.err")):
        os.dup2(os.open(out / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
    if go_r is not None:
        os.close(go_w)
        os.read(go_r, 1)
    try:
        code = main(["sweep", repo, "-c", "{CAMPAIGN}", "--sandbox", "bwrap"])
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush(); sys.stderr.flush()
    os._exit(code)

def wait(n, pid):
    (out / f"{{n}}.code").write_text(str(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])))

go_r, go_w = os.pipe()
children = [sweep(n, go_r) for n in range({AT_ONCE})]
os.close(go_w)
for n, pid in enumerate(children):
    wait(n, pid)
# then the normal sweep, alone, in one more child of the same parent: {AT_ONCE}.out/.err/.code
wait({AT_ONCE}, sweep({AT_ONCE}))
"""


def _command(repo: Path) -> list[str]:
    return [sys.executable, "-m", "fleet_pipelines.cli", "sweep", str(repo), "-c", CAMPAIGN,
            "--sandbox", "bwrap"]


def _env(**extra: str) -> dict[str, str]:
    drop = {"DAGSTER_HOME", "FLEET_HOME", "FLEET_STORE_URL", "FLEET_REPO", "FLEET_BASE_BRANCH",
            "FLEET_ENGINE"}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, "COLUMNS": "200", **extra}


def _alembic_heads(dagster_home: Path) -> dict[str, int]:
    """Rows of ``alembic_version`` in every SQLite database of the instance (one each)."""
    heads = {}
    for db in sorted(dagster_home.rglob("*.db")):
        with sqlite3.connect(db) as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if "alembic_version" in tables:
                rows = conn.execute("SELECT COUNT(*) FROM alembic_version").fetchone()
                heads[str(db.relative_to(dagster_home))] = int(rows[0])
    return heads


def _five_sweeps(repo: Path, cwd: Path, env: dict[str, str], forked: bool
                 ) -> list[tuple[int, str, str]]:
    """Five ``fleet sweep``s of ``repo`` at once, then a normal one alone: exit code, stdout,
    stderr of each (six). Six interpreters, or (``forked``) six children of one that has
    imported the sweep already (the normal one forked after the five have ended)."""
    if not forked:
        procs = [subprocess.Popen(_command(repo), cwd=cwd, env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for _ in range(AT_ONCE)]
        ended = []
        for proc in procs:
            stdout, stderr = proc.communicate(timeout=900)
            ended.append((proc.returncode, stdout, stderr))
        normal = subprocess.run(_command(repo), cwd=cwd, env=env, capture_output=True,
                                text=True, timeout=900, check=False)
        return [*ended, (normal.returncode, normal.stdout, normal.stderr)]
    out = repo.with_name(f"{repo.name}-out")
    out.mkdir()
    done = subprocess.run([sys.executable, "-c", FORKED_SWEEPS, str(repo), str(out)], cwd=cwd,
                          env=env, text=True, capture_output=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return [(int((out / f"{n}.code").read_text()), (out / f"{n}.out").read_text(),
             (out / f"{n}.err").read_text()) for n in range(AT_ONCE + 1)]


def test_five_sweeps_at_once_then_a_normal_sweep(tmp_path: Path, bwrap: object) -> None:
    template = tmp_path / "template"
    template.mkdir()
    git(template, "init", "-q", "-b", "main")
    commit_files(template, FILES, "tiny")
    clean = tmp_path / "clean"
    git(tmp_path, "clone", "-q", str(template), str(clean))
    commit_files(clean, CLEAN, "safe_load")
    tally = {"swept": 0, "refused": 0, "failed": 0}
    for n in range(ROUNDS):
        env = _env() if n == 0 else _env(FLEET_ENGINE="in-process")
        repo = tmp_path / f"round{n}"
        git(tmp_path, "clone", "-q", str(template if n == 0 else clean), str(repo))
        *five, (normal_code, _normal_out, normal_err) = _five_sweeps(repo, tmp_path, env,
                                                                    forked=n > 0)
        for code, out, err in five:
            assert "Traceback" not in err, f"round {n}: {err[-3000:]}"
            if code == 0:
                tally["swept"] += 1
                assert f"campaign {CAMPAIGN}:" in out
            elif code == 3:
                tally["refused"] += 1
                lines = err.strip().splitlines()
                assert len(lines) == 1 and "is already being swept on the state directory" in (
                    lines[0]), err
            else:
                tally["failed"] += 1
                pytest.fail(f"round {n}: exit {code}: {err[-3000:]}")
        assert tally["swept"] >= n + 1  # at least one of the five swept
        assert normal_code == 0, f"round {n}: {normal_err[-3000:]}"
        heads = _alembic_heads(repo / ".fleet" / "dagster")
        assert heads and set(heads.values()) == {1}, heads
    print(f"\nconcurrent sweeps: {ROUNDS} round(s) x {AT_ONCE} (round 0 submitted, the rest in "
          f"process): {tally['swept']} swept, {tally['refused']} refused in one line, "
          f"{tally['failed']} failed; {ROUNDS} normal sweep(s) after them succeeded")


def test_five_processes_create_one_instance(tmp_path: Path) -> None:
    env = _env()
    for n in range(ROUNDS):
        home = tmp_path / f"round{n}" / "dagster"
        done = subprocess.run([sys.executable, "-c", OPEN_INSTANCE, str(home)], env=env,
                              text=True, capture_output=True, timeout=300, check=False)
        assert done.returncode == 0, f"round {n}: {done.stdout} {done.stderr[-3000:]}"
        assert done.stdout.split() == ["0"] * AT_ONCE, done.stdout
        heads = _alembic_heads(home)
        assert len(heads) >= 2 and set(heads.values()) == {1}, heads
