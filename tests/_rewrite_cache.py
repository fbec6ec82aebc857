"""Write pytest's assertion-rewritten bytecode of the test modules before the suite runs
(``make bytecode``).

pytest imports each test module through its assertion rewriter and caches the result in
``__pycache__/<name>.<tag>-pytest-<version>.pyc`` (hash-based, so valid in any checkout), but
only when ``sys.dont_write_bytecode`` is false; this project's machines set
``PYTHONDONTWRITEBYTECODE``, and every xdist worker of ``make test`` collects every module at
the same moment, so none of them found another's cache: each parsed and rewrote all of them
(collection 11.7-13.9 CPU-s a worker, 5.3-6.2 with the cache). This writes the same files
pytest would, with pytest's own functions, for the modules it will rewrite: ``test_*.py``,
``*_test.py`` and ``conftest.py`` under ``tests/`` (not the fixtures: other projects' trees that
the tests copy, never import). A file whose cached copy matches its source hash is skipped.

    python tests/_rewrite_cache.py [ROOT]
"""

from __future__ import annotations

import fnmatch
import sys
from pathlib import Path

from _pytest.assertion.rewrite import (
    PYC_TAIL,
    _read_pyc,
    _rewrite_test,
    _write_pyc,
    get_cache_dir,
    try_makedirs,
)

PATTERNS = ("test_*.py", "*_test.py", "conftest.py")


class _State:
    """What ``_write_pyc`` and ``_read_pyc`` need of pytest's ``AssertionState``."""

    @staticmethod
    def trace(message: str) -> None:
        pass


def modules(tests: Path) -> list[Path]:
    return sorted(p for p in tests.rglob("*.py")
                  if "fixtures" not in p.relative_to(tests).parts
                  and any(fnmatch.fnmatch(p.name, pat) for pat in PATTERNS))


def main(root: Path) -> int:
    written = 0
    for path in modules(root / "tests"):
        cache = get_cache_dir(path)
        pyc = cache / (path.name[:-3] + PYC_TAIL)
        if pyc.exists() and _read_pyc(path, pyc, _State.trace) is not None:
            continue
        if not try_makedirs(cache):
            continue
        source_hash, code = _rewrite_test(path, None)  # type: ignore[arg-type]
        written += _write_pyc(_State(), code, source_hash, pyc)  # type: ignore[arg-type]
    print(f"pytest's rewritten test modules: {written} written")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[1]))
