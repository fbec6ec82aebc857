"""A patch that edits a test function needs that test to run. Outside check on cfn-flip 1.0.0
(its PyPI sdist, yaml-safe-load): the codemod rewrote ``yaml.load`` inside
``test_flip_to_yaml_with_longhand_functions``, which errors before and after the patch (its data
files are not in the sdist); the gate accepted on the 10 other tests of the same file that pass,
none of which runs the edited lines. Now the file's other tests count only when they reach the
patched code; a test the patch adds still counts for itself."""

from __future__ import annotations

from pathlib import Path

from fleet.verify._patch import parse_patch
from fleet.verify.evidence import Needs, judge
from fleet.verify.execution import PytestRun
from fleet.verify.impacted import needs_of
from tests.conftest import commit_files

from .conftest import git

FILE = "tests/test_flip.py"
CHANGED = f"{FILE}::test_flip_to_yaml_with_longhand_functions"
OTHER = [f"{FILE}::test_flip_{n}" for n in ("to_json", "to_yaml", "clean")]


def _run(outcomes: dict[str, str]) -> PytestRun:
    return PytestRun(outcomes=outcomes, reported=True)


def test_a_changed_test_that_errors_before_and_after_is_no_evidence() -> None:
    before = _run({CHANGED: "error", **dict.fromkeys(OTHER, "passed")})
    after = _run({CHANGED: "error", **dict.fromkeys(OTHER, "passed")})
    needs = Needs(reaching=(CHANGED,), files=(FILE,), changed=(FILE,))
    got = judge(before, after, needs, "1 test file(s) by the graph", 300)
    assert got.status == "unknown", got
    assert "none of the 1 test(s) that reach the patched code passes" in got.evidence


def test_a_changed_test_that_passes_after_is_evidence() -> None:
    before = _run({CHANGED: "failed", **dict.fromkeys(OTHER, "passed")})
    after = _run({CHANGED: "passed", **dict.fromkeys(OTHER, "passed")})
    got = judge(before, after, Needs(reaching=(CHANGED,), files=(FILE,), changed=(FILE,)),
                "1 test file(s)", 300)
    assert got.status == "accept" and got.details["evidence"] == [CHANGED], got


def test_a_new_test_in_a_changed_file_is_evidence_for_itself() -> None:
    new = f"{FILE}::test_regression"
    before = _run({CHANGED: "error", **dict.fromkeys(OTHER, "passed")})
    after = _run({CHANGED: "error", new: "passed", **dict.fromkeys(OTHER, "passed")})
    got = judge(before, after, Needs(reaching=("lib.py::f_test_unrelated",), files=(FILE,),
                                     changed=(FILE,)), "1 test file(s)", 300)
    assert got.status == "accept" and got.details["evidence"] == [new], got


def test_the_graph_names_the_edited_test_itself(git_repo: Path) -> None:
    from fleet.graph import index

    repo = commit_files(git_repo, {
        "tests/__init__.py": "",
        FILE: ("import yaml\n\n\ndef test_flip_to_json():\n    assert True\n\n\n"
               "def test_flip_to_yaml_with_longhand_functions():\n"
               "    assert yaml.load(open('missing.yaml'))\n")}, "init")
    (repo / FILE).write_text((repo / FILE).read_text().replace("yaml.load", "yaml.safe_load"))
    patch = git(repo, "diff")
    git(repo, "checkout", "-q", "--", ".")
    needs = needs_of(parse_patch(patch), [FILE], index(repo), [CHANGED], repo)
    assert needs.reaching == (CHANGED,) and needs.changed == (FILE,)
