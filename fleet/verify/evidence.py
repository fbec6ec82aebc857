"""What counts as test evidence for a patch, given the pytest runs before and after it.

The rules (docs/verify.md, "Evidence"):

- a test that passed before and fails, errors, vanishes or is skipped after rejects; so does a
  new failing test, a test file the patch stops from collecting, and a new test file that does
  not collect;
- evidence comes only from tests that reach the changed symbols (the graph's
  ``tests_reaching``; without a graph, the tests of the files selected by imports and names), so
  "173 passed" in an unrelated file is not evidence;
- a changed test file must itself run; a needed test file that errors at collection (before and
  after: a missing dependency, a Python it does not support) makes the verdict ``unknown``,
  never ``accept``;
- a run with no report says why: "timed out after N s" with the failures seen until then, or
  the conftest that aborted pytest.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from fleet.types import VerdictStatus
from fleet.verify.execution import PytestRun, is_collection_key

__all__ = ["Judgement", "Needs", "compare_runs", "judge", "summary", "under"]

_BAD = ("failed", "error")


@dataclass(frozen=True)
class Needs:
    """What the evidence must come from: ``reaching`` test ids (``path::Qual.name``) of the
    graph, ``files`` whose tests count when the graph names none, the test files the patch
    ``changed`` (each must run), the test files the patch ``added``, and the other Python files
    it ``patched`` (the code whose packages the tests must import from the patched tree)."""

    reaching: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    patched: tuple[str, ...] = ()

    @property
    def needed_files(self) -> set[str]:
        """The test files the evidence needs: those of the reaching tests (else the selected
        files), and every changed test file."""
        base = {t.split("::", 1)[0] for t in self.reaching} or set(self.files)
        return base | set(self.changed)


@dataclass
class Judgement:
    status: VerdictStatus
    evidence: str
    details: dict[str, object] = field(default_factory=dict)


def under(path: str, directory: str) -> bool:
    """``path`` is ``directory`` or inside it (``""`` is the root)."""
    return not directory or path == directory or path.startswith(directory.rstrip("/") + "/")


def _file(key: str) -> str:
    return key.split("::", 1)[0]


def _outcome(result: PytestRun, test_id: str) -> str | None:
    """The best outcome pytest reported for the test function ``path::Qual.name`` (any of its
    parametrizations); ``None`` when it did not run."""
    path, _, qual = test_id.partition("::")
    name = qual.rsplit(".", 1)[-1]
    found = [o for key, o in result.outcomes.items()
             if _file(key) == path and key.rsplit("::", 1)[-1].split("[")[0] == name]
    return "passed" if "passed" in found else (found[0] if found else None)


def compare_runs(before: PytestRun, after: PytestRun) -> list[str]:
    """Regressions from ``before`` to ``after``: tests that passed and now fail, error, vanish
    or are skipped, new tests that fail, files that no longer collect."""
    problems = []
    broken = set(after.collection_errors) - set(before.collection_errors)
    for test, outcome in sorted(before.outcomes.items()):
        if outcome != "passed":
            continue
        now = after.outcomes.get(test)
        if now in _BAD:
            problems.append(f"{_short(test)} passed before and {now} after")
        elif now is None and _file(test) in broken:
            continue  # named once below, with the error
        elif now is None:
            problems.append(f"{_short(test)} passed before and is gone after")
        elif now == "skipped":
            problems.append(f"{_short(test)} passed before and is skipped after")
    for test, outcome in sorted(after.outcomes.items()):
        if is_collection_key(test, after.collection_errors):
            continue
        if test not in before.outcomes and outcome in _BAD:
            problems.append(f"new test {_short(test)} {outcome}")
    for path in sorted(broken):
        collected = any(_file(k) == path and not is_collection_key(k, before.collection_errors)
                        for k in before.outcomes)
        what = "no longer collects" if collected else "does not collect"
        problems.append(f"{path} {what} after the patch: {after.collection_errors[path]}")
    return problems


def _internal_error(output: str) -> str:
    """The last INTERNALERROR line that names an exception."""
    lines = [ln.removeprefix("INTERNALERROR>").strip() for ln in output.splitlines()
             if ln.startswith("INTERNALERROR>")]
    named = [ln for ln in lines if re.match(r"^[A-Za-z_.]*(Error|Exception)\b", ln)]
    return (named or lines or ["no detail"])[-1][:300]


def _short(key: str) -> str:
    file, _, rest = key.partition("::")
    return f"{file}::{rest.split('::')[-1]}"


def summary(result: PytestRun) -> str:
    counts = Counter(result.outcomes.values())
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no tests"


def judge(before: PytestRun, after: PytestRun, needs: Needs, scope: str,
          timeout_s: float) -> Judgement:
    """The verdict of one interpreter's before/after runs under the evidence rules."""
    details: dict[str, object] = {}
    for label, result in (("before", before), ("after", after)):
        if result.reported:
            continue
        if label == "after" and result.timed_out and before.reported:
            hung = [t for t in result.seen if before.outcomes.get(t) == "passed"
                    or _outcome(before, t) == "passed"]
            if hung:
                return Judgement("reject", f"{scope}: after the patch pytest "
                                 f"{result.why_unreported(timeout_s)}; "
                                 f"{', '.join(hung)} passed before", {"timed_out": True})
        if (label == "after" and before.reported and not result.timed_out
                and not result.aborted_by and "INTERNALERROR" in result.output):
            # the same tests reported before; after the patch pytest itself crashed (freezegun
            # 0.3.15's utcnow fix broke the fake clock pytest's own timing calls)
            return Judgement("reject", f"{scope}: after the patch pytest crashed "
                             f"(INTERNALERROR: {_internal_error(result.output)}); before it: "
                             f"{summary(before)}", {"crashed": True})
        return Judgement("unknown", f"{scope}: {label} the patch "
                         f"{result.why_unreported(timeout_s)}\n{result.tail(10)}",
                         {"timed_out": result.timed_out, "aborted_by": result.aborted_by})
    details.update(before=summary(before), after=summary(after))
    problems = compare_runs(before, after)
    details["problems"] = problems
    if problems:
        return Judgement("reject", f"{scope}: " + "; ".join(problems) + f"\n{after.tail(15)}",
                         details)
    idle = [c for c in needs.changed
            if not any(_file(k) == c and o in ("passed", "failed", "error")
                       and not is_collection_key(k, after.collection_errors)
                       for k, o in after.outcomes.items())]
    if idle:
        details["not_run"] = idle
        named = ", ".join(f"{c} ({_collection_error(after, c) or 'no test ran'})" for c in idle)
        return Judgement("unknown", f"{scope}: a changed test file must itself run, and after "
                         f"the patch it did not: {named}", details)
    if not before.outcomes and not after.outcomes:
        # pytest collected nothing (a repository without tests, or tests it does not find)
        return Judgement("unknown", f"{scope}: pytest collected no test before or after the "
                         f"patch: nothing checks the patch\n{after.tail(5)}", details)
    passing = _evidence(after, needs, before)
    if not passing:
        details["reaching"] = list(needs.reaching[:50])
        # tests that ran and fail before and after: evidence that exists and says "broken",
        # not tests that cannot run (the alias-rename proof stands in only for the latter)
        wanted = {*needs.files, *needs.changed}
        failing = sorted({_short(k) for k, o in after.outcomes.items()
                          if o in ("failed", "error") and _file(k) in wanted
                          and not is_collection_key(k, after.collection_errors)}
                         | {t for t in needs.reaching if _outcome(after, t) in ("failed", "error")})
        if failing:
            details["failing"] = failing[:50]
        if needs.reaching:
            # The tests that exercise the patched code pass neither before nor after the patch
            # (a passing one that fails after was rejected above): not collected, a missing
            # fixture or dependency. Other tests passing says nothing about the patch.
            why = (f"none of the {len(needs.reaching)} test(s) that reach the patched code "
                   f"passes, before or after it")
        elif needs.files or needs.changed:
            why = "no impacted test passes, before or after the patch"
        else:
            why = "no test reaches the patched code (the whole suite ran)"
        errors = "".join(f"\n{p} errors at collection: {m}"
                         for p, m in sorted(after.collection_errors.items()))
        return Judgement("unknown", f"{scope}: {why} ({summary(before)} before, "
                         f"{summary(after)} after): nothing checks the patch{errors}\n"
                         f"{before.tail(15)}", details)
    needed = needs.needed_files
    broken = sorted(p for p, _ in after.collection_errors.items()
                    if any(under(f, p) for f in needed))
    if broken:
        details["collection_errors"] = {p: after.collection_errors[p] for p in broken}
        listed = "; ".join(f"{p}: {after.collection_errors[p]}" for p in broken)
        return Judgement("unknown", f"{scope}: a test file the evidence needs errors at "
                         f"collection, before and after the patch, so its tests do not run: "
                         f"{listed} ({summary(before)} before, {summary(after)} after)",
                         details)
    details["evidence"] = passing[:50]
    return Judgement("accept", f"{scope}: {summary(before)} before, {summary(after)} after",
                     details)


