"""``fleet merge BASE OURS THEIRS`` through the real console entry point."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "merge"


def _fleet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fleet_pipelines.cli", *args], capture_output=True, text=True
    )


def test_fleet_merge_clean_and_conflicted(tmp_path: Path) -> None:
    case = CORPUS / "import_each_side"
    out = _fleet("merge", *(str(case / f"{p}.py") for p in ("base", "ours", "theirs")))
    assert out.returncode == 0, out.stderr
    assert out.stdout == (case / "expected.py").read_text()
    assert "clean (structural stage)" in out.stderr

    case = CORPUS / "same_line_in_function"
    target = tmp_path / "merged.py"
    out = _fleet(
        "merge", *(str(case / f"{p}.py") for p in ("base", "ours", "theirs")), "-o", str(target)
    )
    assert out.returncode == 1
    assert target.read_text() == (case / "expected.py").read_text()
    assert "1 conflict(s)" in out.stderr


def test_fleet_merge_missing_file_is_an_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.py")
    out = _fleet("merge", missing, missing, missing)
    assert out.returncode == 2
    assert "fleet merge:" in out.stderr
