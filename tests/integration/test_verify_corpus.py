"""The planted-patch corpus through the same door as `fleet verify`.

Every patch in tests/fixtures/patches/{good,bad} runs against a git copy of
examples/acme-monorepo; a good patch must be accepted (exit 0), a bad one rejected (exit 1) by
the gate its metadata names. The accept/reject matrix is in benchmarks/bench_verify.py.
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
PYJWT = ROOT / "tests" / "fixtures" / "projects" / "pyjwt-2.0.0"
PYJWT_PATCHES = sorted(CORPUS.glob("pyjwt/*/*.patch"))

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
def pyjwt_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _git_copy(PYJWT, tmp_path_factory.mktemp("corpus") / "pyjwt")


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


@pytest.mark.parametrize("patch", PATCHES, ids=[f"{p.parent.name}/{p.stem}" for p in PATCHES])
def test_planted_patch(
    patch: Path, acme_base: Path, sandbox_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _check(patch, acme_base, sandbox_name, capsys)


@pytest.mark.parametrize("patch", PYJWT_PATCHES,
                         ids=[f"pyjwt/{p.parent.name}/{p.stem}" for p in PYJWT_PATCHES])
def test_planted_patch_on_pyjwt(
    patch: Path, pyjwt_base: Path, sandbox_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same on a real PyPI project, PyJWT 2.0.0, with its own suite."""
    _check(patch, pyjwt_base, sandbox_name, capsys)


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
