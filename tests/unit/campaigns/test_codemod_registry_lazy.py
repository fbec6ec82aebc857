"""The codemod registry is lazy (issue 14, the suite's CPU): loading every built-in campaign (the
sweep's preflight, ``fleet campaigns``) and building the Dagster definitions (every code server and
run worker) import no codemod and not libcst; a lookup imports that one codemod; the names and
classes are the same as before."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fleet.campaigns.codemods import CODEMODS, apply_codemod
from fleet.errors import ConfigError

LOADED = ("sorted(m for m in sys.modules if m == 'libcst' "
          "or m.startswith(('libcst.', 'fleet.campaigns.codemods.')))")


def _modules_after(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", f"import sys; {code}; print({LOADED})"],
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_loading_every_campaign_and_the_definitions_imports_no_codemod() -> None:
    code = ("from fleet.campaigns.spec import builtin_campaigns, load_campaign; "
            "cs = [load_campaign(n) for n in builtin_campaigns()]; "
            "assert any(c.fix.codemod for c in cs); "
            "import fleet.campaigns.codemods.requirements, fleet_pipelines.definitions")
    loaded = _modules_after(code)
    assert "'fleet.campaigns.codemods.requirements'" in loaded  # the pins reader, no libcst
    assert "libcst" not in loaded
    assert not any(f"'fleet.campaigns.codemods.{module}'" in loaded for module in (
        "_base", "unittest_aliases", "datetime_utcnow", "yaml_safe_load", "retire_api",
        "pydantic_v2"))


def test_a_lookup_imports_only_that_codemod() -> None:
    code = ("from fleet.campaigns.codemods import CODEMODS; "
            "assert CODEMODS['yaml-safe-load'].__name__ == 'ReplaceYamlLoadCommand'")
    loaded = _modules_after(code)
    assert "'fleet.campaigns.codemods.yaml_safe_load'" in loaded and "'libcst'" in loaded
    assert "pydantic_v2" not in loaded and "retire_api" not in loaded


def test_the_registry_names_and_classes() -> None:
    from fleet.campaigns.codemods import ScopedCodemodCommand

    assert list(CODEMODS) == ["unittest-aliases", "datetime-utcnow", "yaml-safe-load",
                              "retire-api", "pydantic-v2"]
    assert len(CODEMODS) == 5 and "yaml-safe-load" in CODEMODS and "nope" not in CODEMODS
    assert CODEMODS.get("nope") is None
    assert all(issubclass(cls, ScopedCodemodCommand) for cls in CODEMODS.values())
    assert {name: cls.EDITS_IMPORTS for name, cls in CODEMODS.items()} == {
        "unittest-aliases": False, "datetime-utcnow": True, "yaml-safe-load": True,
        "retire-api": True, "pydantic-v2": True}
    out = apply_codemod("yaml-safe-load", "import yaml\nyaml.load(s)\n")
    assert "safe_load" in out.code  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match="unknown codemod 'nope'"):
        apply_codemod("nope", "x = 1\n")
