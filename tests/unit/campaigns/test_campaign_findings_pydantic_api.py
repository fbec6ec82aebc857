"""The pydantic-v2 campaign's matchers for the v1 API outside validators and Config, on the
shapes of openapi-schema-pydantic 1.2.4, pydantic-yaml 0.11.2 and geojson-pydantic 0.6.3: each
finds its sites, a string in ``Literal[...]`` is no forward reference, and what has no
mechanical v2 form is reported "needs an agent"."""

from __future__ import annotations

import textwrap
from pathlib import Path

from fleet.campaigns.matchers import find_findings
from fleet.campaigns.spec import load_campaign
from fleet.graph import index

FILES = {
    "pkg/__init__.py": "",
    "pkg/models.py": """
        from typing import Dict, Literal, Union
        from pydantic import BaseModel, Field, conlist
        from pydantic.schema import schema

        Ring = conlist(float, min_items=4)
        Callback = Dict[str, "PathItem"]
        Style = Union[None, Literal["|"]]


        class Header(BaseModel):
            name = Field(default="", const=True)


        def definitions(classes):
            return schema(classes, ref_prefix="#/components/schemas/")


        def walk(h: Header):
            return h.copy(deep=True), h.__fields_set__
    """,
    "pkg/mixin.py": """
        from pydantic.main import ModelMetaclass


        class Mixin(metaclass=ModelMetaclass):
            def cfg(self):
                return self.__config__


        class SemVer(str):
            @classmethod
            def __get_validators__(cls):
                yield cls
    """,
}


def test_v1_api_sites_and_the_ones_needing_an_agent(tmp_path: Path) -> None:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(textwrap.dedent(text))
    found = find_findings(index(tmp_path), load_campaign("pydantic-v2"))
    sites = sorted((f.rule, f.path, f.line) for f in found)
    assert sites == [
        ("v1-constrained-type", "pkg/models.py", 6),
        ("v1-custom-type", "pkg/mixin.py", 12),
        ("v1-field-argument", "pkg/models.py", 12),
        ("v1-forward-ref-alias", "pkg/models.py", 7),
        ("v1-function", "pkg/models.py", 16),
        ("v1-internals", "pkg/mixin.py", 7),
        ("v1-model-api", "pkg/models.py", 20),
        ("v1-model-api", "pkg/models.py", 20),
        ("v1-moved-import", "pkg/mixin.py", 2),
        ("v1-moved-import", "pkg/models.py", 4),
        ("v1-no-v2-equivalent", "pkg/mixin.py", 2),
    ], sites
    agent = {f.rule for f in found if f.message.startswith("needs an agent")}
    assert agent == {"v1-custom-type", "v1-forward-ref-alias", "v1-internals",
                     "v1-no-v2-equivalent"}
