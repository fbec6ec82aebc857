"""CodemodTest cases for the pydantic-v2 codemod on the constructs of geojson-pydantic 0.6.3, the
held-out project (``fleet/campaigns/codemods/_pydantic_api.py``: generic models, reused
validators, ``always=``, ``error_wrappers``); the rewritten code is then run under the Pydantic 2
of this environment. The cases of the two projects the rewrites were written for are in
test_campaign_codemods_pydantic_api.py."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from libcst.codemod import CodemodTest

from fleet.campaigns.codemods import MigratePydanticV2Command
from tests.unit.campaigns._migrated import run_migrated


def _run(code: str) -> dict[str, Any]:
    return run_migrated(code, "fleet_migrated_sample")


class TestGeojsonPydanticConstructs(CodemodTest):
    """geojson-pydantic 0.6.3 (held out: the rewrites were written for the two projects above,
    then this one was migrated with them and three more)."""

    TRANSFORM = MigratePydanticV2Command

    def test_generic_model_reused_validator_and_always_on_a_required_field(self) -> None:
        before = """
            from typing import Generic, List, Optional, TypeVar, Union

            from pydantic import Field, conlist, validator
            from pydantic.generics import GenericModel

            G = TypeVar("G")


            def ordered(bbox):
                if bbox is not None and list(bbox) != sorted(bbox):
                    raise ValueError("unordered")
                return bbox


            class Feature(GenericModel, Generic[G]):
                geometry: Union[G, None] = Field(...)
                bbox: Optional[conlist(float, min_items=2)] = None

                _validate_bbox = validator("bbox", allow_reuse=True)(ordered)

                @validator("geometry", pre=True, always=True)
                def set_geometry(cls, geometry):
                    return geometry
        """
        after = """
            from typing import Generic, List, Optional, TypeVar, Union

            from pydantic import BaseModel, Field, conlist, field_validator

            G = TypeVar("G")


            def ordered(bbox):
                if bbox is not None and list(bbox) != sorted(bbox):
                    raise ValueError("unordered")
                return bbox


            class Feature(BaseModel, Generic[G]):
                geometry: Union[G, None] = Field(...)
                bbox: Optional[conlist(float, min_length=2)] = None

                _validate_bbox = field_validator("bbox")(ordered)

                @field_validator("geometry", mode="before")
                @classmethod
                def set_geometry(cls, geometry):
                    return geometry
        """
        self.assertCodemod(before, after)
        feature = _run(after)["Feature"]
        assert feature[int](geometry=1, bbox=[1.0, 2.0]).geometry == 1
        with pytest.raises(pydantic.ValidationError):
            feature[int](geometry=1, bbox=[2.0, 1.0])

    def test_always_on_a_field_with_a_default_is_left(self) -> None:
        code = """
            from pydantic import BaseModel, validator


            class M(BaseModel):
                x: int = 0

                @validator("x", always=True)
                def check(cls, v):
                    return v
        """
        self.assertCodemod(code, code, expected_warnings=[
            "@validator(each_item=/always=) has no direct v2 form; left as is"])

    def test_validation_error_from_error_wrappers(self) -> None:
        before = """
            from pydantic import BaseModel, ValidationError
            from pydantic.error_wrappers import ErrorWrapper


            class Base(BaseModel):
                type: str


            def parse(obj):
                if "type" not in obj:
                    raise ValidationError(
                        errors=[ErrorWrapper(ValueError("Missing 'type'"), loc="type")],
                        model=Base,
                    )
                return obj
        """
        after = """
            from pydantic import BaseModel, ValidationError


            class Base(BaseModel):
                type: str


            def parse(obj):
                if "type" not in obj:
                    raise ValidationError.from_exception_data(Base.__name__, [{"type": "value_error", "loc": ("type",), "input": None, "ctx": {"error": ValueError("Missing 'type'")}}])
                return obj
        """  # noqa: E501
        self.assertCodemod(before, after)
        with pytest.raises(pydantic.ValidationError, match="Missing 'type'") as caught:
            _run(after)["parse"]({})
        assert caught.value.errors()[0]["loc"] == ("type",)

    def test_an_error_wrapper_used_otherwise_is_left_with_the_reason(self) -> None:
        code = """
            from pydantic.error_wrappers import ErrorWrapper

            WRAPPED = [ErrorWrapper(ValueError("x"), loc="a")]
        """
        self.assertCodemod(code, code, expected_warnings=[
            "1 ErrorWrapper(...) left: v2 ValidationErrors are built with "
            "ValidationError.from_exception_data, not from wrapped exceptions (only "
            "ValidationError([ErrorWrapper(exc, loc=...)], Model) has a mechanical form)"])
