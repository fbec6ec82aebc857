"""The code-health rules of shared/STYLE.md that a reader can check by reading (issue 13)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _modules(package: str) -> list[Path]:
    return sorted(p for p in (ROOT / package).rglob("*.py") if "_c" not in p.parts)


def test_the_protocols_of_fleet_are_in_fleet_protocols() -> None:
    """Every ``typing.Protocol`` of ``fleet`` is defined in ``fleet/protocols.py``."""
    elsewhere = []
    for path in _modules("fleet"):
        if path.name == "protocols.py" and path.parent.name == "fleet":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                    (isinstance(b, ast.Name) and b.id == "Protocol")
                    or (isinstance(b, ast.Attribute) and b.attr == "Protocol")
                    for b in node.bases):
                elsewhere.append(f"{path.relative_to(ROOT)}: {node.name}")
    assert elsewhere == []


PACKAGES = ("fleet", "assets", "fleet_pipelines", "sandbox")


def _bound(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def test_every_module_has_an_all_of_names_it_binds() -> None:
    """A package's public API is its ``__all__`` (shared/STYLE.md), in every module: each name in
    it is one the module defines or imports."""
    missing, unbound = [], []
    for package in PACKAGES:
        for path in _modules(package):
            tree = ast.parse(path.read_text())
            listed = next((node.value for node in tree.body
                           if isinstance(node, (ast.Assign, ast.AnnAssign))
                           and any(isinstance(t, ast.Name) and t.id == "__all__"
                                   for t in (node.targets if isinstance(node, ast.Assign)
                                             else [node.target]))), None)
            rel = str(path.relative_to(ROOT))
            if not isinstance(listed, ast.List):
                missing.append(rel)
                continue
            bound = _bound(tree) | _lazy_names(tree)
            unbound += [f"{rel}: {e.value}" for e in listed.elts
                        if isinstance(e, ast.Constant) and e.value not in bound]
    assert missing == []
    assert unbound == []


def _lazy_names(tree: ast.Module) -> set[str]:
    """Names a package resolves in its module ``__getattr__`` (the keys of its name -> module
    tables, ``_LAZY`` / ``_MODULES``)."""
    if not any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body):
        return set()
    return {k.value for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Dict)
            for k in node.value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}


def _imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return out


# A private module another package may import, and why.
SHARED_PRIVATE = {
    # issue 13: "one git module ... used everywhere" in fleet
    "fleet.forge._git",
    # issue 13: every ``dagster._*`` import in one module, read again after a Dagster upgrade;
    # the Dagster layer (assets and fleet_pipelines) takes those names from there alone
    "assets._dagster_private",
}


def _private_imports(package: str) -> list[str]:
    """``package``'s imports of a private module (``pkg._x``, ``pkg.sub._x``) of any of
    PACKAGES from outside the package that owns it, but SHARED_PRIVATE."""
    offenders = []
    for path in _modules(package):
        mine = ".".join(path.relative_to(ROOT).parent.parts)  # the importer's package
        for module in _imports(path):
            parts = module.split(".")
            private = next((i for i, p in enumerate(parts) if p.startswith("_")), None)
            if parts[0] not in PACKAGES or private is None:
                continue
            owner = ".".join(parts[:private])
            if module in SHARED_PRIVATE or f"{mine}.".startswith(f"{owner}."):
                continue
            offenders.append(f"{path.relative_to(ROOT)}: {module}")
    return offenders


def test_no_package_imports_another_fleet_packages_private_module() -> None:
    """``fleet.verify._exec`` was imported by four other packages (issue 13): a private module of
    a fleet package (``fleet.<pkg>._x``) is imported only inside that package; other packages
    use the package's ``__all__``. The one exception is ``fleet.forge._git``, the one module
    through which fleet runs git (issue 13: "one git module ... used everywhere")."""
    assert _private_imports("fleet") == []


def test_no_package_imports_another_top_level_packages_private_module() -> None:
    """Across the top-level packages too: fleet_pipelines took the index, the graph directory and
    the module summary from ``assets._fleet`` / ``assets._modules`` (issue 13); it now takes them
    from ``assets.graph``. The one exception is ``assets._dagster_private`` (SHARED_PRIVATE)."""
    offenders = [o for package in PACKAGES for o in _private_imports(package)]
    assert offenders == []


def test_fleet_uses_only_the_sandbox_packages_public_api() -> None:
    """``fleet`` reaches ``sandbox`` through ``import sandbox`` alone (DESIGN.md: "it uses only
    the public ``Sandbox`` protocol of ``sandbox``"), never a ``sandbox._*`` module."""
    offenders = [f"{path.relative_to(ROOT)}: {module}"
                 for path in _modules("fleet") for module in _imports(path)
                 if module.startswith("sandbox.")]
    assert offenders == []


MAX_LINES = 400  # shared/STYLE.md: "Modules stay small (~400 lines at most)"
SOURCES = (*PACKAGES, "benchmarks", "tests")


def test_no_module_of_ours_is_over_400_lines() -> None:
    """Every Python, SQL and C file of ours: not the test fixtures (corpora of other projects),
    the vendored tree-sitter runtime (third_party/), a benchmark's downloaded corpus (.cache)."""
    over = []
    for top in SOURCES:
        for path in (ROOT / top).rglob("*"):
            rel = path.relative_to(ROOT)
            if (path.suffix not in {".py", ".sql", ".c", ".h"} or not path.is_file()
                    or rel.parts[:2] == ("tests", "fixtures")
                    or any(p.startswith(".") or p in {"third_party", "__pycache__"}
                           for p in rel.parts)):
                continue
            lines = len(path.read_text(errors="replace").splitlines())
            if lines > MAX_LINES:
                over.append(f"{rel}: {lines}")
    assert over == []


def test_the_fleet_parses_python_only_through_its_thread_safe_parse() -> None:
    """``ast.parse`` / ``ast.literal_eval`` of a string only through ``fleet.pyast`` (CPython
    3.11's AST constructor fails when two threads build ASTs at once: CI of 3 December 2026),
    outside the one ``compile`` the syntax gate makes under ``fleet.pyast.LOCK``."""
    direct = []
    for package in PACKAGES:
        for path in _modules(package):
            if path.relative_to(ROOT).as_posix() == "fleet/pyast.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                        isinstance(node.func.value, ast.Name) and node.func.value.id == "ast" \
                        and node.func.attr in ("parse", "literal_eval"):
                    direct.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert direct == ["fleet/verify/gates.py:65"], direct  # (inside `with pyast.LOCK`)
