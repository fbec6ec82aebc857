"""Real merge history: cases replayed from public projects' merge commits (see
tests/fixtures/merge/history/README.md and benchmarks/merge_history.py, which rebuilds them).

Each case is one ``.py`` file both parents of a merge commit changed, where git's line merge
conflicts; ``actual.py`` is what the humans committed. ``outcome`` records what the merge does:
``resolved`` (clean and the same program as the humans', up to comments, formatting and the order
of adjacent definitions and imports), ``conflict``, ``clean_human_beyond`` (clean; the humans
edited beyond both sides), ``clean_human_override`` (clean; the humans undid an edit of one side
that nothing contested), or ``clean_wrong`` (clean and different from the humans', with no such
sign: an open defect; none is left among these cases). A ``conflict`` case may become resolved,
never a wrong clean merge.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.merge import Clean, merge3
from fleet.merge.equivalence import same_program

HISTORY = Path(__file__).resolve().parents[2] / "fixtures" / "merge" / "history"
CASES = sorted(path.name for path in HISTORY.iterdir() if (path / "outcome").exists())


def _texts(name: str) -> list[str]:
    folder = HISTORY / name
    return [
        (folder / f"{part}.py").read_bytes().decode("utf-8", "surrogateescape")
        for part in ("base", "ours", "theirs", "actual")
    ]


def test_history_covers_five_projects_and_resolved_cases() -> None:
    projects = {name.split("__")[0] for name in CASES}
    outcomes = [(HISTORY / name / "outcome").read_text().strip() for name in CASES]
    assert len(projects) >= 5
    assert outcomes.count("resolved") >= 10
    assert outcomes.count("clean_wrong") == 0  # the two once pinned here read as human edits


@pytest.mark.parametrize("name", CASES)
def test_history_case(name: str) -> None:
    base, ours, theirs, actual = _texts(name)
    expected = (HISTORY / name / "outcome").read_text().strip()
    result = merge3(base, ours, theirs, "case.py")
    if expected == "conflict":  # resolving it later is fine, resolving it wrongly is not
        assert not isinstance(result, Clean) or same_program(result.text, actual), name
        return
    assert isinstance(result, Clean), f"{name}: expected {expected}, got conflicts"
    assert same_program(result.text, actual) == (expected == "resolved")
