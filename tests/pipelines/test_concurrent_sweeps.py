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
after them (a sixth child, once the five have ended), every later round from the same
interpreter, one round after the other: ~2 CPU-s of imports paid once instead of six times a
round (~1.5 CPU-s a round more when each round had its own interpreter), and the five reach
the state directory within milliseconds of each other, a tighter race than five interpreters
starting; round 0's are five interpreters.

``test_five_processes_create_one_instance`` is the race alone, cheaply: without the lock, 5
processes opening a fresh instance crashed in 2 of 3 rounds here, leaving ``alembic_version``
with two heads in 2 of the 3 databases (``alembic ... more than one head present``). Its five
processes are forked from one that has imported Dagster already (3 CPU-s of imports per process
otherwise; one for all the rounds, ~1.2 CPU-s a round more with one a round), and released
together through a pipe: they reach the instance within milliseconds of each other, a tighter
race than five interpreters starting."""

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
# Every round from one parent that has imported Dagster once: for each instance directory in
# argv[1:] in turn, five children forked, each opening it once they are all forked (the parent
# closes the pipe they wait on); exit 1 with the traceback on stderr. One line per round: the
# five exit codes.
OPEN_INSTANCE = f"""
import os, sys, traceback
from pathlib import Path
from fleet_pipelines.commands._sweep import instance_for
from fleet_pipelines.storage import ensure_instance_config
worst = 0
for home in sys.argv[1:]:
    go_r, go_w = os.pipe()
    children = []
    for _ in range({AT_ONCE}):
        pid = os.fork()
        if pid == 0:
            os.close(go_w)
            os.read(go_r, 1)
            try:
                instance_for(Path(home), ensure_instance_config).dispose()
            except BaseException:
                traceback.print_exc()
                sys.stderr.flush()
                os._exit(1)
            os._exit(0)
        children.append(pid)
    os.close(go_w)
    os.close(go_r)
    codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children]
    print(" ".join(map(str, codes)), flush=True)
    worst = max(worst, *codes)
sys.exit(worst != 0)
"""

# The later rounds' five sweeps: ``fleet sweep REPO`` (``fleet_pipelines.cli.main``, as ``python
# -m fleet_pipelines.cli`` runs it) in five children forked after the sweep's imports and released
# together, every round from the same parent, one round after the other (argv: pairs of the
# round's repository and a directory for each child's N.out / N.err / N.code); an exception out
# of ``main`` is printed as a traceback on its stderr, exit 1.
FORKED_SWEEPS = f"""
import os, sys, traceback
from pathlib import Path
import fleet_pipelines.commands._sweep, fleet_pipelines.commands.pipeline  # the imports
from fleet_pipelines.cli import main
sys.stdout.flush(); sys.stderr.flush()

def sweep(repo, out, n, go=None):
    \"\"\"Fork child ``n`` (its N.out / N.err); ``go``: the pipe it waits on to close.\"\"\"
    pid = os.fork()
    if pid:
        return pid
    for fd, name in ((1, f"{{n}}.out"), (2, f"{{n}}.err")):
        os.dup2(os.open(out / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
    if go is not None:
        os.close(go[1])
        os.read(go[0], 1)
    try:
        code = main(["sweep", repo, "-c", "{CAMPAIGN}", "--sandbox", "bwrap"])
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush(); sys.stderr.flush()
    os._exit(code)

def wait(out, n, pid):
    (out / f"{{n}}.code").write_text(str(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])))

rounds = sys.argv[1:]
for repo, out in zip(rounds[::2], map(Path, rounds[1::2])):
    go = os.pipe()
    children = [sweep(repo, out, n, go) for n in range({AT_ONCE})]
    os.close(go[1])
    os.close(go[0])
    for n, pid in enumerate(children):
        wait(out, n, pid)
    # then the normal sweep, alone, in one more child of the same parent: {AT_ONCE}.out/.err/.code
    wait(out, {AT_ONCE}, sweep(repo, out, {AT_ONCE}))
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


Ended = list[tuple[int, str, str]]
"""A round's six sweeps: exit code, stdout and stderr of each (the five, then the normal one)."""


def _five_sweeps(repo: Path, cwd: Path, env: dict[str, str]) -> Ended:
    """Five ``fleet sweep``s of ``repo`` at once, each its own interpreter, then a normal one
    alone."""
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


def _forked_rounds(repos: list[Path], cwd: Path, env: dict[str, str]) -> list[Ended]:
    """A round for each of ``repos``, one after the other, all from one interpreter that has
    imported the sweep (``FORKED_SWEEPS``): five children at once, then the normal one (forked
    after the five have ended)."""
    outs = [repo.with_name(f"{repo.name}-out") for repo in repos]
    for out in outs:
        out.mkdir()
    pairs = [str(path) for pair in zip(repos, outs, strict=True) for path in pair]
    done = subprocess.run([sys.executable, "-c", FORKED_SWEEPS, *pairs], cwd=cwd, env=env,
                          text=True, capture_output=True, timeout=900 * len(repos), check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return [[(int((out / f"{n}.code").read_text()), (out / f"{n}.out").read_text(),
              (out / f"{n}.err").read_text()) for n in range(AT_ONCE + 1)] for out in outs]


def test_five_sweeps_at_once_then_a_normal_sweep(tmp_path: Path, bwrap: object) -> None:
    template = tmp_path / "template"
    template.mkdir()
    git(template, "init", "-q", "-b", "main")
    commit_files(template, FILES, "tiny")
    clean = tmp_path / "clean"
    git(tmp_path, "clone", "-q", str(template), str(clean))
    commit_files(clean, CLEAN, "safe_load")
    repos = [tmp_path / f"round{n}" for n in range(ROUNDS)]
    for n, repo in enumerate(repos):
        git(tmp_path, "clone", "-q", str(template if n == 0 else clean), str(repo))
    rounds = [_five_sweeps(repos[0], tmp_path, _env())]
    if ROUNDS > 1:
        rounds += _forked_rounds(repos[1:], tmp_path, _env(FLEET_ENGINE="in-process"))
    tally = {"swept": 0, "refused": 0, "failed": 0}
    for n, (repo, ended) in enumerate(zip(repos, rounds, strict=True)):
        *five, (normal_code, _normal_out, normal_err) = ended
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
    homes = [tmp_path / f"round{n}" / "dagster" for n in range(ROUNDS)]
    done = subprocess.run([sys.executable, "-c", OPEN_INSTANCE, *map(str, homes)], env=_env(),
                          text=True, capture_output=True, timeout=300 * ROUNDS, check=False)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, f"{done.stdout} {done.stderr[-3000:]}"
    assert len(lines) == ROUNDS, done.stdout
    for n, (home, line) in enumerate(zip(homes, lines, strict=True)):
        assert line.split() == ["0"] * AT_ONCE, f"round {n}: {line}"
        heads = _alembic_heads(home)
        assert len(heads) >= 2 and set(heads.values()) == {1}, (n, heads)
