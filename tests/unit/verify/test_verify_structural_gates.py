"""applies / parses / lease scope / security / test integrity on real git diffs (no sandbox)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.types import Verdict
from fleet.verify import GateOptions, decide, rejected_by, run_gates
from fleet.verify._patch import parse_patch
from fleet.verify.security import scan
from fleet.verify.spans import covered_by

from .conftest import LIB, TESTS, MakePatch

CHEAP = GateOptions(skip=frozenset({"impacted_tests", "typecheck", "review"}))


def gates(repo: Path, patch: str, write: list[str] | None) -> dict[str, Verdict]:
    verdicts = run_gates(repo, patch, write, options=CHEAP)
    return {v.gate: v for v in verdicts}


def test_parse_patch_maps_line_numbers(make_patch: MakePatch) -> None:
    patch = make_patch({
        "lib.py": LIB.replace("return sum(values)", "return sum(values, 0)"),
        "new.py": "x = 1\n",
        "conftest.py": None,
    })
    files = {f.path: f for f in parse_patch(patch)}
    lib = files["lib.py"]
    assert lib.removed == [21] and lib.added == [21]
    assert lib.added_text[21] == "    return sum(values, 0)"
    assert files["new.py"].old_path is None and files["new.py"].added == [1]
    assert files["conftest.py"].new_path is None


def test_a_patch_that_does_not_apply_is_rejected(lib_repo: Path, make_patch: MakePatch) -> None:
    patch = make_patch({"lib.py": LIB.replace("sum(values)", "sum(values) + 0")})
    (lib_repo / "lib.py").write_text(LIB.replace("return sum(values)", "return 0"))
    from .conftest import git

    git(lib_repo, "commit", "-qam", "moved on")
    verdicts = run_gates(lib_repo, patch, ["lib.py::total"], options=CHEAP)
    assert [v.gate for v in verdicts] == ["applies"]
    assert verdicts[0].status == "reject" and "does not apply" in verdicts[0].evidence
    assert run_gates(lib_repo, "", ["lib.py::total"])[0].evidence == "the patch is empty"


def test_a_patch_that_does_not_parse_is_rejected(lib_repo: Path, make_patch: MakePatch) -> None:
    patch = make_patch({"lib.py": LIB.replace("return sum(values)", "return sum(values")})
    verdicts = run_gates(lib_repo, patch, ["lib.py::total"], options=CHEAP)
    assert verdicts[-1].gate == "parses" and verdicts[-1].status == "reject"
    assert "lib.py:21" in verdicts[-1].evidence


def test_lease_scope_accepts_edits_inside_the_write_set(
    lib_repo: Path, make_patch: MakePatch
) -> None:
    patch = make_patch({"lib.py": LIB.replace("+ amount", "+ int(amount)")})
    got = gates(lib_repo, patch, ["lib.py::Account.deposit"])
    assert got["lease_scope"].status == "accept"
    # a write lease on the class covers its methods
    assert gates(lib_repo, patch, ["lib.py::Account"])["lease_scope"].status == "accept"


def test_whitespace_inside_another_symbol_is_rejected_and_named(
    lib_repo: Path, make_patch: MakePatch
) -> None:
    edited = LIB.replace("+ amount", "+ int(amount)").replace(
        "        return self.balance\n\n\nclass", "        return self.balance \n\n\nclass"
    )
    patch = make_patch({"lib.py": edited})
    got = gates(lib_repo, patch, ["lib.py::Account.deposit"])["lease_scope"]
    assert got.status == "reject"
    assert "lib.py::Account.withdraw (changed)" in got.evidence
    assert got.details["outside"] == ["lib.py::Account.withdraw (changed)"]


def test_new_module_level_code_is_outside_a_symbol_lease(
    lib_repo: Path, make_patch: MakePatch
) -> None:
    edited = LIB.replace("import subprocess\n", "import subprocess\nimport os\n")
    patch = make_patch({"lib.py": edited.replace("return sum(values)", "return sum(values) or 0")})
    got = gates(lib_repo, patch, ["lib.py::total"])["lease_scope"]
    assert got.status == "reject" and "lib.py::<module>" in got.evidence


def test_a_new_regression_test_may_land_beside_the_fix(
    lib_repo: Path, make_patch: MakePatch
) -> None:
    tests = TESTS + "\n\ndef test_total_of_floats():\n    assert total([0.5, 0.5]) == 1\n"
    patch = make_patch({"lib.py": LIB.replace("sum(values)", "sum(values, 0)"),
                        "tests/test_lib.py": tests})
    assert gates(lib_repo, patch, ["lib.py::total"])["lease_scope"].status == "accept"
    # ... but not a new helper at the top of a library module
    helper = LIB + "\n\ndef helper():\n    return 1\n"
    got = gates(lib_repo, make_patch({"lib.py": helper}), ["lib.py::total"])["lease_scope"]
    assert got.status == "reject" and "lib.py::helper (added)" in got.evidence


def test_no_write_set_means_lease_scope_cannot_judge(
    lib_repo: Path, make_patch: MakePatch
) -> None:
    patch = make_patch({"lib.py": LIB.replace("sum(values)", "sum(values, 0)")})
    verdicts = run_gates(lib_repo, patch, None, options=CHEAP)
    assert {v.gate: v.status for v in verdicts}["lease_scope"] == "unknown"
    assert decide(verdicts) == "unknown"


def test_covered_by_is_hierarchical_not_a_string_prefix() -> None:
    assert covered_by("a.py::Foo.bar", {"a.py::Foo"})
    assert not covered_by("a.py::Foobar", {"a.py::Foo"})
    assert not covered_by("b.py::Foo", {"a.py::Foo"})


@pytest.mark.parametrize(
    ("old", "new", "rule"),
    [
        ('["echo", name], capture_output=True', 'f"echo {name}", shell=True, capture_output=True',
         "shell-true"),
        ("return sum(values)", "return eval('+'.join(map(str, values)))", "eval-exec"),
        ("return sum(values)", "import yaml\n    return yaml.load(values)", "yaml-load"),
        ("return sum(values)", "import pickle\n    return pickle.loads(values)", "pickle"),
        ("return sum(values)", "import requests\n    return requests.get(values, verify=False)",
         "verify-false"),
        ("return sum(values)", 'api_key = "sk-live-0123456789abcdef"\n    return sum(values)',
         "hardcoded-secret"),
        ("return sum(values)", "return sum(values)  # nosec", "disabled-check"),
    ],
)
def test_security_lens_rejects_a_new_dangerous_construct_with_its_line(
    lib_repo: Path, make_patch: MakePatch, old: str, new: str, rule: str
) -> None:
    patch = make_patch({"lib.py": LIB.replace(old, new)})
    got = gates(lib_repo, patch, ["lib.py"])["security"]
    assert got.status == "reject", got
    assert f"[{rule}]" in got.evidence and "lib.py:" in got.evidence


def test_security_lens_ignores_existing_and_safe_constructs(
    lib_repo: Path, make_patch: MakePatch
) -> None:
    safe = LIB.replace(
        "return sum(values)",
        "import yaml\n    return yaml.load(values, Loader=yaml.SafeLoader)",
    )
    assert gates(lib_repo, make_patch({"lib.py": safe}), None)["security"].status == "accept"
    hits = scan("import os\nos.system('x')\nos.system('x')\n")
    assert [h.line for h in hits] == [2, 3]


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("def test_deposit():\n    assert Account().deposit(5) == 5\n\n\n", "", "deleted"),
        ("def test_deposit():", "@pytest.mark.skip(reason='flaky')\ndef test_deposit():",
         "skipped"),
        ("    assert total([]) == 0\n", "", "fewer assertions"),
        ("assert total([1, 2, 3]) == 6", "assert total([1, 2, 3]) >= 6", "weaker"),
        ("assert total([1, 2, 3]) == 6", "assert total([1, 2, 3])", "weaker"),
        ("assert total([1, 2, 3]) == 6", "assert total([1, 2, 3]) == 7", "expected values"),
        ("assert Account().withdraw(2) == -2", "assert True", "weaker"),
        ("def test_total():\n", "def test_total():\n    pytest.skip('later')\n", "skipped"),
    ],
)
def test_test_integrity_rejects_deleted_skipped_or_weakened_tests(
    lib_repo: Path, make_patch: MakePatch, old: str, new: str, says: str
) -> None:
    edited = "import pytest\n" + TESTS.replace(old, new)
    assert edited != "import pytest\n" + TESTS
    got = gates(lib_repo, make_patch({"tests/test_lib.py": edited}), None)["test_integrity"]
    assert got.status == "reject", got
    assert says in got.evidence


def test_test_integrity_accepts_renamed_aliases_and_new_tests(
    lib_repo: Path, make_patch: MakePatch
) -> None:
    unittest_style = TESTS + (
        "\n\nimport unittest\n\n\nclass TestOld(unittest.TestCase):\n"
        "    def test_it(self):\n        self.assertEquals(total([2]), 2)\n"
    )
    from .conftest import git

    (lib_repo / "tests" / "test_lib.py").write_text(unittest_style)
    git(lib_repo, "commit", "-qam", "unittest")
    renamed = unittest_style.replace("assertEquals", "assertEqual") + (
        "\n\ndef test_more():\n    assert total([4]) == 4\n"
    )
    got = gates(lib_repo, make_patch({"tests/test_lib.py": renamed}), None)["test_integrity"]
    assert got.status == "accept", got


def test_collection_hooks_and_deselecting_options_are_rejected(
    lib_repo: Path, make_patch: MakePatch
) -> None:
    hook = "def pytest_collection_modifyitems(items):\n    items[:] = items[:1]\n"
    got = gates(lib_repo, make_patch({"conftest.py": hook}), None)["test_integrity"]
    assert got.status == "reject" and "pytest_collection_modifyitems" in got.evidence
    ini = "[pytest]\naddopts = --deselect tests/test_lib.py::test_total\n"
    got = gates(lib_repo, make_patch({"pytest.ini": ini}), None)["test_integrity"]
    assert got.status == "reject" and "deselects tests" in got.evidence
    assert rejected_by([got]) == ["test_integrity"]
