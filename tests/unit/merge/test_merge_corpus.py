"""The merge corpus: every case in tests/fixtures/merge through ``merge3`` (see its README)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fleet.merge import Clean, Conflicted, merge3
from fleet.merge._line import line_merge

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "merge"
CASES = sorted(path.name for path in CORPUS.iterdir() if (path / "base.py").exists())


def _case(name: str) -> tuple[str, str, str, str, bool]:
    folder = CORPUS / name
    texts = [(folder / f"{part}.py").read_text() for part in ("base", "ours", "theirs", "expected")]
    return texts[0], texts[1], texts[2], texts[3], (folder / "conflict").exists()


def test_corpus_is_large_and_mixed() -> None:
    conflicts = [name for name in CASES if _case(name)[4]]
    assert len(CASES) >= 40
    assert len(conflicts) >= 10
    assert len(CASES) - len(conflicts) >= 30


@pytest.mark.parametrize("name", CASES)
def test_merge_corpus_case(name: str) -> None:
    base, ours, theirs, expected, conflict = _case(name)
    result = merge3(base, ours, theirs, f"{name}.py")
    if conflict:
        assert isinstance(result, Conflicted), f"{name}: a true conflict was merged cleanly"
        assert result.text_with_markers == expected
        assert result.conflicts
        return
    assert isinstance(result, Clean), f"{name}: expected a clean merge, got conflicts"
    assert result.text == expected
    ast.parse(result.text)
    git = line_merge(base, ours, theirs)
    if isinstance(git, Clean):
        assert result.stage == "line" and result.text == git.text
