"""tests/_rewrite_cache.py writes the assertion-rewritten modules pytest itself would cache, byte
for byte, and leaves the fixtures (other projects' trees) alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from _pytest.assertion.rewrite import PYC_TAIL

ROOT = Path(__file__).resolve().parents[2]
MODULE = """
def helper(x):
    return x + 1


def test_helper():
    value = helper(1)
    assert value == 2, f"helper gave {value}"
"""


def _tree(root: Path) -> None:
    (root / "tests" / "fixtures" / "proj").mkdir(parents=True)
    (root / "tests" / "pkg").mkdir()
    (root / "tests" / "conftest.py").write_text("import pytest\n")
    (root / "tests" / "pkg" / "test_one.py").write_text(MODULE)
    (root / "tests" / "pkg" / "helpers.py").write_text("X = 1\n")
    (root / "tests" / "fixtures" / "proj" / "test_theirs.py").write_text(MODULE)


def _cached(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in root.rglob(f"*{PYC_TAIL}")}


def _ours(root: Path) -> str:
    return subprocess.run([sys.executable, str(ROOT / "tests" / "_rewrite_cache.py"), str(root)],
                          capture_output=True, text=True, check=True).stdout


def test_the_cache_is_what_pytest_writes(tmp_path: Path) -> None:
    _tree(tmp_path)
    # pytest's own, allowed to write bytecode, collecting the tree (the code objects name their
    # file, so both are written at the same path, one after the other)
    script = ("import sys; sys.dont_write_bytecode = False; import pytest; "
              "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '--collect-only', "
              "'--rootdir', sys.argv[1], '--confcutdir', sys.argv[1], "
              "'-o', 'norecursedirs=fixtures', sys.argv[1] + '/tests']))")
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=tmp_path, check=True,
                   capture_output=True)
    pytests = _cached(tmp_path)
    assert sorted(pytests) == ["tests/__pycache__/conftest" + PYC_TAIL,
                               "tests/pkg/__pycache__/test_one" + PYC_TAIL]
    for name in pytests:
        (tmp_path / name).unlink()
    assert "2 written" in _ours(tmp_path)
    assert _cached(tmp_path) == pytests
    # up to date: nothing written again; an edited module is written again
    assert "0 written" in _ours(tmp_path)
    (tmp_path / "tests" / "pkg" / "test_one.py").write_text(MODULE + "\n# edited\n")
    assert "1 written" in _ours(tmp_path)
    assert _cached(tmp_path) != pytests
