"""Issue 17, last bullet: evidence where tests cannot run. boto 2.49.0's test files (a subset
without the package, so they do not import: the impacted tests can only be ``unknown``) migrated
by the unittest-aliases codemod: every change renames a ``unittest.TestCase`` alias to the method
it aliases, which the target's interpreter shows (3.11: a deprecation wrapper that warns and
calls it). That proof is the evidence, labelled as such; any other change brings the normal
rules back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fleet.campaigns.codemods import apply_codemod
from fleet.forge.github import UnitReport, render_change_body
from fleet.types import Verdict, WorkUnit
from fleet.verify import GateOptions, run_gates
from fleet.verify.proof import renames
from sandbox import Sandbox
from tests.conftest import git

pytestmark = pytest.mark.sandbox

BOTO = Path(__file__).resolve().parents[2] / "fixtures" / "projects" / "boto-2.49.0-subset"
FILE = "tests/unit/sqs/test_message.py"
OPTIONS = GateOptions(fail_fast=False, skip=frozenset({"review", "typecheck"}))


@pytest.fixture
def boto(git_repo: Path) -> Path:
    shutil.copytree(BOTO / "tests", git_repo / "tests")
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-qm", "boto 2.49.0 tests (subset)")
    return git_repo


def _impacted(repo: Path, text: str, sandbox: Sandbox) -> Verdict:
    (repo / FILE).write_text(text)
    patch = git(repo, "diff")
    git(repo, "checkout", "-q", "--", ".")
    write = [f"{FILE}::<module>", f"{FILE}::TestMessage", f"{FILE}::TestMHMessage",
             f"{FILE}::TestEncodedMHMessage", f"{FILE}::TestBigMessage"]
    [got] = [v for v in run_gates(repo, patch, write, sandbox=sandbox, options=OPTIONS)
             if v.gate == "impacted_tests"]
    return got


def test_an_alias_rename_is_proven_where_the_tests_cannot_run(boto: Path, bwrap: Sandbox) -> None:
    source = (boto / FILE).read_text()
    migrated = apply_codemod("unittest-aliases", source, {}, path=FILE).code  # type: ignore[union-attr]
    assert renames(source, migrated) == [("assertEquals", "assertEqual")] * 10
    got = _impacted(boto, migrated, bwrap)
    assert got.status == "accept", got
    assert got.evidence.startswith(
        "alias-rename proof, no test run: every change renames an alias of unittest.TestCase to "
        "the object it aliases, shown in Python 3.11.")
    assert "assertEquals -> assertEqual (deprecation wrapper)" in got.evidence
    assert got.details["proof"] == "alias-rename"
    assert "errors at collection" in got.evidence  # why the tests gave no evidence
    # the PR body labels the verdict as a proof, not a test run
    unit = WorkUnit(key="u" * 12, campaign="unittest-aliases", base_commit="b" * 40,
                    write_set=(f"{FILE}::<module>",), read_set=(), findings=(), rank=0, wave=0)
    body = render_change_body([UnitReport(unit, (got,))])
    assert ("| `impacted_tests` | ✅ accept by proof (alias-rename), no test run | "
            "alias-rename proof, no test run:") in body

    # one more change that is not a rename: no proof, the normal rules (unknown) again
    edited = migrated.replace("self.assertEqual(bucket, 'foo')", "self.assertEqual(bucket, 'bar')")
    assert edited != migrated
    assert renames(source, edited) is None
    got = _impacted(boto, edited, bwrap)
    assert got.status == "unknown", got
    assert "proof" not in got.details
