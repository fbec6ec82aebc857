"""Corpora of real code nobody here wrote, fetched from PyPI into benchmarks/.cache on first use."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache"
DJANGO = "5.1.4"


def sdist_corpus(project: str, version: str, unpacked: str) -> Path:
    """The unpacked sdist of ``project==version`` under the cache (``pip download ... --no-binary
    :all:`` on first use), which unpacks into ``unpacked``."""
    target = CACHE / unpacked
    if target.is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", f"{project}=={version}", "--no-deps",
         "--no-binary", ":all:", "-d", str(CACHE), "-q"],
        check=True,
    )  # fmt: skip
    # the sdist's name has the project's spelling on PyPI (Django-5.1.4.tar.gz, django-...)
    sdist = next(CACHE.glob(f"[{project[0].upper()}{project[0]}]{project[1:]}-{version}.tar.gz"))
    with tarfile.open(sdist) as tar:
        tar.extractall(CACHE, filter="data")
    return target


def django_corpus() -> Path:
    """The unpacked Django sdist (``pip download django==5.1.4 --no-binary :all:``)."""
    return sdist_corpus("django", DJANGO, f"Django-{DJANGO}")
