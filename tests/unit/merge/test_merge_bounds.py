"""The merge never crashes and stays within its bounds, as a git merge driver process.

Stated bounds (docs/merge.md, "Bounds"): on any input the driver exits 0, 1 or 2 by git's
protocol, never by a signal or a traceback; input the structural stage is not known to handle
(2,000-deep nesting, more than ``MAX_FILE_BYTES``, a changed part over ``MAX_PARSED_BYTES``) gets
git's line merge; the driver itself (git's ``merge-file`` child excluded, its cost is git's) uses
at most 10 s of CPU and 512 MB of memory (peak RSS) on any of these inputs, a 20 MB file included.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fleet.merge import Conflicted, merge3
from fleet.merge._bounds import MAX_DEPTH, MAX_FILE_BYTES, depth, parse_within_bounds
from fleet.merge._line import line_merge

# Runs the driver in this interpreter and reports its own peak RSS (KiB) and CPU seconds (git's
# child process excluded) on the last stderr line. The peak is the address space's high-water
# mark (VmHWM, new at exec): getrusage's ru_maxrss keeps the forking parent's peak across exec,
# so under a large pytest-xdist worker it reported the worker's ~550 MB.
_MEASURED = (
    "import resource, sys\n"
    "from fleet.merge.driver import main\n"
    "code = main(sys.argv[1:])\n"
    "use = resource.getrusage(resource.RUSAGE_SELF)\n"
    "hwm = next(int(line.split()[1]) for line in open('/proc/self/status')\n"
    "           if line.startswith('VmHWM:'))\n"
    "print(hwm, use.ru_utime + use.ru_stime, file=sys.stderr)\n"
    "raise SystemExit(code)\n"
)
SECONDS = 10.0
RSS_KIB = 512 * 1024


def _driver(tmp_path: Path, base: str, ours: str, theirs: str) -> tuple[int, str, str, int, float]:
    """(exit status, %A afterwards, stderr, peak RSS KiB, CPU seconds) of one driver run: the
    driver's own figures, git's child process excluded (its cost is git's)."""
    paths = [tmp_path / name for name in ("base.py", "ours.py", "theirs.py")]
    for path, text in zip(paths, (base, ours, theirs), strict=True):
        path.write_text(text)
    command = [sys.executable, "-c", _MEASURED, *map(str, paths), "pkg/deep.py"]
    proc = subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)
    *messages, usage = proc.stderr.splitlines() or ["0 0"]
    rss, seconds = usage.split()
    return proc.returncode, paths[1].read_text(), "\n".join(messages), int(rss), float(seconds)


def _nested(depth_: int) -> str:
    return "DEEP = " + "(" * depth_ + "1" + ")" * depth_ + "\n"


def _module(middle: str, value: int) -> str:
    return f"import os\n\n\ndef f():\n    return {value}\n\n\n{middle}\n\ndef g():\n    return 2\n"


def test_deep_nesting_falls_back_to_git_without_crashing(tmp_path: Path) -> None:
    # libcst's native parser segfaults on this nesting; CPython's parser refuses it.
    base = _module(_nested(2000), 1)
    ours = _module(_nested(2000), 10).replace("return 2", "return 20")
    theirs = _module(_nested(2000), 11)
    status, merged, stderr, rss, seconds = _driver(tmp_path, base, ours, theirs)
    assert status == 1, stderr
    assert merged == line_merge(base, ours, theirs).text_with_markers  # type: ignore[union-attr]
    assert "Traceback" not in stderr
    assert seconds < SECONDS and rss < RSS_KIB


def test_deep_but_valid_expressions_fall_back_too() -> None:
    chain = "VALUE = " + " + ".join(["1"] * 1500) + "\n"
    assert parse_within_bounds(chain) is None
    base, ours, theirs = (
        _module(chain, 1),
        _module(chain, 10).replace("import os", "import re"),
        _module(chain, 11),
    )
    result = merge3(base, ours, theirs, "deep.py")
    assert isinstance(result, Conflicted) and result.stage == "line"


