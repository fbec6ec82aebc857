"""``benchmarks/merge_history.py run`` over a small corpus of its own layout, the real stages and
judge: each case classified, the row's counts (a ``fault`` column among git's conflicts, 0 here:
no stage raises on these) and the per-case outcomes in ``--json``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import merge_history

BASE = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
CASES = {  # name -> (ours, theirs, the humans')
    "clean": (BASE.replace("return 1", "return 10"), BASE.replace("return 2", "return 20"),
              "def f():\n    return 10\n\n\ndef g():\n    return 20\n"),
    "conflicted": (BASE.replace("return 1", "return 11"), BASE.replace("return 1", "return 12"),
                   BASE.replace("return 1", "return 11")),
}


def _corpus(root: Path) -> Path:
    for name, (ours, theirs, actual) in CASES.items():
        case = root / "owner+repo" / f"{name}-m.py"
        case.mkdir(parents=True)
        for part, text in (("base", BASE), ("ours", ours), ("theirs", theirs),
                           ("actual", actual)):
            (case / f"{part}.py").write_text(text)
        (case / "meta.json").write_text(json.dumps({"merge": name, "path": "m.py"}))
    return root


def test_each_case_is_classified_and_counted(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run.json"
    assert merge_history.run(_corpus(tmp_path / "corpus"), out, 0) == 0
    said = capsys.readouterr()
    results = json.loads(out.read_text())
    (row,) = results["rows"]
    assert row["git conflicts"] == 1 and row["conflict"] == 1 and row["fault"] == 0
    assert row["git_clean"] == 1 and row["resolved share"] == "0.0%"
    outcomes = {c["case"].split("/")[1]: c["outcome"] for c in results["cases"]}
    assert outcomes == {"clean-m.py": "git_clean", "conflicted-m.py": "conflict"}
    assert "| owner+repo | 1 | 0 | 1 |" in said.out  # the table: repository, conflicts, ...
