"""Found running datetime-utcnow on freezegun 0.3.15: the codemod's fix of ``freezegun/api.py``
(``FakeDatetime.utcnow`` returns an aware value where freezegun's contract is naive) and of
``tests/test_datetimes.py`` broke the fake clock that pytest's own timing calls, so pytest
crashed with INTERNALERROR and left an empty JUnit report; the gate then crashed on the XML
(``ParseError: no element found``) and took the whole campaign run down. Now the run has no
report and says why, and a patch after which pytest crashes where it reported before rejects."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fleet.campaigns.codemods import apply_codemod, target_params
from fleet.verify.evidence import Needs, judge
from fleet.verify.execution import run_pytest
from sandbox import Sandbox

pytestmark = pytest.mark.sandbox

FREEZEGUN = Path(__file__).resolve().parents[2] / "fixtures" / "projects" / "freezegun-0.3.15"
FILES = ("freezegun/api.py", "tests/test_datetimes.py")


def _tree(root: Path, fixed: bool) -> Path:
    shutil.copytree(FREEZEGUN, root)
    if fixed:
        params = target_params("datetime-utcnow", root)
        for path in FILES:
            result = apply_codemod("datetime-utcnow", (root / path).read_text(), params,
                                   path=path)
            (root / path).write_text(result.code)  # type: ignore[union-attr]
    return root


def test_a_patch_after_which_pytest_crashes_is_rejected_with_the_cause(
    tmp_path: Path, bwrap: Sandbox
) -> None:
    before = run_pytest(bwrap, _tree(tmp_path / "base", fixed=False), [])
    after = run_pytest(bwrap, _tree(tmp_path / "patched", fixed=True), [])  # the whole suite
    assert before.reported and before.outcomes
    assert not after.reported and "INTERNALERROR" in after.output
    assert "pytest's JUnit report does not parse" in after.output
    got = judge(before, after, Needs(), "the whole suite", 300)
    assert got.status == "reject", got
    assert got.evidence.startswith(
        "the whole suite: after the patch pytest crashed (INTERNALERROR: IndexError: list index "
        "out of range); before it: "), got.evidence
