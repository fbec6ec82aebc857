"""impacted tests, test-first and mypy, run for real through bubblewrap; the reviewer lenses;
and `fleet verify`'s exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.agents.scripted import ScriptedModel, text_response
from fleet.types import Verdict
from fleet.verify import ClaudeReviewer, GateOptions, OfflineReviewer, ReviewInput, run_gates
from fleet.verify._patch import parse_patch
from fleet.verify.reviewer import gate_review
from fleet_pipelines.cli import main
from sandbox import Sandbox

from .conftest import LIB, TESTS, MakePatch, git

pytestmark = pytest.mark.sandbox

DYNAMIC = GateOptions(fail_fast=False, skip=frozenset({"review"}))


def by_gate(verdicts: list[Verdict]) -> dict[str, Verdict]:
    return {v.gate: v for v in verdicts}


def test_a_behaviour_change_fails_an_impacted_test(
    lib_repo: Path, make_patch: MakePatch, bwrap_sandbox: Sandbox
) -> None:
    patch = make_patch({"lib.py": LIB.replace("return sum(values)", "return sum(values) + 1")})
    got = by_gate(run_gates(lib_repo, patch, ["lib.py::total"], sandbox=bwrap_sandbox,
                            options=DYNAMIC))["impacted_tests"]
    assert got.status == "reject"
    assert "tests/test_lib.py::test_total passed before and failed after" in got.evidence
    assert got.details["targets"] == ["tests/test_lib.py"]
    assert got.details["before"] == "3 passed"


def test_a_refactor_keeps_the_tests_passing(
    lib_repo: Path, make_patch: MakePatch, bwrap_sandbox: Sandbox
) -> None:
    patch = make_patch({"lib.py": LIB.replace("return sum(values)", "return sum(list(values))")})
    verdicts = run_gates(lib_repo, patch, ["lib.py::total"], sandbox=bwrap_sandbox,
                         options=GateOptions())
    assert [v.status for v in verdicts] == ["accept"] * len(verdicts), verdicts
    assert by_gate(verdicts)["impacted_tests"].evidence.endswith("3 passed after")


def test_a_new_failing_test_rejects(
    lib_repo: Path, make_patch: MakePatch, bwrap_sandbox: Sandbox
) -> None:
    tests = TESTS + "\n\ndef test_total_neg():\n    assert total([-1]) == 1\n"
    patch = make_patch({"tests/test_lib.py": tests})
    got = by_gate(run_gates(lib_repo, patch, ["lib.py::total"], sandbox=bwrap_sandbox,
                            options=DYNAMIC))["impacted_tests"]
    assert got.status == "reject" and "new test tests/test_lib.py::test_total_neg failed" in (
        got.evidence
    )


def test_without_a_sandbox_the_tests_cannot_be_judged(
    lib_repo: Path, make_patch: MakePatch
) -> None:
    patch = make_patch({"lib.py": LIB.replace("return sum(values)", "return sum(values) + 1")})
    got = by_gate(run_gates(lib_repo, patch, ["lib.py::total"], options=DYNAMIC))
    assert got["impacted_tests"].status == "unknown"


BUGGY = LIB.replace("return sum(values)", "return sum(v for v in values if v > 0)")
REGRESSION = "\n\ndef test_total_counts_negatives():\n    assert total([-1, 3]) == 2\n"


@pytest.fixture
def buggy_repo(lib_repo: Path) -> Path:
    (lib_repo / "lib.py").write_text(BUGGY)
    git(lib_repo, "commit", "-qam", "a bug")
    return lib_repo


def test_test_first_accepts_a_fix_with_a_reproducing_test(
    buggy_repo: Path, make_patch: MakePatch, bwrap_sandbox: Sandbox
) -> None:
    patch = make_patch({"lib.py": LIB, "tests/test_lib.py": TESTS + REGRESSION})
    got = by_gate(run_gates(buggy_repo, patch, ["lib.py::total"], sandbox=bwrap_sandbox,
                            options=GateOptions(bugfix=True)))["test_first"]
    assert got.status == "accept", got
    assert got.details["new_tests"] == ["tests/test_lib.py::test_total_counts_negatives"]


def test_test_first_rejects_a_fix_without_a_test_or_with_a_test_that_passes_on_base(
    buggy_repo: Path, make_patch: MakePatch, bwrap_sandbox: Sandbox
) -> None:
    bare = make_patch({"lib.py": LIB})
    got = by_gate(run_gates(buggy_repo, bare, ["lib.py::total"], sandbox=bwrap_sandbox,
                            options=GateOptions(bugfix=True)))["test_first"]
    assert got.status == "reject" and "none added" in got.evidence
    weak = TESTS + "\n\ndef test_total_positive():\n    assert total([1, 3]) == 4\n"
    patch = make_patch({"lib.py": LIB, "tests/test_lib.py": weak})
    got = by_gate(run_gates(buggy_repo, patch, ["lib.py::total"], sandbox=bwrap_sandbox,
                            options=GateOptions(bugfix=True)))["test_first"]
    assert got.status == "reject" and "already passes on the base" in got.evidence


def test_typecheck_rejects_new_mypy_errors_where_configured(
    lib_repo: Path, make_patch: MakePatch, bwrap_sandbox: Sandbox
) -> None:
    typed = LIB.replace("def total(values):", "def total(values: list[int]) -> int:")
    (lib_repo / "lib.py").write_text(typed)
    (lib_repo / "mypy.ini").write_text("[mypy]\nignore_missing_imports = True\n")
    git(lib_repo, "add", "-A")
    git(lib_repo, "commit", "-qm", "typed")
    patch = make_patch({"lib.py": typed.replace("return sum(values)", 'return str(sum(values))')})
    got = by_gate(run_gates(lib_repo, patch, ["lib.py::total"], sandbox=bwrap_sandbox,
                            options=DYNAMIC))["typecheck"]
    assert got.status == "reject", got
    assert "Incompatible return value type" in got.evidence


def test_offline_reviewer_names_what_it_rejects(make_patch: MakePatch) -> None:
    patch = make_patch({"lib.py": LIB.replace(
        "return sum(values)", "try:\n        return sum(values)\n    except:\n        return 0"
    )})
    item = ReviewInput(patch, parse_patch(patch), ("lib.py::total",))
    got = gate_review(OfflineReviewer(), item)
    assert got.status == "reject"
    assert "review:correctness" in got.evidence and "bare `except:`" in got.evidence
    assert got.details["review:security"]["status"] == "accept"


def test_claude_reviewer_must_be_convinced(make_patch: MakePatch) -> None:
    patch = make_patch({"lib.py": LIB.replace("sum(values)", "sum(values, 0)")})
    item = ReviewInput(patch, parse_patch(patch), ("lib.py::total",), "tidy")
    model = ScriptedModel([
        text_response('{"verdict": "accept", "reason": "lib.py:21 same result, explicit start"}'),
        text_response("Looks fine to me, probably."),
        text_response('{"verdict": "accept", "reason": ""}'),
    ])
    reviewer = ClaudeReviewer(model)
    got = gate_review(reviewer, item)
    assert got.status == "reject"
    assert got.details["review:correctness"]["status"] == "accept"
    assert "unsure" in got.details["review:security"]["evidence"]
    assert got.details["review:runs"]["status"] == "reject"
    assert [r["messages"][0]["content"].split(".")[0] for r in model.requests] == [
        "Lens: correctness", "Lens: security", "Lens: runs",
    ]
    assert "sum(values, 0)" in model.requests[0]["messages"][0]["content"]


def test_fleet_verify_exit_codes(
    lib_repo: Path, make_patch: MakePatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.patch"
    good.write_text(make_patch({"lib.py": LIB.replace("sum(values)", "sum(list(values))")}))
    bad = tmp_path / "bad.patch"
    bad.write_text(make_patch({"lib.py": LIB.replace("sum(values)", "sum(values) - 1")}))
    common = ["--sandbox", "bwrap"]
    assert main(["verify", str(lib_repo), str(good), "-w", "lib.py::total", *common]) == 0
    out = capsys.readouterr().out
    assert "ACCEPT   impacted_tests" in out and out.rstrip().endswith("=> accept")
    assert main(["verify", str(lib_repo), str(bad), "-w", "lib.py::total", *common]) == 1
    assert "REJECT   impacted_tests" in capsys.readouterr().out
    assert main(["verify", str(lib_repo), str(good), *common]) == 2
    assert "UNKNOWN  lease_scope" in capsys.readouterr().out


def test_the_graph_selects_the_impacted_tests(
    lib_repo: Path, make_patch: MakePatch, bwrap_sandbox: Sandbox
) -> None:
    from fleet.graph import index

    graph = index(lib_repo)
    assert graph.tests_reaching(["lib.py::total"]) == ["tests/test_lib.py::test_total"]
    patch = make_patch({"lib.py": LIB.replace("return sum(values)", "return sum(values) + 1")})
    got = by_gate(run_gates(lib_repo, patch, ["lib.py::total"], sandbox=bwrap_sandbox,
                            graph=graph, options=DYNAMIC))["impacted_tests"]
    assert got.status == "reject" and got.details["selected_by"].startswith("the graph")
    assert got.details["targets"] == ["tests/test_lib.py"]


def test_fleet_verify_with_the_claude_reviewer_over_the_fake_api(
    lib_repo: Path, make_patch: MakePatch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from fleet.agents.fake_messages import FakeMessagesServer

    good = tmp_path / "good.patch"
    good.write_text(make_patch({"lib.py": LIB.replace("sum(values)", "sum(list(values))")}))
    argv = ["verify", str(lib_repo), str(good), "-w", "lib.py::total", "--sandbox", "bwrap",
            "--reviewer", "claude", "--model", "claude-fake"]
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(argv) == 2
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().err
    accept = '{"verdict": "accept", "reason": "lib.py:21 same sum for any iterable"}'
    with FakeMessagesServer([text_response(accept)] * 3) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        assert main(argv) == 0
    assert "ACCEPT   review: claude reviewer: all lenses accept" in capsys.readouterr().out
    assert len(server.requests) == 3
