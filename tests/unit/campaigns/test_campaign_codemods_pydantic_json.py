"""The pydantic-v2 codemod's ``json_output`` option on the ``.json()`` calls of
openapi-schema-pydantic 1.2.4's tests: ``"compact"`` (the default) renames to
``model_dump_json``, ``"v1"`` keeps v1's JSON text with ``json.dumps(m.model_dump(mode="json"))``;
the rewritten code is run under the Pydantic 2 of this environment and compared with the string
the project's test pins (v1's output)."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest
from libcst.codemod import CodemodContext, CodemodTest

from fleet.campaigns.codemods import MigratePydanticV2Command
from fleet.errors import ConfigError
from tests.unit.campaigns._migrated import run_migrated

# tests/schema_classes/test_security_scheme.py (the model trimmed to the two fields used)
SECURITY_SCHEME = """
    from typing import Optional

    from pydantic import BaseModel, Field


    class SecurityScheme(BaseModel):
        type: str
        openIdConnectUrl: Optional[str] = Field(default=None)


    def issue_5():
        security_scheme_1 = SecurityScheme(type="openIdConnect", openIdConnectUrl="/openIdConnect")
        return security_scheme_1.json(by_alias=True, exclude_none=True)
"""
PINNED = '{"type": "openIdConnect", "openIdConnectUrl": "/openIdConnect"}'


def _run(code: str) -> dict[str, Any]:
    return run_migrated(code, "fleet_migrated_sample")


def _call(code: str) -> Any:
    return _run(code)["issue_5"]()


class TestJsonOutput(CodemodTest):
    TRANSFORM = MigratePydanticV2Command

    def test_v1_keeps_the_json_text_the_project_pins(self) -> None:
        after = """
            from typing import Optional

            from pydantic import BaseModel, Field
            import json


            class SecurityScheme(BaseModel):
                type: str
                openIdConnectUrl: Optional[str] = Field(default=None)


            def issue_5():
                security_scheme_1 = SecurityScheme(type="openIdConnect", openIdConnectUrl="/openIdConnect")
                return json.dumps(security_scheme_1.model_dump(mode="json", by_alias=True, exclude_none=True))
        """  # noqa: E501
        self.assertCodemod(SECURITY_SCHEME, after, json_output="v1")
        assert pydantic.VERSION.startswith("2.")
        assert _call(after) == PINNED

    def test_compact_is_model_dump_json_whose_text_differs(self) -> None:
        after = SECURITY_SCHEME.replace(".json(", ".model_dump_json(")
        self.assertCodemod(SECURITY_SCHEME, after, json_output="compact")
        text = _call(after)
        assert text != PINNED and json.loads(text) == json.loads(PINNED)
        assert text == '{"type":"openIdConnect","openIdConnectUrl":"/openIdConnect"}'

    def test_v1_sends_json_dumps_keywords_to_json_dumps(self) -> None:
        # tests/util/test_util.py: .json(by_alias=True, exclude_none=True, indent=2); sort_keys
        # and ensure_ascii are json.dumps keywords model_dump_json does not take
        before = """
            from pydantic import BaseModel


            class Info(BaseModel):
                title: str


            def dump(info: Info):
                return info.json(by_alias=True, indent=2), info.json(sort_keys=True, ensure_ascii=False)
        """  # noqa: E501
        after = """
            from pydantic import BaseModel
            import json


            class Info(BaseModel):
                title: str


            def dump(info: Info):
                return json.dumps(info.model_dump(mode="json", by_alias=True), indent=2), json.dumps(info.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        """  # noqa: E501
        self.assertCodemod(before, after, json_output="v1")
        namespace = _run(after)
        pretty, plain = namespace["dump"](namespace["Info"](title="Café"))
        assert pretty == '{\n  "title": "Caf\\u00e9"\n}' and plain == '{"title": "Café"}'

    def test_v1_leaves_encoder_to_the_rename_with_a_warning(self) -> None:
        before = """
            from pydantic import BaseModel


            class Info(BaseModel):
                title: str


            def dump(info: Info):
                return info.json(encoder=str)
        """
        after = before.replace(".json(", ".model_dump_json(")
        self.assertCodemod(before, after, json_output="v1", expected_warnings=[
            ".json() with positional, ** , encoder= or models_as_dict= arguments has no "
            "json.dumps(model_dump()) form; renamed to model_dump_json"])


def test_an_unknown_json_output_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="json_output: 'pretty' is not 'compact' or 'v1'"):
        MigratePydanticV2Command(CodemodContext(), json_output="pretty")


class TestJsonDumpsKeywords(CodemodTest):
    TRANSFORM = MigratePydanticV2Command

    def test_compact_sends_keywords_model_dump_json_lacks_to_json_dumps(self) -> None:
        # model_dump_json(sort_keys=True) is a TypeError under v2; indent= it takes
        before = """
            from pydantic import BaseModel


            class Info(BaseModel):
                title: str


            def dump(info: Info):
                return info.json(indent=2), info.json(sort_keys=True, by_alias=True)
        """
        after = """
            from pydantic import BaseModel
            import json


            class Info(BaseModel):
                title: str


            def dump(info: Info):
                return info.model_dump_json(indent=2), json.dumps(info.model_dump(mode="json", by_alias=True), sort_keys=True)
        """  # noqa: E501
        self.assertCodemod(before, after, json_output="compact")
        namespace = _run(after)
        pretty, ordered = namespace["dump"](namespace["Info"](title="x"))
        assert pretty == '{\n  "title": "x"\n}' and ordered == '{"title": "x"}'
