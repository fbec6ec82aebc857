"""The planner on real indexes: SCCs never split, nested symbols together, size cap, stable keys,
read sets, lock order, waves with non-conflicting lease sets; ``fleet plan`` changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleet.campaigns.spec import Campaign, Fix, PlanSettings, load_campaign
from fleet.graph import index
from fleet.plan import Plan, containers, expected_parallelism, plan_campaign
from tests.conftest import git

UTC_FUNCS = """\
import datetime


def ping(n):
    if n:
        return pong(n - 1)
    return datetime.datetime.utcnow()


def pong(n):
    stamp = datetime.datetime.utcnow()
    return ping(n) if n else stamp


def helper():
    return 2


{independent}

class Holder:
    made = datetime.datetime.utcnow()

    def refresh(self):
        self.made = datetime.datetime.utcnow()
        return helper()
"""


def _repo(root: Path, n: int = 5, extra: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    funcs = "\n\n".join(
        f"def job{i}():\n    return helper(), datetime.datetime.utcnow()\n" for i in range(n)
    )
    (root / "jobs.py").write_text(UTC_FUNCS.format(independent=funcs) + extra)
    (root / "other.py").write_text(
        "import datetime\n\n\ndef lone():\n    return datetime.datetime.utcnow()\n"
    )
    return root


def _campaign(*, codemod: bool = False, **plan: object) -> Campaign:
    """datetime-utcnow's matchers; by default with an agent-prompt-only fix (no import edits),
    so the planner's own splitting is what is tested; ``codemod=True`` keeps its codemod."""
    base = load_campaign("datetime-utcnow")
    settings = PlanSettings(**{"granularity": "symbol", "max_unit_symbols": 8, **plan})  # type: ignore[arg-type]
    fix = base.fix if codemod else Fix(prompt=base.fix.prompt)
    return Campaign(**{**base.__dict__, "plan": settings, "fix": fix})


def _plan(root: Path, campaign: Campaign, base: str = "base0") -> Plan:
    return plan_campaign(root, campaign, graph=index(root), base_commit=base)


def test_scc_is_one_unit_and_class_with_method_too(tmp_path: Path) -> None:
    plan = _plan(_repo(tmp_path / "r"), _campaign())
    writes = [u.write_set for u in plan.units]
    assert ("jobs.py::ping", "jobs.py::pong") in writes  # the mutual recursion: one atom
    holder = [w for w in writes if any(s.startswith("jobs.py::Holder") for s in w)]
    # `made = utcnow()` is code of the class body (the lease-scope gate judges an edit by class
    # and function spans), so the class is written, and that lease covers its method's finding
    assert holder == [("jobs.py::Holder",)]
    unit = next(u for u in plan.units if u.write_set == ("jobs.py::Holder",))
    assert {f.symbol for f in unit.findings} == {"jobs.py::Holder.made", "jobs.py::Holder.refresh"}
    assert ("other.py::lone",) in writes
    assert sum(len(u.findings) for u in plan.units) == len(plan.findings) == 10
    assert len(plan.units) == 8  # ping+pong, 5 jobs, Holder, lone -> 8 units


