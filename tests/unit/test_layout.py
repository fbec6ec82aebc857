"""The foundation: every package imports, the CLI starts, the layering holds."""

from __future__ import annotations

import importlib
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("package", ["fleet", "sandbox", "assets", "fleet_pipelines"])
def test_package_has_docstring(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__doc__ and len(module.__doc__.strip()) > 40


def test_fleet_does_not_import_dagster() -> None:
    code = (
        "import sys, fleet, fleet.types, fleet.protocols, sandbox; "
        "print('dagster' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cli_help_lists_commands() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "fleet_pipelines.cli", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    assert "fleet" in out.stdout.lower() or "Usage" in out.stdout


def test_cli_does_not_import_dagster_for_help() -> None:
    code = (
        "import sys; from fleet_pipelines import cli; cli.build_app(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'dagster'))"
    )
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", "the CLI imported dagster at start-up"
    assert time.perf_counter() - start < 30


def test_layering_contract_is_configured() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert 'layers = ["fleet_pipelines", "assets", "fleet", "sandbox"]' in text


def test_local_index_does_not_import_the_planner(tmp_path: Path) -> None:
    """``fleet index PATH`` on a local directory needs the graph only: ``fleet.plan`` (and with
    it campaigns, verify and pydantic) is imported for a repository given by URL alone."""
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    code = (
        "import sys; from fleet_pipelines.commands.graph import index_command as cmd\n"
        "try:\n    cmd(sys.argv[1])\nexcept SystemExit:\n    pass\n"
        "print('fleet.plan' in sys.modules, 'pydantic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False False", out.stdout
