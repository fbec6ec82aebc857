"""Service settings read from YAML files, with environment overrides.

``ACME_<SECTION>_<KEY>`` in the environment overrides ``section.key`` from the file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml

DEFAULTS: dict[str, dict[str, object]] = {
    "billing": {"currency": "USD", "tax_rate": "0.0", "max_charge_cents": 1_000_000},
    "auth": {"token_ttl_minutes": 60, "max_failed_logins": 5},
    "tenants": {"default_plan": "starter", "max_members": 50},
}


@dataclass
class Settings:
    """Merged settings: defaults, then the file, then the environment."""

    sections: dict[str, dict[str, object]] = field(default_factory=dict)

    def get(self, section: str, key: str, default: object = None) -> object:
        return self.sections.get(section, {}).get(key, default)


def _merge(base: dict, override: dict) -> dict:
    merged = {name: dict(values) for name, values in base.items()}
    for name, values in (override or {}).items():
        merged.setdefault(name, {}).update(values or {})
    return merged


def _apply_env(sections: dict, environ: dict[str, str]) -> dict:
    for name, value in environ.items():
        if not name.startswith("ACME_"):
            continue
        parts = name[len("ACME_"):].lower().split("_", 1)
        if len(parts) == 2 and parts[0] in sections:
            sections[parts[0]][parts[1]] = value
    return sections


def load_settings(path: str | Path, environ: dict[str, str] | None = None) -> Settings:
    """Read settings from the YAML file at ``path`` (written for PyYAML 5)."""
    with open(path, encoding="utf-8") as fh:
        raw = yaml.load(fh)
    sections = _merge(DEFAULTS, raw or {})
    return Settings(_apply_env(sections, dict(os.environ if environ is None else environ)))


def default_settings() -> Settings:
    """The built-in defaults, without reading any file."""
    return Settings(_merge(DEFAULTS, {}))