def test_keys_are_stable_and_content_addressed(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r")
    one, two = _plan(root, _campaign()), _plan(root, _campaign())
    assert [u.key for u in one.units] == [u.key for u in two.units]
    assert len({u.key for u in one.units}) == len(one.units)
    other_base = _plan(root, _campaign(), base="base1")
    assert not {u.key for u in one.units} & {u.key for u in other_base.units}
    edited = _repo(tmp_path / "e", extra="\n\ndef more():\n    return datetime.datetime.utcnow()\n")
    keys = {u.key for u in _plan(edited, _campaign()).units}
    assert {u.key for u in one.units} < keys  # unrelated units keep their keys


def test_plan_json_round_trip(tmp_path: Path) -> None:
    from fleet.plan import plan_from_dict

    plan = _plan(_repo(tmp_path / "r"), _campaign())
    back = plan_from_dict(json.loads(json.dumps(plan.to_dict())))
    assert back == plan  # graph and timings do not take part in equality
    assert back.unit(plan.units[0].key[:6]) == plan.units[0]


def test_read_set_is_what_the_written_symbols_rely_on(tmp_path: Path) -> None:
    plan = _plan(_repo(tmp_path / "r"), _campaign())
    job = next(u for u in plan.units if u.write_set == ("jobs.py::job0",))
    assert "jobs.py::helper" in job.read_set
    assert not any(s.endswith("::<module>") for u in plan.units for s in u.read_set)
    leases = plan.leases(job)
    assert [(r.symbol, r.mode) for r in leases if r.mode == "write"] == [("jobs.py::job0", "write")]
    assert leases == sorted(leases, key=lambda r: (r.rank, r.symbol))


def test_waves_never_hold_conflicting_leases(tmp_path: Path) -> None:
    extra = (
        "\n\nSTARTED = datetime.datetime.utcnow()\n"  # module level: writes <module>
        "\n\ndef callee():\n    return datetime.datetime.utcnow()\n"
        "\n\ndef caller():\n    return callee(), datetime.datetime.utcnow()\n"
    )
    plan = _plan(_repo(tmp_path / "r", extra=extra), _campaign())
    assert len(plan.waves) >= 2
    by_key = {u.key: u for u in plan.units}
    for wave in plan.waves:
        held: list[tuple[str, str]] = []
        for key in wave:
            unit = by_key[key]
            mine = [(s, "write") for s in unit.write_set] + [(s, "read") for s in unit.read_set]
            for sym, mode in mine:
                for other, other_mode in held:
                    # as the lease stores judge it: <module> does not contain Holder
                    related = sym == other or other in containers(sym) or sym in containers(other)
                    assert not (related and "write" in (mode, other_mode)), (sym, other)
            held += mine
    callee = next(u for u in plan.units if u.write_set == ("jobs.py::callee",))
    caller = next(u for u in plan.units if u.write_set == ("jobs.py::caller",))
    assert "jobs.py::callee" in caller.read_set
    assert callee.wave != caller.wave
    assert any(u.write_set == ("jobs.py::<module>", "jobs.py::STARTED") for u in plan.units)
    assert plan.expected_parallelism == expected_parallelism(
        [len(w) for w in plan.waves], plan.max_parallel)


def test_size_cap_and_file_granularity(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r", n=6)
    capped = _plan(root, _campaign(granularity="file", max_unit_symbols=3))
    jobs_units = [u for u in capped.units if u.paths == ("jobs.py",)]
    assert all(len(u.write_set) <= 3 for u in jobs_units)
    # ping pong job0-5, and Holder (covering made and refresh: an atom of 3, not split)
    assert sum(len(u.write_set) for u in jobs_units) == 9
    coupled = _plan(root, _campaign(granularity="file", max_unit_symbols=3, coupled="file"))
    assert sorted(u.paths for u in coupled.units) == [("jobs.py",), ("other.py",)]


def test_coupled_connected_keeps_dependent_changes_together(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    (root / "m.py").write_text(
        "import datetime\n\n\ndef low():\n    return datetime.datetime.utcnow()\n\n\n"
        "def high():\n    return low(), datetime.datetime.utcnow()\n\n\n"
        "def apart():\n    return datetime.datetime.utcnow()\n"
    )
    plan = _plan(root, _campaign(coupled="connected"))
    writes = sorted(u.write_set for u in plan.units)
    assert writes == [("m.py::apart",), ("m.py::high", "m.py::low")]


def test_import_editing_fix_leases_module_code_and_keeps_a_file_together(tmp_path: Path) -> None:
    """The codemod adds ``from datetime import UTC``: module-level code, ``path::<module>``. Each
    unit write-leases it for its files, so one file's findings are one unit (two would both need
    that lease and both rewrite the import block)."""
    plan = _plan(_repo(tmp_path / "r"), _campaign(codemod=True))
    assert plan.units and all(len(u.paths) == 1 for u in plan.units)
    assert sorted(u.paths[0] for u in plan.units) == ["jobs.py", "other.py"]
    for unit in plan.units:
        assert f"{unit.paths[0]}::<module>" in unit.write_set
        leases = [(r.symbol, r.mode) for r in plan.leases(unit)]
        assert (f"{unit.paths[0]}::<module>", "write") in leases
    jobs = next(u for u in plan.units if u.paths == ("jobs.py",))
    assert "jobs.py::helper" in jobs.read_set  # <module> does not contain helper: still leased
    assert sum(len(u.findings) for u in plan.units) == len(plan.findings) == 10
    assert len(plan.waves) == 1  # <module> of two files do not conflict
    assert containers("jobs.py::Holder.refresh") == ["jobs.py::Holder"]


def test_expected_parallelism() -> None:
    assert expected_parallelism([4, 2], 4) == 3.0
    assert expected_parallelism([8], 4) == 4.0
    assert expected_parallelism([], 4) == 0.0


def test_fleet_plan_is_a_dry_run(git_repo: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    from fleet_pipelines.cli import main

    _repo(git_repo)
    git(git_repo, "add", "-A")
    git(git_repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "code")
    status, head = git(git_repo, "status", "--porcelain"), git(git_repo, "rev-parse", "HEAD")
    out = tmp_path / "plan.json"
    assert main(["plan", str(git_repo), "--campaign", "datetime-utcnow", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    for label in ("findings   10", "units", "lock order", "waves", "parallel"):
        assert label in printed
    data = json.loads(out.read_text())
    assert data["summary"]["findings"] == 10 and data["base_commit"] == head.strip()
    assert {u["key"] for u in data["units"]} == {k for w in data["waves"] for k in w}
    assert git(git_repo, "status", "--porcelain") == status
    assert git(git_repo, "rev-parse", "HEAD") == head
    assert "fleet/" not in git(git_repo, "branch", "--list")
    assert main(["plan", str(git_repo), "--campaign", "no-such-campaign"]) == 2
