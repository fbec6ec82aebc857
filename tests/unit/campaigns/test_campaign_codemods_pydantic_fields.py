"""CodemodTest cases for the v1 field and Config semantics v2 changed
(``fleet/campaigns/codemods/_pydantic_fields.py``), each on a construct of jsf 0.7.1 (its PyPI
sdist: ``jsf/schema_types/*.py``); the rewritten code is then run under this environment's
Pydantic 2 and behaves as the v1 code did under Pydantic 1."""

from __future__ import annotations

import warnings
from typing import Any, Union

import pydantic
import pytest
from libcst.codemod import CodemodTest

from fleet.campaigns.codemods import MigratePydanticV2Command
from tests.unit.campaigns._migrated import run_migrated


def _run(code: str) -> dict[str, Any]:
    return run_migrated(code, "fleet_migrated_fields")


class TestFieldSemantics(CodemodTest):
    TRANSFORM = MigratePydanticV2Command

    def test_optional_and_any_fields_without_a_default_keep_v1s_none(self) -> None:
        # jsf/schema_types/string.py::String.contentEncoding (v2: "Field required" on every
        # schema without contentEncoding - 28 of jsf's 74 tests)
        before = """
            from typing import Any, Optional, Union

            from pydantic import BaseModel, Field


            class String(BaseModel):
                contentEncoding: Optional[str]
                either: Union[int, None]
                piped: int | None
                anything: Any
                aliased: Optional[int] = Field(alias="$a")
                required: Optional[int] = Field(..., description="v1: required too")
                plain: int
                given: Optional[str] = None

                def method(self) -> None:
                    local: Optional[int]
        """
        after = """
            from typing import Any, Optional, Union

            from pydantic import BaseModel, Field


            class String(BaseModel):
                contentEncoding: Optional[str] = None
                either: Union[int, None] = None
                piped: int | None = None
                anything: Any = None
                aliased: Optional[int] = Field(None, alias="$a")
                required: Optional[int] = Field(..., description="v1: required too")
                plain: int
                given: Optional[str] = None

                def method(self) -> None:
                    local: Optional[int]
        """
        self.assertCodemod(before, after)
        string = _run(after)["String"]
        made = string(required=None, plain=1)
        assert (made.contentEncoding, made.either, made.piped, made.anything, made.aliased) == (
            None, None, None, None, None)
        with pytest.raises(pydantic.ValidationError):
            string(plain=1)  # Field(...): required in v1 as in v2

    def test_a_plain_class_keeps_its_annotations(self) -> None:
        code = """
            from typing import Optional

            from pydantic import BaseModel


            class Schema(BaseModel):
                name: str


            class Plain:
                maybe: Optional[int]
        """
        self.assertCodemod(code, code)

    def test_field_on_an_underscore_name_becomes_a_private_attribute(self) -> None:
        # jsf/schema_types/base.py::BaseSchema._schema (v2: PydanticUserError at import)
        before = """
            from typing import Optional

            from pydantic import BaseModel, Field


            class BaseSchema(BaseModel):
                _schema: Optional[str] = Field(None, alias="$schema")
                _cached: list = Field(default_factory=list)
                comments: Optional[str] = Field(None, alias="$comments")
        """
        after = """
            from typing import Optional

            from pydantic import BaseModel, Field, PrivateAttr


            class BaseSchema(BaseModel):
                _schema: Optional[str] = PrivateAttr(None)
                _cached: list = PrivateAttr(default_factory=list)
                comments: Optional[str] = Field(None, alias="$comments")
        """
        warned = ("{}: v1 made no field of an underscore name (its Field() was never read); v2 "
                  "rejects a Field() there: now PrivateAttr with its default")
        self.assertCodemod(before, after, expected_warnings=[
            warned.format("_schema"), warned.format("_cached")])
        schema = _run(after)["BaseSchema"]
        made = schema.model_validate({"$schema": "http://json-schema.org/draft-07/schema#",
                                      "$comments": "c"})
        # as under v1: "$schema" is no field, so it is not read, validated or dumped
        assert made.model_dump() == {"comments": "c"} and made._schema is None
        assert made._cached == [] and "_schema" not in schema.model_fields

    def test_extra_field_keywords_go_to_json_schema_extra(self) -> None:
        # jsf/schema_types/base.py::BaseSchema.to_pydantic: Field(..., example=...)
        before = """
            from pydantic import BaseModel, Field, create_model


            class BaseSchema(BaseModel):
                description: str = ""

                def to_pydantic(self, example):
                    return (str, Field(..., description=self.description, example=example))
        """
        after = """
            from pydantic import BaseModel, Field, create_model


            class BaseSchema(BaseModel):
                description: str = ""

                def to_pydantic(self, example):
                    return (str, Field(..., description=self.description, json_schema_extra={"example": example}))
        """  # noqa: E501
        self.assertCodemod(before, after)
        namespace = _run(after)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no PydanticDeprecatedSince20 (extra keywords)
            spec = namespace["BaseSchema"](description="d").to_pydantic("e")
            model = namespace["create_model"]("Root", name=spec)
        # v1 put the extra keyword into the field's schema: v2 does too
        assert model.model_json_schema()["properties"]["name"] == {
            "description": "d", "example": "e", "title": "Name", "type": "string"}

    def test_removed_config_keys(self) -> None:
        # jsf/schema_types/enum.py::JSFEnum.Config: smart_union = True (v2: "Valid config keys
        # have changed in V2" UserWarning; v2's unions are smart)
        before = """
            from typing import Union

            from pydantic import BaseModel


            class JSFEnum(BaseModel):
                value: Union[int, str] = 0

                class Config:
                    smart_union = True
                    underscore_attrs_are_private = True
                    extra = "forbid"


            class Copying(BaseModel):
                class Config:
                    copy_on_model_validation = "none"
        """
        after = """
            from typing import Union

            from pydantic import BaseModel, ConfigDict


            class JSFEnum(BaseModel):
                value: Union[int, str] = 0

                model_config = ConfigDict(extra="forbid")


            class Copying(BaseModel):
                class Config:
                    copy_on_model_validation = "none"
        """
        self.assertCodemod(before, after, expected_warnings=[
            "class Config: copy_on_model_validation = ... has no v2 key (v2 never copies a model "
            "instance on validation (revalidate_instances is the nearest setting)); left as is"])
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "Valid config keys have changed" warning
            enum = _run(after.split("class Copying")[0])["JSFEnum"]
        assert enum(value="1").value == "1"  # smart: the str stays a str, as v1's smart_union

    def test_v1_keywords_in_eval_source(self) -> None:
        # jsf/schema_types/_tuple.py::JSFTuple.model (v2: TypeError, min_items)
        before = """
            from typing import Union

            from pydantic import conlist


            def model(names, context):
                return eval(
                    f"conlist(Union[{','.join(names)}], min_items={len(names)}, max_items={len(names)})",
                    context,
                )
        """  # noqa: E501
        after = """
            from typing import Union

            from pydantic import conlist


            def model(names, context):
                return eval(
                    f"conlist(Union[{','.join(names)}], min_length={len(names)}, max_length={len(names)})",
                    context,
                )
        """  # noqa: E501
        self.assertCodemod(before, after, expected_warnings=[
            "min_items=/max_items= renamed inside the source passed to eval/exec (v2's "
            "conlist/conset take min_length=/max_length=, and return Annotated[list[T], "
            "Len(...)], not a class)"])
        namespace = _run(after)
        pair = namespace["model"](["int", "str"], {"conlist": namespace["conlist"],
                                                   "Union": Union})
        adapter = pydantic.TypeAdapter(pair)
        assert adapter.validate_python([1, "a"]) == [1, "a"]
        with pytest.raises(pydantic.ValidationError):
            adapter.validate_python([1])

    def test_other_eval_source_is_left(self) -> None:
        code = """
            def f(n):
                return eval(f"range(min_items={n})") , eval("conlist(int, min_length=2)")
        """
        self.assertCodemod(code, code)

