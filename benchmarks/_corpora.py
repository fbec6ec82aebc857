"""Corpora of real code nobody here wrote, fetched from PyPI into benchmarks/.cache on first use."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache"
DJANGO = "5.1.4"


def django_corpus() -> Path:
    """The unpacked Django sdist (``pip download django==5.1.4 --no-binary :all:``)."""
    target = CACHE / f"Django-{DJANGO}"
    if target.is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", f"django=={DJANGO}", "--no-deps",
         "--no-binary", ":all:", "-d", str(CACHE), "-q"],
        check=True,
    )  # fmt: skip
    sdist = next(CACHE.glob(f"[Dd]jango-{DJANGO}.tar.gz"))
    with tarfile.open(sdist) as tar:
        tar.extractall(CACHE, filter="data")
    return target
