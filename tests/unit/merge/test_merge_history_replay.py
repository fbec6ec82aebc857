"""``benchmarks/merge_history.py run`` over a small corpus of its own layout: each case
classified, and a stage that raises on one case counted as a ``fault`` among git's conflicts
(named with its exception) while the replay goes on, as the driver keeps git's result then."""

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
    "faulty": (BASE.replace("return 2", "return 21"), BASE.replace("return 2", "return 22"),
               BASE.replace("return 2", "return 22")),
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


def test_a_fault_is_counted_and_named_and_the_replay_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    real = merge_history.classify

    def classify(base: str, ours: str, theirs: str, actual: str) -> tuple[str, str, float,
                                                                          float]:
        if "return 21" in ours:
            raise AssertionError("a structural stage's own assertion")
        return real(base, ours, theirs, actual)

    monkeypatch.setattr(merge_history, "classify", classify)
    out = tmp_path / "run.json"
    assert merge_history.run(_corpus(tmp_path / "corpus"), out, 0) == 0
    said = capsys.readouterr()
    results = json.loads(out.read_text())
    (row,) = results["rows"]
    assert row["fault"] == 1 and row["git conflicts"] == 2  # the conflicted case and the fault
    assert row["git_clean"] == 1 and row["conflict"] == 1
    outcomes = {c["case"].split("/")[1]: c for c in results["cases"]}
    assert outcomes["faulty-m.py"]["outcome"] == "fault"
    assert outcomes["faulty-m.py"]["stage"] == "AssertionError: a structural stage's own assertion"
    assert outcomes["clean-m.py"]["outcome"] == "git_clean"
    assert "fault: owner+repo/faulty-m.py: AssertionError" in said.err
