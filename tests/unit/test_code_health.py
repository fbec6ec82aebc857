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
