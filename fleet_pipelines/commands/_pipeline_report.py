"""What ``fleet sweep`` and ``fleet demo`` print when the sweep is done: per campaign a table of
its units (status, why, paths), the integration branch and how its tests went, the handed-over
change and a self-merge; then the runs, the wall time and where to look in the Dagster UI."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fleet_pipelines.commands._sweep import SweepReport
    from fleet_pipelines.resources import FleetSettings

__all__ = ["integration_tests", "print_report"]


def print_report(report: SweepReport, settings: FleetSettings) -> None:
    """The sweep's report on standard output (rich tables). What comes from the sweep (gate
    evidence, paths, branches, URLs) is printed as it is, never read as rich markup: evidence
    such as ``[/venv/bin/python] could not judge`` is a closing tag to rich, and raised
    ``MarkupError`` after the whole sweep (WebOb 1.8.7)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    console = Console()
    nothing_new = True
    for c in report.campaigns:
        table = Table(title=Text(f"campaign {c.campaign}: {c.findings} open finding(s), "
                                 f"{c.fixed} fixed, {len(c.units)} unit(s), {c.new_units} new"))
        for col in ("unit", "status", "why", "paths"):
            table.add_column(col, overflow="fold")
        for key, u in c.units.items():
            table.add_row(*(Text(str(cell)) for cell in (
                key[:12], u["status"], u.get("why", u["gate"]), u["paths"])))
        console.print(table)
        if c.integration:
            i = c.integration
            tests = integration_tests(i)
            console.print(f"  integration branch [bold]{escape(i['branch'])}[/bold] at "
                          f"{escape(i['head'][:10])}: {len(i['merged'])} merged, "
                          f"{len(i['semantic_conflicts'])} semantic conflict(s), tests "
                          f"{escape(tests)}")
        if c.change_url:
            console.print(Text(f"  handed over: {c.change_url}"))
        if c.self_merge:
            console.print(Text(f"  self-merge ({settings.base_branch}): {c.self_merge}"))
        nothing_new &= c.new_units == 0 and c.batches == 0 and not c.integrated
    if nothing_new:
        console.print("nothing new: every finding is known and every unit has a result")
    console.print(Text(
        f"{report.runs} Dagster run(s) in {report.wall_s:.1f}s. In the UI (`make ui`, "
        f"http://127.0.0.1:3000): Assets -> symbol_graph lineage, each campaign's "
        f"candidate_patches partitions and their checks; the instance is {report.dagster_home}."))


def integration_tests(payload: dict[str, Any]) -> str:
    """How the integration's tests went, from its ``integration.finished`` ledger payload:
    ``pass``, ``not run``, ``collected none``, or the failures the patches introduced, told
    apart from those the base already had (a third-party suite often fails before any change)."""
    passed = payload.get("tests_passed")
    if passed is None:
        return "not run"
    if passed and payload.get("tests_collected") == 0:
        return "collected none (pytest found no test): nothing checked the combination"
    if passed:
        return "pass"
    new = list(payload.get("new_failures") or [])
    shown = "; ".join(new[:3]) + ("; ..." if len(new) > 3 else "")
    if payload.get("base_tests_passed") is False:
        if not new:
            return "fail, but no new failure (the base's own tests fail the same way)"
        return f"FAIL: {len(new)} new failure(s) (the base's own tests fail too): {shown}"
    return "FAIL" + (f": {shown}" if new and new != ["the test suite fails"] else "")
