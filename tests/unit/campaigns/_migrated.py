"""Run a codemod's output as a module, for the pydantic-v2 migration tests (the tests run under
pydantic 2: the migrated code must import and behave there)."""

from __future__ import annotations

import sys
import textwrap
import types
from typing import Any

__all__ = ["run_migrated"]


def run_migrated(code: str, name: str = "fleet_migrated_sample") -> dict[str, Any]:
    """Import ``code`` as the module ``name`` (Pydantic resolves annotations in
    ``sys.modules``) and return its namespace; the module is gone from ``sys.modules`` after."""
    module = types.ModuleType(name)
    sys.modules[module.__name__] = module
    try:
        exec(compile(textwrap.dedent(code), "migrated.py", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module.__dict__
