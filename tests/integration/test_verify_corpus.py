"""The planted-patch corpus through the same door as `fleet verify`.

Every patch in tests/fixtures/patches/{good,bad} runs against a git copy of
examples/acme-monorepo, and every patch in tests/fixtures/patches/<project>/{good,bad} against
the real PyPI project it was written for (PyJWT 2.0.0, TinyDB 3.15.2, freezegun 0.3.15, with
their own suites); a good patch must be accepted (exit 0), a bad one rejected (exit 1) by the
gate its metadata names. The accept/reject matrix is in benchmarks/bench_verify.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from fleet_pipelines.cli import main

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "patches"
EXAMPLE = ROOT / "examples" / "acme-monorepo"
PATCHES = sorted(CORPUS.glob("*/*.patch"))
PROJECTS = ROOT / "tests" / "fixtures" / "projects"
#: corpus directory -> the real project's tree it was written for
REAL = {"pyjwt": "pyjwt-2.0.0", "tinydb": "tinydb-3.15.2", "freezegun": "freezegun-0.3.15"}
REAL_PATCHES = sorted(p for name in REAL for p in CORPUS.glob(f"{name}/*/*.patch"))

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


def _git_copy(source: Path, repo: Path) -> Path:
    shutil.copytree(source, repo, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return repo


@pytest.fixture(scope="module")
def acme_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _git_copy(EXAMPLE, tmp_path_factory.mktemp("corpus") / "acme")


@pytest.fixture(scope="module")
def real_bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A git copy of each real project, made when a patch first needs it."""
    return {}


@pytest.fixture(scope="module")
def sandbox_name() -> str:
    from sandbox import SandboxUnavailable, select_sandbox

    try:
        select_sandbox("bwrap")
    except SandboxUnavailable as exc:
        pytest.skip(f"bubblewrap does not work here: {exc}")
    return "bwrap"


def test_the_corpus_is_big_enough() -> None:
    assert len(list(CORPUS.glob("good/*.patch"))) >= 30
    assert len(list(CORPUS.glob("bad/*.patch"))) >= 30
    # issue 17: at least 60 good and 60 bad patches on at least three real projects
    assert len(REAL) >= 3
    for kind in ("good", "bad"):
        assert all(list(CORPUS.glob(f"{name}/{kind}/*.patch")) for name in REAL)
        assert sum(len(list(CORPUS.glob(f"{name}/{kind}/*.patch"))) for name in REAL) >= 60


@pytest.mark.parametrize("patch", PATCHES, ids=[f"{p.parent.name}/{p.stem}" for p in PATCHES])
def test_planted_patch(
    patch: Path, acme_base: Path, sandbox_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _check(patch, acme_base, sandbox_name, capsys)


@pytest.mark.parametrize("patch", REAL_PATCHES,
                         ids=[f"{p.parents[1].name}/{p.parent.name}/{p.stem}"
                              for p in REAL_PATCHES])
def test_planted_patch_on_a_real_project(
    patch: Path, real_bases: dict[str, Path], tmp_path_factory: pytest.TempPathFactory,
    sandbox_name: str, capsys: pytest.CaptureFixture[str],
) -> None:
    """The same on real PyPI projects with their own suites."""
    name = patch.parents[1].name
    if name not in real_bases:
        real_bases[name] = _git_copy(PROJECTS / REAL[name],
                                     tmp_path_factory.mktemp("corpus") / name)
    _check(patch, real_bases[name], sandbox_name, capsys)


def _check(patch: Path, base: Path, sandbox_name: str,
           capsys: pytest.CaptureFixture[str]) -> None:
    meta = json.loads(patch.with_suffix(".json").read_text())
    argv = ["verify", str(base), str(patch), "--sandbox", sandbox_name, "--json"]
    for symbol in meta["write_set"]:
        argv += ["--write", symbol]
    if meta["bugfix"]:
        argv.append("--bugfix")
    code = main(argv)
    report = json.loads(capsys.readouterr().out)
    evidence = "\n".join(f"{v['gate']}: {v['status']}: {v['evidence'][:500]}"
                         for v in report["verdicts"])
    assert report["verdicts"][0]["status"] == "accept", (
        f"{patch.name} no longer applies to the example: regenerate with "
        f"`.venv/bin/python tests/fixtures/patches/make_corpus.py`\n{evidence}"
    )
    if meta["expected"] == "accept":
        assert code == 0, f"{patch.name} ({meta['description']}) was not accepted:\n{evidence}"
    else:
        assert code == 1, f"{patch.name} ({meta['description']}) was not rejected:\n{evidence}"
        assert meta["gate"] in report["rejected_by"], (
            f"{patch.name} rejected by {report['rejected_by']}, expected {meta['gate']}:\n"
            f"{evidence}"
        )
