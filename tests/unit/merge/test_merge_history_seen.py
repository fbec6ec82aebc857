"""``merge_history.py collect`` refuses a repository an earlier set already holds: a set called
unseen must be (the fourteenth re-collected four of the fifth set's repositories)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import merge_history


def _tree(root: Path) -> Path:
    results = root / "benchmarks" / "results"
    results.mkdir(parents=True)
    (results / "merge_history_fifth.json").write_text(json.dumps({
        "rows": [{"repository": "dask+dask", "git conflicts": 3}],
        "cases": ["resolved HypothesisWorks+hypothesis/06f4e6802412-x.py"],
    }))
    (results / "merge_history_sixteenth.json").write_text(json.dumps({
        "cases": [{"case": "saleor+saleor/078fae8975b3-a.py", "outcome": "git_clean"}],
    }))
    fixtures = root / "tests" / "fixtures" / "merge" / "history"
    (fixtures / "pallets+flask__6f0f1f8a0e1c-setup.py").mkdir(parents=True)
    return root


def test_each_place_that_holds_a_repository_is_named(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert merge_history.replayed_in("dask+dask", root) == [
        "benchmarks/results/merge_history_fifth.json"]
    assert merge_history.replayed_in("hypothesisworks+Hypothesis", root) == [
        "benchmarks/results/merge_history_fifth.json"]
    assert merge_history.replayed_in("saleor+saleor", root) == [
        "benchmarks/results/merge_history_sixteenth.json"]
    assert merge_history.replayed_in("pallets+flask", root) == ["tests/fixtures/merge/history"]
    assert merge_history.replayed_in("encode+uvicorn", root) == []


def test_the_project_s_own_record_knows_its_sets() -> None:
    assert "benchmarks/results/merge_history_fifth.json" in merge_history.replayed_in("dask+dask")
    assert merge_history.replayed_in("ckan+ckan") == [
        "benchmarks/results/merge_history_fourteenth.json"]


def test_collect_refuses_a_repository_already_replayed(tmp_path: Path) -> None:
    script = Path(merge_history.__file__)
    done = subprocess.run(
        [sys.executable, str(script), "collect", str(tmp_path / "no-such.git"),
         str(tmp_path / "out"), "--name", "dask+dask"],
        capture_output=True, text=True, check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("merge_history.py collect: dask+dask is already in ")
    assert "merge_history_fifth.json" in done.stderr
    assert "--again" in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("again", [True, False])
def test_a_new_repository_or_again_is_collected(tmp_path: Path, again: bool) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "a.py").write_text("x = 1\n")
    for args in (["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t.invalid",
                                 "commit", "-qm", "one"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    name = "dask+dask" if again else "someone+unseen"
    argv = ["collect", str(repo / ".git"), str(tmp_path / "out"), "--name", name]
    assert merge_history.main(argv + (["--again"] if again else [])) == 0
    assert (tmp_path / "out" / name).is_dir()
