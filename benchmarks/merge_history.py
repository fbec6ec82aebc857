"""The structural merge replayed on real merge history, compared with what the humans committed.

    python benchmarks/merge_history.py collect GIT_DIR OUT [--name NAME] [--max-merges N] [--again]
    python benchmarks/merge_history.py run OUT [--json FILE] [--driver N]
    python benchmarks/merge_history.py timings OUT [--driver N] [--conflicted M] [--server]
        [--json FILE]
    python benchmarks/merge_history.py export OUT FIXTURES --results FILE [--max-bytes B]
        [--per-repo N]
    python benchmarks/merge_history.py ab OUT CODE_A CODE_B [...] [--json FILE]

``collect`` refuses a repository whose cases an earlier set already holds (a results file in
``benchmarks/results`` or a fixture in ``tests/fixtures/merge/history`` names it: the fourteenth
set re-collected four of the fifth set's repositories and was called unseen), naming where it found
them; ``--again`` collects it anyway. ``collect`` walks every two-parent merge commit of a
repository (a bare clone is enough) that has exactly one merge base, and keeps each ``.py`` file
that both parents changed to different contents:
``OUT/NAME/<merge>-<path>/{base,ours,theirs,actual}.py`` (``actual`` is the merge commit's version;
``meta.json`` names the commit and the path). Identical triples are kept once.
Files the merge deleted or that a parent deleted are left out: git does not run a merge driver
for them.

``run`` merges every case with ``git merge-file --diff3`` and with the stages ``fleet merge-driver``
runs after git's (in process) and classifies it against ``actual`` (``_merge_judge.py``) with
``fleet.merge.equivalence.same_program`` (comments, formatting and the order of adjacent
definitions, imports and imported names ignored, and of adjacent plain assignments that may swap
inside a function and of a call's keyword arguments):

- git conflicts: ``resolved`` (fleet clean, same program as the humans'), ``conflict`` (fleet
  conflicts too), ``clean_human_beyond`` (fleet clean, different, and every top-level symbol where
  the two differ holds lines the humans wrote that are in none of the three inputs, or lines
  both sides kept that they dropped: the humans edited beyond both sides; or the two differ only
  in whitespace inside strings), ``clean_human_override`` (fleet clean, different, and every
  differing top-level symbol, each imported name counted as one, is either of that kind or one
  that only one side changed, which fleet holds as that side has it: the humans undid an edit
  nothing contested; inside a class or a compound statement present in all five versions, the
  same is asked of its header and of each member or statement), ``clean_order`` (fleet clean,
  the humans' module statements in another order, where only statements that bind names and
  share none were swapped: two definitions both sides added at one point), ``clean_wrong``
  (fleet clean and different otherwise: counted as the merge's fault);
- git clean: ``git_clean`` when fleet's result is git's, ``git_clean_changed`` when it is not
  (``worse`` if git's matched the humans' and fleet's does not);
- ``fault``: a stage after git's raised. The driver then keeps git's result (it catches the
  fault), so the case counts among git's conflicts, unresolved; each is named on stderr and in
  ``--json`` with the exception, and the replay goes on.

It prints one row per repository; ``--driver N`` also times ``fleet merge-driver`` as a process
(start-up included; the console script, the driver's fast line and its shell line) against
``git merge-file`` on N cases per repository sampled evenly and on N git-conflicted ones.
``timings`` runs only those process timings (its own git-conflicted sample: git's verdict, no
classification). ``ab`` times the stages after git's merge under several copies of the code,
interleaved, and compares their results (``_merge_ab.py``). ``export`` copies the small
git-conflicted cases into the test fixtures with their outcome.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _merge_ab import ab
from _merge_judge import classify
from _merge_timings import PARTS, _driver_ms, _p50, _read, timings


class _Blobs:
    """``git cat-file --batch`` kept open: the contents of ``<rev>:<path>``, None if missing."""

    def __init__(self, git_dir: Path) -> None:
        self.proc = subprocess.Popen(
            ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def get(self, spec: str) -> tuple[str, bytes] | None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(spec.encode() + b"\n")
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        if len(header) != 3:
            return None
        data = self.proc.stdout.read(int(header[2]) + 1)[:-1]
        return (header[0].decode(), data) if header[1] == b"blob" else None

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait()
        self.proc.stdout.close()


def _git(git_dir: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "--git-dir", str(git_dir), *args], capture_output=True, text=True, check=False
    )
    return proc.stdout if proc.returncode == 0 else ""


def _changed(git_dir: Path, old: str, new: str) -> set[str]:
    out = _git(git_dir, "diff-tree", "-r", "--no-renames", "--name-only", old, new)
    return {line for line in out.splitlines() if line.endswith(".py")}


ROOT = Path(__file__).resolve().parents[1]
_CASE_ID = re.compile(r"([A-Za-z0-9_.-]+\+[A-Za-z0-9_.-]+)(?:/|__)")


def replayed_in(name: str, root: Path = ROOT) -> list[str]:
    """The results files and the fixture directory that hold cases of repository ``name``
    (``owner+repo``, compared without case), relative to ``root``."""
    wanted = name.lower()
    places = sorted((root / "benchmarks" / "results").glob("merge_history_*.json"))
    found = []
    for place in places:
        text = place.read_text(encoding="utf-8", errors="replace")
        names = {match.group(1).lower() for match in _CASE_ID.finditer(text)}
        names |= {row.lower() for row in re.findall(r'"repository": "([^"]+)"', text)}
        if wanted in names:
            found.append(str(place.relative_to(root)))
    fixtures = root / "tests" / "fixtures" / "merge" / "history"
    if fixtures.is_dir() and any(
        entry.name.lower().startswith(wanted + "__") for entry in fixtures.iterdir()
    ):
        found.append(str(fixtures.relative_to(root)))
    return found


def collect(git_dir: Path, out: Path, max_merges: int) -> dict[str, int]:
    counts = {"merges": 0, "criss_cross": 0, "cases": 0, "duplicates": 0}
    lines = _git(git_dir, "rev-list", "--merges", "--parents", "--all").splitlines()
    blobs = _Blobs(git_dir)
    seen: set[tuple[str, ...]] = set()
    out.mkdir(parents=True, exist_ok=True)
    try:
        for line in lines[:max_merges]:
            shas = line.split()
            if len(shas) != 3:
                continue
            merge, ours, theirs = shas
            counts["merges"] += 1
            bases = _git(git_dir, "merge-base", "--all", ours, theirs).split()
            if len(bases) != 1:
                counts["criss_cross"] += len(bases) > 1
                continue
            base = bases[0]
            for path in sorted(_changed(git_dir, base, ours) & _changed(git_dir, base, theirs)):
                got = [blobs.get(f"{rev}:{path}") for rev in (base, ours, theirs, merge)]
                if any(g is None for g in got):
                    continue
                ids = tuple(g[0] for g in got if g is not None)
                if ids[1] == ids[2] or ids[0] in (ids[1], ids[2]):
                    continue  # git merges these trees without running a merge driver
                if ids[:3] in seen:
                    counts["duplicates"] += 1
                    continue
                seen.add(ids[:3])
                name = f"{merge[:12]}-{re.sub(r'[^A-Za-z0-9_.]+', '_', path)}"
                folder = out / name
                folder.mkdir(exist_ok=True)
                for part, g in zip(PARTS, got, strict=True):
                    assert g is not None
                    (folder / f"{part}.py").write_bytes(g[1])
                meta = {"merge": merge, "ours": ours, "theirs": theirs, "base": base, "path": path}
                (folder / "meta.json").write_text(json.dumps(meta) + "\n")
                counts["cases"] += 1
    finally:
        blobs.close()
    return counts


OUTCOMES = (
    "resolved",
    "conflict",
    "clean_human_beyond",
    "clean_human_override",
    "clean_order",
    "clean_wrong",
    "git_clean",
    "git_clean_changed",
    "worse",
)


def run(corpus: Path, json_out: Path | None, driver: int) -> int:
    rows = []
    details = []
    for repo in sorted(p for p in corpus.iterdir() if p.is_dir()):
        counts = dict.fromkeys((*OUTCOMES, "unparsable", "fault"), 0)
        fleet_ms: list[float] = []
        git_ms: list[float] = []
        hard: list[Path] = []
        everything: list[Path] = []
        for folder in sorted(p for p in repo.iterdir() if (p / "actual.py").exists()):
            base, ours, theirs, actual = _read(folder)
            try:
                outcome, stage, fleet_s, git_s = classify(base, ours, theirs, actual)
            except Exception as exc:  # the driver keeps git's result on a fault of its stages
                counts["fault"] += 1  # (on a git conflict): counted, named, not fatal
                said = f"{type(exc).__name__}: {exc}"
                print(f"fault: {repo.name}/{folder.name}: {said}", file=sys.stderr)
                details.append({"case": f"{repo.name}/{folder.name}", "outcome": "fault",
                                "stage": said})
                continue
            counts[outcome] += 1
            if outcome == "unparsable":
                continue  # the committed merge does not parse: nothing to compare with
            fleet_ms.append(fleet_s * 1000)
            git_ms.append(git_s * 1000)
            everything.append(folder)
            if outcome not in ("git_clean", "git_clean_changed", "worse"):
                hard.append(folder)
            details.append(
                {"case": f"{repo.name}/{folder.name}", "outcome": outcome, "stage": stage}
            )
        conflicts = sum(counts[k] for k in OUTCOMES[:6]) + counts["fault"]
        row: dict[str, object] = {"repository": repo.name, "git conflicts": conflicts}
        row.update(counts)
        row["resolved share"] = f"{100 * counts['resolved'] / conflicts:.1f}%" if conflicts else "-"
        row["fleet p50 ms"] = f"{statistics.median(fleet_ms):.1f}" if fleet_ms else "-"
        row["git p50 ms"] = f"{statistics.median(git_ms):.1f}" if git_ms else "-"
        if driver and everything:
            # Every k-th case (git-clean ones are most of them, as in a real merge), then the
            # git-conflicted ones, where the structural stage runs.
            sample = everything[:: max(1, len(everything) // driver)][:driver]
            for label, folders in (("all", sample), ("conflicted", hard[:driver])):
                runs = [_driver_ms(folder) for folder in folders]
                if runs:
                    for name in ("console", "fast", "shell", "git", "python -S"):
                        row[f"{name} process p50 ms ({label})"] = _p50(runs, name)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    if not rows:
        print(f"no <repository>/<case>/actual.py under {corpus}", file=sys.stderr)
        return 2
    header = list(rows[0])
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(str(row.get(key, "-")) for key in header) + " |")
    if json_out is not None:
        json_out.write_text(json.dumps({"rows": rows, "cases": details}, indent=1) + "\n")
    return 0


def export(corpus: Path, fixtures: Path, results: Path, max_bytes: int, per_repo: int) -> int:
    """Copy up to ``per_repo`` small git-conflicted cases of each repository into ``fixtures``,
    each with an ``outcome`` file: the resolved ones first, then the clean ones that differ, then
    conflicts. Candidates come from ``results`` (``run --json``); each is classified again."""
    fixtures.mkdir(parents=True, exist_ok=True)
    order = {
        "resolved": 0,
        "clean_human_beyond": 1,
        "clean_human_override": 1,
        "clean_order": 1,
        "clean_wrong": 1,
        "conflict": 2,
    }
    found: dict[str, list[tuple[int, int, Path]]] = {}
    for case in json.loads(results.read_text())["cases"]:
        folder = corpus / case["case"]
        if case["outcome"] not in order:
            continue
        size = max((folder / f"{part}.py").stat().st_size for part in PARTS)
        if size <= max_bytes:
            found.setdefault(folder.parent.name, []).append((order[case["outcome"]], size, folder))
    for repo, candidates in sorted(found.items()):
        for _, _, folder in sorted(candidates)[:per_repo]:
            outcome = classify(*_read(folder))[0]
            target = fixtures / f"{repo}__{folder.name}"
            target.mkdir(exist_ok=True)
            for part in PARTS:
                shutil.copy(folder / f"{part}.py", target / f"{part}.py")
            shutil.copy(folder / "meta.json", target / "meta.json")
            (target / "outcome").write_text(outcome + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("collect")
    one.add_argument("git_dir", type=Path)
    one.add_argument("out", type=Path)
    one.add_argument("--name")
    one.add_argument("--max-merges", type=int, default=100_000)
    one.add_argument("--again", action="store_true",
                     help="collect a repository an earlier set already holds")
    two = sub.add_parser("run")
    two.add_argument("corpus", type=Path)
    two.add_argument("--json", type=Path)
    two.add_argument("--driver", type=int, default=0, metavar="N")
    timed = sub.add_parser("timings")
    timed.add_argument("corpus", type=Path)
    timed.add_argument("--driver", type=int, default=20, metavar="N")
    timed.add_argument("--conflicted", type=int, default=5, metavar="M")
    timed.add_argument("--server", action="store_true", help="also the warm merge server")
    timed.add_argument("--json", type=Path)
    three = sub.add_parser("export")
    three.add_argument("corpus", type=Path)
    three.add_argument("fixtures", type=Path)
    three.add_argument("--results", type=Path, required=True, help="run --json output")
    three.add_argument("--max-bytes", type=int, default=10_000)
    three.add_argument("--per-repo", type=int, default=8)
    four = sub.add_parser("ab")
    four.add_argument("corpus", type=Path)
    four.add_argument("codes", type=Path, nargs="+", help="directories each holding a fleet/")
    four.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.command == "collect":
        name = args.name or os.path.basename(os.path.dirname(os.path.abspath(args.git_dir)))
        earlier = replayed_in(name)
        if earlier and not args.again:
            print(f"merge_history.py collect: {name} is already in {', '.join(earlier)}: its "
                  "cases are not unseen (--again to collect it anyway)", file=sys.stderr)
            return 2
        counts = collect(args.git_dir, args.out / name, args.max_merges)
        print(json.dumps({"repository": name, **counts}))
        return 0
    if args.command == "run":
        return run(args.corpus, args.json, args.driver)
    if args.command == "ab":
        return ab(args.corpus, args.codes, args.json)
    if args.command == "timings":
        return timings(args.corpus, args.driver, args.conflicted, args.server, args.json)
    return export(args.corpus, args.fixtures, args.results, args.max_bytes, args.per_repo)


if __name__ == "__main__":
    raise SystemExit(main())