def _collection_error(result: PytestRun, path: str) -> str | None:
    found = [m for p, m in result.collection_errors.items() if under(path, p)]
    return f"errors at collection: {found[0]}" if found else None


def _evidence(after: PytestRun, needs: Needs, before: PytestRun) -> list[str]:
    """The tests that count as evidence and pass after the patch. With the graph's reaching
    tests, a changed or added test file adds only the tests it did not have before (a new
    regression test is evidence for itself); its other tests count when they reach the patched
    code. cfn-flip 1.0.0 (yaml-safe-load): the patched test errored before and after (its data
    file is not in the sdist) and the file's 10 other passing tests had accepted the patch."""
    if needs.reaching:
        found = [t for t in needs.reaching if _outcome(after, t) == "passed"]
        wanted = {*needs.changed, *needs.added}
        found += [_short(k) for k, o in after.outcomes.items()
                  if o == "passed" and _file(k) in wanted and k not in before.outcomes]
        return sorted(set(found))
    return _passing_in(after, (*needs.files, *needs.changed))


def _passing_in(result: PytestRun, files: Iterable[str]) -> list[str]:
    wanted = set(files)
    return sorted(_short(k) for k, o in result.outcomes.items()
                  if o == "passed" and _file(k) in wanted)


def combine(judgements: Sequence[tuple[str, Judgement]]) -> Judgement:
    """One verdict over several interpreters: any reject rejects, any unknown is unknown."""
    if len(judgements) == 1:
        return judgements[0][1]
    for status in ("reject", "unknown"):
        bad = [(py, j) for py, j in judgements if j.status == status]
        if bad:
            text = "\n".join(f"[{py}] {j.evidence}" for py, j in bad)
            return Judgement(status, text, {py: j.details for py, j in judgements})
    text = "; ".join(f"[{py}] {j.evidence.splitlines()[0]}" for py, j in judgements)
    return Judgement("accept", text, {py: j.details for py, j in judgements})
