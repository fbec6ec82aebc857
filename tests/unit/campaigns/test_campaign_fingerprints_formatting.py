"""Issue 17, defect 8: fingerprints come from the token stream, so reformatting a real
repository with ruff or black keeps every finding's fingerprint. Real code: a subset of boto
2.49.0 (never formatted; unittest aliases and ``utcnow`` calls) and PyJWT 2.0.0; then the cases
formatters produce that whole files may not contain (parentheses added, string-prefix case,
triple quotes, backslash continuations)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tree_sitter as ts
import tree_sitter_python

from fleet.campaigns.findings import normalized_syntax
from fleet.campaigns.matchers import find_findings
from fleet.campaigns.spec import load_campaign
from fleet.graph import index

PROJECTS = Path(__file__).resolve().parents[2] / "fixtures" / "projects"
CAMPAIGNS = ("unittest-aliases", "datetime-utcnow", "yaml-safe-load")
FORMATTERS = {
    "ruff": [sys.executable, "-m", "ruff", "format", "-q", "--no-cache", "--isolated", "."],
    "black": [sys.executable, "-m", "black", "-q", "--target-version", "py311", "."],
}


def _fingerprints(root: Path) -> dict[str, tuple[str, int]]:
    graph = index(root)
    return {f.fingerprint: (f.path, f.line) for c in CAMPAIGNS
            for f in find_findings(graph, load_campaign(c))}


@pytest.mark.parametrize("project", ["boto-2.49.0-subset", "pyjwt-2.0.0"])
@pytest.mark.parametrize("formatter", sorted(FORMATTERS))
def test_reformatting_a_real_repository_keeps_every_fingerprint(
    project: str, formatter: str, tmp_path: Path
) -> None:
    tree = shutil.copytree(PROJECTS / project, tmp_path / project)
    before = _fingerprints(tree)
    subprocess.run(FORMATTERS[formatter], cwd=tree, check=True)
    changed = subprocess.run(["git", "diff", "--no-index", "--stat", str(PROJECTS / project),
                              str(tree)], capture_output=True, text=True).stdout
    assert changed, "the formatter changed nothing: the test would prove nothing"
    after = _fingerprints(tree)
    assert len(before) >= (100 if project.startswith("boto") else 5)
    assert sorted(set(before) - set(after)) == [], {k: before[k] for k in set(before) - set(after)}


def _syntax(code: str) -> str:
    parser = ts.Parser(ts.Language(tree_sitter_python.language()))
    tree = parser.parse(code.encode())
    return normalized_syntax(tree.root_node.children[0].children[0])


@pytest.mark.parametrize(("one", "other"), [
    ("self.assertEquals(a, (b))", "self.assertEquals(a, b)"),
    ("f(x, F'{y}')", 'f(x, f"{y}")'),
    ("f(U'x', R'\\d')", "f('x', r'\\d')"),
    ("f('''abc''')", 'f("abc")'),
    ("f(a and \\\n  b)", "f(a and b)"),
    ("f(x)", "f(\n    x,\n)"),
])
def test_formatting_variants_have_one_syntax(one: str, other: str) -> None:
    assert _syntax(one) == _syntax(other)


def test_real_edits_still_change_the_syntax() -> None:
    assert _syntax("f((a, b))") != _syntax("f(a, b)")  # a tuple is no redundant parenthesis
    assert _syntax("f('x')") != _syntax("f(b'x')")
    assert _syntax("f(F'{y}')") != _syntax("f('{y}')")
