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


def sdist_corpus(project: str, version: str, unpacked: str | None = None) -> Path:
    """The unpacked sdist of ``project==version`` under the cache, which unpacks into
    ``unpacked`` (else the archive's own top directory). Fetched on first use with ``pip
    download ... --no-binary :all:``; where pip cannot (it builds the sdist's metadata, and a
    project whose build needs Cython would build Cython from source first), straight from the
    package index's simple page, its sha256 checked."""
    if unpacked is not None and (CACHE / unpacked).is_dir():
        return CACHE / unpacked
    CACHE.mkdir(parents=True, exist_ok=True)
    sdist = _cached_sdist(project, version)
    if sdist is None:
        pip = subprocess.run(
            [sys.executable, "-m", "pip", "download", f"{project}=={version}", "--no-deps",
             "--no-binary", ":all:", "--no-build-isolation", "-d", str(CACHE), "-q"],
            capture_output=True, text=True,
        )  # fmt: skip
        sdist = _cached_sdist(project, version) if pip.returncode == 0 else None
        if sdist is None:
            _from_simple_index(project, version)
            sdist = _cached_sdist(project, version)
    if sdist is None:
        raise SystemExit(f"no sdist of {project} {version} in {CACHE}")
    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/", 1)[0]
        if not (CACHE / (unpacked or top)).is_dir():
            tar.extractall(CACHE, filter="data")
    return CACHE / (unpacked or top)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _cached_sdist(project: str, version: str) -> Path | None:
    """The sdist in the cache, whatever spelling of the name it has on PyPI (Django-5.1.4,
    sqlalchemy-2.0.36, python_dateutil-...)."""
    want = f"{_normal(project)}-{version}.tar.gz"
    for path in CACHE.glob("*.tar.gz"):
        name, _, rest = path.name.rpartition(f"-{version}.tar.gz")
        if not rest and name and f"{_normal(name)}-{version}.tar.gz" == want:
            return path
    return None


def _from_simple_index(project: str, version: str) -> None:
    """``project``'s ``version`` sdist from the simple index (``PIP_INDEX_URL`` or PyPI's)."""
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    page = f"{index}/{_normal(project).replace('_', '-')}/"
    html = urllib.request.urlopen(page, timeout=60).read().decode()
    spelled = r"[-_.]+".join(re.escape(part) for part in re.split(r"[-_.]+", project))
    name = rf"{spelled}-{re.escape(version)}\.tar\.gz"
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
