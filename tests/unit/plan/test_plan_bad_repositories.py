"""``plan_campaign`` on checkouts as users have them: a path that is not a git checkout is a
``GitError`` (a ``FleetError`` that the CLI prints as one line), never a ``FileNotFoundError``
traceback; uncommitted edits do not move the findings off the base commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fleet.campaigns.spec import load_campaign
from fleet.errors import ConfigError, FleetError, GitError
from fleet.plan import Plan, plan_campaign
from fleet_pipelines.cli import main


def test_a_missing_directory_is_a_git_error(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="no such directory"):
        plan_campaign(tmp_path / "nope", load_campaign("yaml-safe-load"))


def test_a_directory_without_git_is_a_git_error(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import yaml\nyaml.load('a: 1')\n")
    with pytest.raises(GitError, match="not a git repository"):
        plan_campaign(tmp_path, load_campaign("yaml-safe-load"))
    assert issubclass(GitError, FleetError)


def test_fleet_plan_and_fix_report_a_missing_path_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "nope")
    assert main(["plan", missing, "--campaign", "yaml-safe-load"]) != 0
    assert main(["fix", missing, "--campaign", "yaml-safe-load", "--unit", "x"]) != 0
    err = capsys.readouterr().err
    assert err.count("no such directory (expected a git checkout)") == 2
    assert "Traceback" not in err and "FileNotFoundError" not in err


JOBS = "import datetime\n\n\ndef stamp():\n    return datetime.datetime.utcnow()\n"


def _commit_jobs(repo: Path) -> None:
    (repo / "jobs.py").write_text(JOBS)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "jobs"],
                   cwd=repo, check=True)


def test_uncommitted_edits_do_not_shift_the_findings(git_repo: Path) -> None:
    """Found on marshmallow 2.15.0: lines added locally above the sites moved every span, and
    the unit (which starts from the commit) then rewrote nothing."""
    _commit_jobs(git_repo)
    (git_repo / "jobs.py").write_text("# local\n" * 20 + JOBS)  # not committed
    (git_repo / "scratch.py").write_text(JOBS)  # untracked: not in the base commit
    plan = plan_campaign(git_repo, load_campaign("datetime-utcnow"))
    [finding] = plan.findings
    assert (finding.path, finding.line) == ("jobs.py", 5)
    assert JOBS.encode()[finding.start_byte:finding.end_byte] == b"datetime.datetime.utcnow()"
    assert plan.graph is not None and plan.graph.root == git_repo.resolve()
    assert "scratch.py" not in plan.graph.files
    assert (git_repo / "jobs.py").read_text().startswith("# local\n")  # the checkout is as it was
    fixed = _fix(git_repo, plan)
    assert "+    return datetime.datetime.now(UTC)" in fixed


def test_a_clean_checkout_is_indexed_in_place(git_repo: Path) -> None:
    _commit_jobs(git_repo)
    plan = plan_campaign(git_repo, load_campaign("datetime-utcnow"))
    assert [f.line for f in plan.findings] == [5]
    assert plan.graph is not None and "jobs.py" in plan.graph.files


def _fix(repo: Path, plan: Plan) -> str:
    from fleet.agents.codemod import CodemodAgent
    from fleet.forge.worktree import workspace
    from fleet.types import Budget

    [unit] = plan.units
    spec = load_campaign("datetime-utcnow")
    with workspace(repo, spec.name, unit.key, unit.base_commit) as ws:
        return CodemodAgent(spec, plan.graph).run(unit, ws, None, Budget()).patch


def test_unit_lookup_errors_say_what_is_wrong(git_repo: Path) -> None:
    empty = plan_campaign(git_repo, load_campaign("yaml-safe-load"))
    with pytest.raises(ConfigError, match="has no findings and no units"):
        empty.unit("abc")
    (git_repo / "a.py").write_text("import yaml\n\n\ndef f(s):\n    return yaml.load(s)\n")
    (git_repo / "b.py").write_text("import yaml\n\n\ndef g(s):\n    return yaml.load(s)\n")
    subprocess.run(["git", "add", "-A"], cwd=git_repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "ab"],
                   cwd=git_repo, check=True)
    plan = plan_campaign(git_repo, load_campaign("yaml-safe-load"))
    assert len(plan.units) == 2
    with pytest.raises(ConfigError, match="ambiguous"):
        plan.unit("")
    with pytest.raises(ConfigError, match=r"no unit 'zz' .*\(units: [0-9a-f]{16}, [0-9a-f]{16}\)"):
        plan.unit("zz")
    first = plan.units[0]
    assert plan.unit(first.key[:6]) == first


def test_base_tree_is_the_checkout_only_when_it_matches_the_commit(git_repo: Path) -> None:
    from fleet.plan import base_tree, head_commit

    _commit_jobs(git_repo)
    base = head_commit(git_repo)
    with base_tree(git_repo, base) as tree:
        assert tree == git_repo.resolve() or tree == git_repo
    (git_repo / "notes.py").write_text("x = 1\n")  # untracked
    with base_tree(git_repo, base) as tree:
        exported = tree
        assert tree != git_repo and (tree / "jobs.py").read_text() == JOBS
        assert not (tree / "notes.py").exists()
    assert not exported.exists()
    (git_repo / "notes.py").unlink()
    first = git_repo_first_commit(git_repo)
    with base_tree(git_repo, first) as tree:  # another commit than HEAD
        assert not (tree / "jobs.py").exists() and (tree / "README.md").is_file()


def git_repo_first_commit(repo: Path) -> str:
    out = subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=repo,
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()
