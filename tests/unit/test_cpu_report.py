"""tests/_cpu.py, the suite's per-test CPU report, on a run of its own: the dearest tests and
files in the terminal summary, every test's figures in ``FLEET_TEST_CPU_JSON``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

BURN = '''import os
import time


def _burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_burns_a_little():
    _burn(0.3)


def test_does_nothing():
    pass


def test_leaves_an_empty_sandbox_group():
    # as a sandbox whose runner was killed leaves it, inside the worker's own cpuacct group
    from sandbox._limits import _own_paths

    own = _own_paths().get("cpuacct")
    group = "/sys/fs/cgroup/cpuacct" + own if own else ""
    left = "none"
    if own and os.path.basename(group).startswith("fleet-tests-"):
        os.mkdir(os.path.join(group, "fleet-sandbox-left"))
        left = group
    with open("group.txt", "w") as f:
        f.write(left)
'''

CHILD = '''import subprocess
import sys


def test_a_child_burns():
    code = "import time\\nend = time.process_time() + 0.3\\nwhile time.process_time() < end: pass"
    subprocess.run([sys.executable, "-c", code], check=True)
'''


def test_the_report_names_the_dearest_tests_and_files(tmp_path: Path) -> None:
    (tmp_path / "test_burn.py").write_text(BURN)
    (tmp_path / "test_child.py").write_text(CHILD)
    out = tmp_path / "cpu.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FLEET_TEST_CPU_TOP": "2",
           "FLEET_TEST_CPU_JSON": str(out)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-p", "no:randomly", "-p", "tests._cpu", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    tests_at = next(i for i, line in enumerate(lines) if "most CPU, 2 tests" in line)
    files_at = next(i for i, line in enumerate(lines) if "most CPU, 2 test files" in line)
    shown = lines[tests_at + 1:tests_at + 3]
    # the two that burn, not the one that does nothing; the child's CPU counted in its test
    assert {line.split()[-1] for line in shown} == {
        "test_burn.py::test_burns_a_little", "test_child.py::test_a_child_burns"}, done.stdout
    assert any("CPU-s in all 4 tests" in line for line in lines[tests_at + 3:files_at])
    files = {line.split()[-1]: (float(line.split()[0]), int(line.split()[1]))
             for line in lines[files_at + 1:files_at + 3]}
    assert files.keys() == {"test_burn.py", "test_child.py"}, done.stdout
    assert files["test_burn.py"][1] == 3 and files["test_child.py"][1] == 1
    figures = json.loads(out.read_text())
    assert figures.keys() == {"test_burn.py::test_burns_a_little",
                              "test_burn.py::test_does_nothing",
                              "test_burn.py::test_leaves_an_empty_sandbox_group",
                              "test_child.py::test_a_child_burns"}
    own, reaped, _tree = figures["test_burn.py::test_burns_a_little"]
    assert own >= 0.25, figures
    own, reaped, _tree = figures["test_child.py::test_a_child_burns"]
    assert reaped >= 0.25, figures  # the child's CPU, reaped by its test
    own, reaped, _tree = figures["test_burn.py::test_does_nothing"]
    assert own + reaped < 0.2, figures
    assert files["test_burn.py"][0] >= 0.25 and files["test_child.py"][0] >= 0.25
    # the run's own group went at its end, with the empty sandbox group left inside it
    left = (tmp_path / "group.txt").read_text()
    if Path("/sys/fs/cgroup/cpuacct/cgroup.procs").exists() and os.geteuid() == 0:
        assert left.startswith("/sys/fs/cgroup/cpuacct/"), left
        assert not Path(left).exists(), left
    else:
        assert left == "none"
