"""Corpora of real code nobody here wrote, fetched from PyPI into benchmarks/.cache on first use."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tarfile
import urllib.parse
import urllib.request
from pathlib import Path

CACHE = Path(__file__).resolve().parent / ".cache"
DJANGO = "5.1.4"


def sdist_corpus(project: str, version: str, unpacked: str) -> Path:
    """The unpacked sdist of ``project==version`` under the cache, which unpacks into
    ``unpacked``. Fetched on first use with ``pip download ... --no-binary :all:``; where pip
    cannot (it builds the sdist's metadata, and a project whose build needs Cython would build
    Cython from source first), straight from the package index's simple page, its sha256
    checked."""
    target = CACHE / unpacked
    if target.is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    pattern = f"[{project[0].upper()}{project[0]}]{project[1:]}-{version}.tar.gz"
    if not any(CACHE.glob(pattern)):
        pip = subprocess.run(
            [sys.executable, "-m", "pip", "download", f"{project}=={version}", "--no-deps",
             "--no-binary", ":all:", "--no-build-isolation", "-d", str(CACHE), "-q"],
            capture_output=True, text=True,
        )  # fmt: skip
        if pip.returncode != 0 or not any(CACHE.glob(pattern)):
            _from_simple_index(project, version)
    # the sdist's name has the project's spelling on PyPI (Django-5.1.4.tar.gz, django-...)
    sdist = next(CACHE.glob(pattern))
    with tarfile.open(sdist) as tar:
        tar.extractall(CACHE, filter="data")
    return target


def _from_simple_index(project: str, version: str) -> None:
    """``project``'s ``version`` sdist from the simple index (``PIP_INDEX_URL`` or PyPI's)."""
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    page = f"{index}/{project.lower()}/"
    html = urllib.request.urlopen(page, timeout=60).read().decode()
    name = re.escape(f"{project}-{version}.tar.gz")
    found = re.search(rf'href="([^"#]*/({name}))#sha256=([0-9a-f]{{64}})"', html, re.IGNORECASE)
    if found is None:
        raise SystemExit(f"no sdist of {project} {version} on {page}")
    url, name, digest = found.groups()
    data = urllib.request.urlopen(urllib.parse.urljoin(page, url), timeout=300).read()
    if hashlib.sha256(data).hexdigest() != digest:
        raise SystemExit(f"{name} from {page}: sha256 differs from the index's")
    (CACHE / name).write_bytes(data)


def django_corpus() -> Path:
    """The unpacked Django sdist (``pip download django==5.1.4 --no-binary :all:``)."""
    return sdist_corpus("django", DJANGO, f"Django-{DJANGO}")
