"""Benchmark the structural merge against ``git merge-file --diff3`` on a directory of scenarios.

    python benchmarks/bench_merge.py DIR [--repeat 3] [--driver N] [--json OUT]

DIR holds ``<case>/{base,ours,theirs,actual}.py`` (``gen_merge_scenarios.py`` writes this shape,
and so does any export of a project's real historical merges, ``actual`` being what was committed).
Both tools run on every case in the same run. Reported per tool: clean rate; of the clean results,
the share equal to ``actual`` as text and as AST, the share wrong (clean but a different AST) and
the share that parses; median and p99 latency per file. Then the same restricted to the cases
where git conflicts. Cases with a ``conflict`` file instead of ``actual.py`` are true conflicts:
each tool's clean merges of them are counted as wrong. A case's latency is the fastest of
``--repeat`` runs (3) of each tool, which filters out the noise of a busy machine.
``--driver N`` also times ``fleet merge-driver`` as a process (start-up included) on the first
N cases.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from fleet.merge import Clean, merge3
from fleet.merge._line import line_merge


@dataclass
class Tally:
    name: str
    cases: int = 0
    clean: int = 0
    equal_text: int = 0
    equal_ast: int = 0
    parses: int = 0
    latencies: list[float] = field(default_factory=list)

    def add(self, clean_text: str | None, actual: str, seconds: float) -> None:
        self.cases += 1
        self.latencies.append(seconds * 1000)
        if clean_text is None:
            return
        self.clean += 1
        self.equal_text += clean_text == actual
        tree = _ast(clean_text)
        self.parses += tree is not None
        self.equal_ast += tree is not None and tree == _ast(actual)

    def row(self) -> dict[str, object]:
        def share(part: int, whole: int) -> str:
            return f"{100 * part / whole:.1f}%" if whole else "-"

        ordered = sorted(self.latencies)
        p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else 0.0
        return {
            "tool": self.name,
            "cases": self.cases,
            "clean": share(self.clean, self.cases),
            "equal (text)": share(self.equal_text, self.clean),
            "equal (AST)": share(self.equal_ast, self.clean),
            "wrong": share(self.clean - self.equal_ast, self.clean),
            "parses": share(self.parses, self.clean),
            "p50 ms": f"{statistics.median(ordered):.1f}" if ordered else "-",
            "p99 ms": f"{p99:.1f}",
        }


def _ast(text: str) -> str | None:
    try:
        return ast.dump(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError):
        return None


def _git_merge_file(folder: Path) -> tuple[str | None, float]:
    with tempfile.TemporaryDirectory() as tmp:
        ours = Path(tmp) / "ours.py"
        shutil.copy(folder / "ours.py", ours)
        start = time.perf_counter()
        proc = subprocess.run(
            [
                "git",
                "merge-file",
                "--diff3",
                str(ours),
                str(folder / "base.py"),
                str(folder / "theirs.py"),
            ],
            capture_output=True,
            check=False,
        )
        elapsed = time.perf_counter() - start
        return (ours.read_text() if proc.returncode == 0 else None), elapsed


def _driver(folder: Path) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        ours = Path(tmp) / "ours.py"
        shutil.copy(folder / "ours.py", ours)
        command = [
            sys.executable,
            "-m",
            "fleet_pipelines.cli",
            "merge-driver",
            str(folder / "base.py"),
            str(ours),
            str(folder / "theirs.py"),
            "x.py",
        ]
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=False)
        return time.perf_counter() - start


def markdown(rows: list[dict[str, object]]) -> str:
    header = list(rows[0])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(row[key]) for key in header) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--driver", type=int, default=0, metavar="N")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--repeat", type=int, default=3, help="Runs per case; its latency is the fastest."
    )
    args = parser.parse_args(argv)
    folders = sorted(p for p in args.dir.iterdir() if (p / "actual.py").exists())
    conflict_folders = sorted(p for p in args.dir.iterdir() if (p / "conflict").exists())
    if not folders:
        print(f"no <case>/actual.py under {args.dir}", file=sys.stderr)
        return 2
    first = folders[0]
    texts = [(first / f"{part}.py").read_text() for part in ("base", "ours", "theirs")]
    from fleet.merge._python import structural_merge  # warm-up: libcst's import is not a merge
    from fleet.merge.profile import PYTHON

    structural_merge(*texts, PYTHON)
    tallies = {name: Tally(name) for name in ("fleet merge3", "git merge-file --diff3")}
    hard = {name: Tally(f"{name}, git-conflicted cases") for name in tallies}
    stages: dict[str, int] = {}
    for folder in folders:
        base, ours, theirs, actual = (
            (folder / f"{part}.py").read_text() for part in ("base", "ours", "theirs", "actual")
        )
        fleet_seconds = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = merge3(base, ours, theirs, "case.py")
            fleet_seconds = min(fleet_seconds, time.perf_counter() - start)
        fleet_text = result.text if isinstance(result, Clean) else None
        stage = f"{type(result).__name__.lower()} ({result.stage})"
        stages[stage] = stages.get(stage, 0) + 1
        git_text, git_seconds = _git_merge_file(folder)
        for _ in range(args.repeat - 1):
            git_seconds = min(git_seconds, _git_merge_file(folder)[1])
        tallies["fleet merge3"].add(fleet_text, actual, fleet_seconds)
        tallies["git merge-file --diff3"].add(git_text, actual, git_seconds)
        if not isinstance(line_merge(base, ours, theirs), Clean):
            hard["fleet merge3"].add(fleet_text, actual, fleet_seconds)
            hard["git merge-file --diff3"].add(git_text, actual, git_seconds)
    rows = [t.row() for t in tallies.values()] + [t.row() for t in hard.values()]
    print(f"{len(folders)} scenarios in {args.dir}, latency = fastest of {args.repeat} runs\n")
    print(markdown(rows))
    print("\nfleet results by stage: " + ", ".join(f"{k} {v}" for k, v in sorted(stages.items())))
    report: dict[str, object] = {"rows": rows, "stages": stages}
    if conflict_folders:
        merged_cleanly = {"fleet merge3": 0, "git merge-file --diff3": 0}
        for folder in conflict_folders:
            base, ours, theirs = (
                (folder / f"{part}.py").read_text() for part in ("base", "ours", "theirs")
            )
            merged_cleanly["fleet merge3"] += isinstance(merge3(base, ours, theirs, "c.py"), Clean)
            merged_cleanly["git merge-file --diff3"] += _git_merge_file(folder)[0] is not None
        report["true_conflicts"] = {"cases": len(conflict_folders), **merged_cleanly}
        print(
            f"\ntrue conflicts (a `conflict` file): {len(conflict_folders)} cases, merged cleanly "
            "(wrong): " + ", ".join(f"{tool} {count}" for tool, count in merged_cleanly.items())
        )
    if args.driver:
        times = sorted(_driver(folder) * 1000 for folder in folders[: args.driver])
        report["driver_ms"] = {"n": len(times), "p50": statistics.median(times), "max": times[-1]}
        print(
            f"\nfleet merge-driver as a process ({len(times)} files): "
            f"p50 {statistics.median(times):.1f} ms, max {times[-1]:.1f} ms"
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
