"""The impacted-tests gate: the tests that reach the touched symbols, run in the sandbox on the
base and on the patched tree, on every test interpreter given, judged by the evidence rules of
:mod:`fleet.verify.evidence`."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet.types import Verdict
from fleet.verify._base_runs import base_key, cached_base_run, tree_id
from fleet.verify._patch import FilePatch, Trees
from fleet.verify._tree_env import TreeEnvs, tree_envs
from fleet.verify.evidence import Judgement, Needs, combine, judge, under
from fleet.verify.execution import PytestRun, run_pytest, target_python
from fleet.verify.gates import is_test_path
from fleet.verify.integrity import holds_tests
from fleet.verify.proof import alias_rename_proof
from fleet.verify.pythons import plan, sandbox_seeing
from fleet.verify.target import interpreters, supported_pythons
from sandbox import Sandbox

if TYPE_CHECKING:
    from fleet.graph import SymbolGraph

__all__ = ["gate_impacted_tests", "impacted_tests"]



def _dotted_names(path: str) -> set[str]:
    parts = path[: -len(".py")].split("/") if path.endswith(".py") else path.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return {".".join(parts[i:]) for i in range(len(parts)) if parts[i:]}


def impacted_tests(
    tree: Path, touched: Iterable[str], files: Iterable[FilePatch],
    graph: SymbolGraph | None = None
) -> tuple[list[str], str]:
    """Test files that reach a touched symbol, and how they were found.

    The files of ``graph.tests_reaching`` (with a ``SymbolGraph``) plus the test files that
    import a touched module or name a touched symbol. Test files the patch touches are always
    in. An empty list means: run the whole suite (nothing was found).
    """
    touched = sorted(set(touched))
    chosen = {f.path for f in files if f.path.endswith(".py") and is_test_path(f.path)}
    how = "imports and names"
    if graph is not None and hasattr(graph, "tests_reaching"):
        chosen |= {str(t).split("::", 1)[0] for t in reaching(graph, touched)}
        how = "the graph, imports and names"
    # The names pass runs with a graph too: dynamic dispatch and operators hide edges from it.
    words: set[str] = set()
    for sym in touched:
        path, _, qual = sym.partition("::")
        words |= {n for n in _dotted_names(path) if "." in n or len(n) > 3}
        if qual and not qual.startswith("<"):
            words.add(qual.split(".")[0])
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(words))) + r")\b")
    for test in sorted(tree.rglob("*.py")):
        rel = test.relative_to(tree).as_posix()
        if rel.rsplit("/", 1)[-1] == "conftest.py" or not is_test_path(rel):
            continue
        if words and pattern.search(test.read_text(errors="replace")):
            chosen.add(rel)
    chosen = {c for c in chosen if c.endswith(".py") and c.rsplit("/", 1)[-1] != "conftest.py"}
    return sorted(chosen), how


def reaching(graph: SymbolGraph | None, touched: Iterable[str]) -> list[str]:
    """Test functions (symbol ids) that reach a touched symbol in the graph, if there is one."""
    if graph is None or not hasattr(graph, "tests_reaching"):
        return []
    known = [s for s in touched if s in getattr(graph, "symbols", {})]
    return list(graph.tests_reaching(known)) if known else []


def needs_of(files: Sequence[FilePatch], targets: Sequence[str], graph: SymbolGraph | None,
             touched: Iterable[str], tree: Path | None = None) -> Needs:
    """The evidence's needs. A changed test file must run only when it holds tests: a helper
    module under ``tests/`` (PyJWT's ``tests/utils.py``) has none to run."""
    tests = [f for f in files if f.new_path and f.new_path.endswith(".py")
             and is_test_path(f.new_path) and f.new_path.rsplit("/", 1)[-1] != "conftest.py"
             and (tree is None or holds_tests(tree, f.new_path, unsure=True))]
    return Needs(
        reaching=tuple(reaching(graph, touched)),
        files=tuple(targets),
        changed=tuple(sorted(f.new_path for f in tests if f.new_path)),
        added=tuple(sorted(f.new_path for f in tests if f.new_path and f.old_path is None)),
        patched=tuple(sorted(f.new_path for f in files if f.new_path
                             and f.new_path.endswith(".py") and not is_test_path(f.new_path))),
    )


def gate_impacted_tests(
    trees: Trees,
    sandbox: Sandbox | None,
    touched: Iterable[str],
    files: Sequence[FilePatch],
    graph: SymbolGraph | None = None,
    timeout_s: float = 300.0,
    pythons: Sequence[str] = (),
) -> Verdict:
    """The impacted tests before and after the patch on each of ``pythons`` (default: the
    target interpreter and those :func:`fleet.verify.pythons.plan` provisions), judged by
    :func:`fleet.verify.evidence.judge`: any interpreter's rejection rejects, naming it. An
    interpreter the plan added that cannot judge (its venv lacks what a test imports) leaves the
    target interpreter's verdict, said in a line; so do the supported Pythons not run."""
    if sandbox is None:
        return Verdict("impacted_tests", "unknown", "no sandbox: the tests cannot be run")
    touched = sorted(set(touched))
    targets, how = impacted_tests(trees.base, touched, files, graph)
    needs = needs_of(files, targets, graph, touched, trees.patched)
    scope = f"{len(targets)} test file(s) by {how}" if targets else "the whole suite"
    chosen = plan(trees.base, target_python()) if not pythons else None
    box = sandbox_seeing(sandbox, chosen.paths) if chosen else sandbox
    results: list[tuple[str, Judgement]] = []
    env_lines: list[str] = []  # each tree in its own declared dependencies (_tree_env.py)
    for python in pythons or chosen.pythons:  # type: ignore[union-attr]
        envs = tree_envs(trees, python)
        env_lines += [f"[{python}] {line}" for line in getattr(envs, "lines", ())]
        results.append((python, _one_python(trees, box, targets, needs, scope, timeout_s,
                                            python, envs)))
    notes = [chosen.note] if chosen and chosen.note else []
    if chosen is not None and len(results) > 1:
        idle = [(p, j) for p, j in results[1:] if j.status == "unknown"]
        notes += [f"[{p}] could not judge: {_why_idle(j.evidence)}" for p, j in idle]
        results = [r for r in results if r not in idle]
    got = combine(results)
    if notes:
        got.evidence = "\n".join([got.evidence.split("\n", 1)[0], *notes,
                                  *got.evidence.split("\n", 1)[1:]])
    if env_lines:
        got.evidence += "\n" + "\n".join(env_lines)
    details: dict[str, Any] = {"targets": targets, "selected_by": how,
                               "pythons": [p for p, _ in results], **got.details}
    if notes:
        details["pythons_note"] = notes
    if got.status == "unknown" and not got.details.get("failing"):
        # no test could give evidence (none runs): a patch that only renames aliases may be
        # proven instead; tests that run and fail before and after keep the verdict unknown
        candidates = [p for p, _ in results]
        candidates += [p for p in interpreters(supported_pythons(trees.base)).values()
                       if p not in candidates]
        proof = alias_rename_proof(trees, files, sandbox, candidates)
        if proof is not None:
            details.update(proof="alias-rename", renames=[list(p) for p in proof.pairs],
                           no_test_evidence=got.evidence.splitlines()[0])
            return Verdict("impacted_tests", "accept", f"{proof.text()} (the tests give no "
                           f"evidence: {got.evidence.splitlines()[0]})", details)
    return Verdict("impacted_tests", got.status, got.evidence, details)


def _why_idle(evidence: str) -> str:
    """The first line of an interpreter's ``unknown`` verdict, with its first collection error
    (what its venv lacks: ``ModuleNotFoundError: No module named 'mock'``)."""
    lines = evidence.splitlines()
    error = next((ln for ln in lines[1:] if " errors at collection: " in ln), "")
    return lines[0][:300] + (f"; {error[:200]}" if error else "")


def patched_packages(tree: Path, paths: Sequence[str]) -> list[str]:
    """The top-level packages (directories with ``__init__.py``) that hold ``paths``; never a
    standard library name (an ``examples/json/`` package is not what the tests import)."""
    out: set[str] = set()
    for path in paths:
        parts = path.split("/")[:-1]
        top = None
        while parts and (tree.joinpath(*parts) / "__init__.py").is_file():
            top = parts[-1]
            parts = parts[:-1]
        if top is not None and top.isidentifier() and top not in sys.stdlib_module_names:
            out.add(top)
    return sorted(out)


def _elsewhere(after: PytestRun, scope: str) -> Judgement | None:
    """``unknown`` when the tests imported a patched package from outside the patched tree: an
    installed copy, a developer's checkout. The patched code did not run, whatever passed."""
    outside = {name: where for name, (where, inside) in sorted(after.imported.items())
               if not inside}
    if not outside:
        return None
    named = "; ".join(f"{name} from {where}" for name, where in outside.items())
    return Judgement("unknown", f"{scope}: the tests imported {named}, not from the patched "
                     "tree, so the patched code did not run (a layout fleet does not read: state "
                     "the package's directory in the packaging, e.g. package_dir)",
                     {"imported_from": outside})


def _one_python(trees: Trees, sandbox: Sandbox, targets: list[str], needs: Needs, scope: str,
                timeout_s: float, python: str, envs: TreeEnvs | str | None = None) -> Judgement:
    """Runs before and after on one interpreter (in each tree's own venv of it when ``envs``
    has them). A conftest that aborts pytest costs only the targets below its directory, when
    the evidence does not need them (else ``unknown`` naming the conftest)."""
    if isinstance(envs, str):
        return Judgement("unknown", f"{scope}: base and patch declare different requirements "
                         f"and no environment could be made for each: {envs}")
    first, second = (envs.before, envs.after) if envs else (python, python)
    sandbox = sandbox_seeing(sandbox, envs.paths) if envs else sandbox
    dropped: list[str] = []
    while True:
        before = _base_run(trees, sandbox, targets, timeout_s, first)
        after = run_pytest(sandbox, trees.patched,
                           [t for t in targets if (trees.patched / t).is_file()], timeout_s,
                           second, packages=patched_packages(trees.patched, needs.patched))
        culprit = next((r.aborted_by for r in (before, after) if r.aborted_by), None)
        if culprit is None or not targets:
            break
        directory = culprit.rpartition("/")[0]
        needed = sorted(f for f in needs.needed_files if under(f, directory))
        if needed:
            return Judgement("unknown", f"{scope}: {culprit} aborts pytest "
                             f"({(before if before.aborted_by else after).why_unreported(0)}), "
                             f"and the evidence needs {', '.join(needed[:5])} below it",
                             {"aborted_by": culprit})
        dropped.append(culprit)
        targets = [t for t in targets if not under(t, directory)]
        if not targets:
            return Judgement("unknown", f"{scope}: {culprit} aborts pytest and no other test "
                             "file reaches the patched code", {"aborted_by": culprit})
    got = _elsewhere(after, scope) or judge(before, after, needs, scope, timeout_s)
    if dropped:
        got.evidence += (f"\n(not run: the tests below {', '.join(dropped)}, which aborts "
                         "pytest; the evidence does not need them)")
        got.details["conftest_dropped"] = dropped
    return got


def _base_run(trees: Trees, sandbox: Sandbox, targets: Sequence[str], timeout_s: float,
              python: str) -> PytestRun:
    """The base tree's run of ``targets``, once per (tree, environment, sandbox kind,
    selection, timeout, gate version) across processes (:mod:`fleet.verify._base_runs`)."""
    present = [t for t in targets if (trees.base / t).is_file()]
    key = base_key(tree_id(trees), python, sandbox.name, present, timeout_s)
    return cached_base_run(key, lambda: run_pytest(sandbox, trees.base, present, timeout_s,
                                                   python))