def test_depth_is_counted_without_recursion() -> None:
    import ast

    tree = ast.parse("x = " + "-" * 900 + "1\n")
    assert depth(tree) > MAX_DEPTH
    assert depth(ast.parse("x = 1\n")) <= 4


def test_a_20_mb_file_stays_within_the_bounds(tmp_path: Path) -> None:
    functions = [f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(20_000_000 // 36)]
    base = "".join(functions)
    assert len(base) > 10 * MAX_FILE_BYTES
    ours = base.replace("    return x + 1000\n", "    return x - 1\n")
    theirs = base.replace("    return x + 1000\n", "    return x * 2\n")
    status, merged, stderr, rss, seconds = _driver(tmp_path, base, ours, theirs)
    assert status == 1, stderr
    assert "<<<<<<< ours\n    return x - 1\n||||||| base\n" in merged
    assert rss < RSS_KIB, f"peak RSS {rss} KiB"
    assert seconds < SECONDS, f"{seconds:.1f} s of CPU"


def _large_module(size: int) -> str:
    body = "".join(f"    total += x * {k}\n" for k in range(6))
    functions = [
        f"def f{i}(x):\n    total = 0\n{body}    return total\n\n\n" for i in range(size // 150)
    ]
    return "import os\n\n\n" + "".join(functions)


def test_a_large_module_with_a_small_conflict_merges_structurally_in_bounds(
    tmp_path: Path,
) -> None:
    base = _large_module(MAX_FILE_BYTES // 2)
    assert len(base) < MAX_FILE_BYTES
    ours = base.replace("import os\n", "import os\nimport re\n")
    theirs = base.replace("import os\n", "import os\nimport sys\n")
    status, merged, stderr, rss, seconds = _driver(tmp_path, base, ours, theirs)
    assert status == 0, stderr
    assert merged.startswith("import os\nimport re\nimport sys\n")
    assert seconds < SECONDS and rss < RSS_KIB, (seconds, rss)


def test_a_module_over_the_size_bound_gets_git_merge_quickly(tmp_path: Path) -> None:
    base = _large_module(5 * MAX_FILE_BYTES)
    ours = base.replace("import os\n", "import os\nimport re\n")
    theirs = base.replace("import os\n", "import os\nimport sys\n")
    status, merged, stderr, rss, seconds = _driver(tmp_path, base, ours, theirs)
    assert status == 1, stderr
    assert merged == line_merge(base, ours, theirs).text_with_markers  # type: ignore[union-attr]
    assert seconds < SECONDS and rss < RSS_KIB, (seconds, rss)


def test_the_driver_fails_loudly_when_git_cannot_run(tmp_path: Path) -> None:
    # No git on PATH: exit 2 with a message, and %A holds the whole file between markers, so git
    # (which reads any non-zero status as "conflicted") cannot record our side silently.
    paths = [tmp_path / name for name in ("base.py", "ours.py", "theirs.py")]
    for path, text in zip(paths, ("a = 1\n", "a = 2\n", "a = 3\n"), strict=True):
        path.write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "fleet_pipelines.cli", "merge-driver", *map(str, paths), "a.py"],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": str(tmp_path / "empty"), "HOME": str(tmp_path)},
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("fleet merge-driver: a.py: ") and "git" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert paths[1].read_text() == (
        "<<<<<<< ours\na = 2\n||||||| base\na = 1\n=======\na = 3\n>>>>>>> theirs\n"
    )


def test_a_missing_input_is_an_error_not_a_conflict(tmp_path: Path) -> None:
    ours = tmp_path / "ours.py"
    ours.write_text("a = 2\n")
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "fleet_pipelines.cli", "merge-driver"),
            *(str(tmp_path / "missing.py"), str(ours), str(tmp_path / "gone.py"), "a.py"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and proc.stderr.startswith("fleet merge-driver: a.py: ")
    assert ours.read_text() == "a = 2\n"


def test_help_shows_the_set_up_with_the_absolute_path() -> None:
    fleet = Path(sys.executable).parent / "fleet"
    proc = subprocess.run([str(fleet), "merge-driver", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    assert f'git config merge.fleet.driver "{fleet} merge-driver %O %A %B %P"' in proc.stdout
